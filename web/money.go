package web

import (
	"strconv"
	"strings"

	"seatflow/core"
)

// Money formats an amount in minor units (amount_cents, price_cents) of
// currency for the page's language: the currency's ISO 4217 exponent gives
// the decimals, digits are grouped in threes ("," and "." in English and
// Chinese alike), and the currency comes first, as a symbol where the
// language has one that names it alone, else as its code:
// "€1,234.50", "¥2,500" (yen in English), "KWD 1.250"; in Chinese
// "¥1,234.50" is yuan and yen is "JP¥2,500". A minus goes in front:
// "-€12.50". An empty currency (money for an order nobody knows) shows the
// bare number with two decimals.
func (p Page) Money(minor int64, currency string) string {
	if currency == "" {
		return sign(minor) + decimal(minor, 2)
	}
	marker, ok := currencySymbols[p.Lang == LangZH][currency]
	if !ok {
		marker = currency + "\u00a0" // a no-break space: the code stays with its number
	}
	return sign(minor) + marker + decimal(minor, core.MinorUnits(currency))
}

func sign(minor int64) string {
	if minor < 0 {
		return "-"
	}
	return ""
}

// decimal is |minor| with exp decimals and its whole part grouped in threes.
func decimal(minor int64, exp int) string {
	abs := uint64(minor) // two's complement: right for math.MinInt64 too
	if minor < 0 {
		abs = -abs
	}
	digits := strconv.FormatUint(abs, 10)
	if len(digits) <= exp {
		digits = strings.Repeat("0", exp-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-exp], digits[len(digits)-exp:]
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if exp > 0 {
		b.WriteString("." + frac)
	}
	return b.String()
}

// currencySymbols are CLDR's symbols for the currencies most shows are sold
// in, by language (false English, true Chinese), where the symbol tells
// the currency apart from the others in that language. "$" alone is the
// US dollar in English; in Chinese "¥" is the yuan. Every other currency
// is written with its ISO code.
var currencySymbols = map[bool]map[string]string{
	false: {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "CN¥", "HKD": "HK$", "TWD": "NT$",
		"KRW": "₩", "INR": "₹", "CAD": "CA$", "AUD": "A$"},
	true: {"CNY": "¥", "USD": "US$", "EUR": "€", "GBP": "£", "JPY": "JP¥", "HKD": "HK$", "TWD": "NT$",
		"KRW": "₩", "INR": "₹", "CAD": "CA$", "AUD": "AU$"},
}
