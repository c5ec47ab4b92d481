package till

import (
	"strconv"
	"strings"

	"seatflow/core"
)

// ParseAmount reads an amount a clerk typed ("150", "150.5", "1,234.50")
// in currency's major unit and returns it in minor units: no sign, at most
// the currency's decimals, at most MaxFloatCents.
func ParseAmount(s, currency string) (int64, error) {
	exp := core.MinorUnits(currency)
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	whole, frac, dot := strings.Cut(s, ".")
	bad := core.Invalidf("an amount is digits with at most %d decimals, such as %s", exp, example(exp))
	if whole == "" && frac == "" || len(frac) > exp || (dot && exp == 0) || !digits(whole) || !digits(frac) || len(whole) > 12 {
		return 0, bad
	}
	frac += strings.Repeat("0", exp-len(frac))
	n, err := strconv.ParseInt("0"+whole+frac, 10, 64)
	if err != nil || n > MaxFloatCents {
		return 0, core.Invalidf("an amount may be at most %s", strconv.FormatInt(MaxFloatCents, 10)+" minor units")
	}
	return n, nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func example(exp int) string {
	if exp == 0 {
		return "150"
	}
	return "150." + strings.Repeat("0", exp)
}
