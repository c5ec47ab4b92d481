package till

import (
	"strconv"

	"seatflow/core"
)

// ParseAmount reads an amount a clerk typed (core.ParseAmount: "150",
// "150.5" in the currency's units) and bounds it by MaxFloatCents.
func ParseAmount(s, currency string) (int64, error) {
	n, err := core.ParseAmount(s, currency)
	if err != nil {
		return 0, err
	}
	if n > MaxFloatCents {
		return 0, core.Invalidf("an amount may be at most %s minor units", strconv.FormatInt(MaxFloatCents, 10))
	}
	return n, nil
}
