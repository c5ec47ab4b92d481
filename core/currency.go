package core

import (
	"strconv"
	"strings"
)

// isoCurrencies is the ISO 4217 list of active currency codes (fund and
// precious-metal codes left out: nobody sells tickets in XAU).
var isoCurrencies = map[string]bool{}

func init() {
	for _, c := range []string{
		"AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN",
		"BAM", "BBD", "BDT", "BGN", "BHD", "BIF", "BMD", "BND", "BOB", "BRL",
		"BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF", "CLP", "CNY",
		"COP", "CRC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP",
		"ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD",
		"GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR",
		"IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF",
		"KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL",
		"LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR",
		"MVR", "MWK", "MXN", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR",
		"NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "PYG", "QAR",
		"RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD",
		"SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB",
		"TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX",
		"USD", "UYU", "UZS", "VES", "VND", "VUV", "WST", "XAF", "XCD", "XCG",
		"XOF", "XPF", "YER", "ZAR", "ZMW", "ZWG",
	} {
		isoCurrencies[c] = true
	}
}

// ValidCurrency reports whether code is an active ISO 4217 currency code.
func ValidCurrency(code string) bool { return isoCurrencies[code] }

// minorUnitExceptions are the ISO 4217 exponents other than 2: how many
// digits of an amount in minor units (amount_cents, price_cents) follow the
// decimal point. A JPY price of 2500 is 2,500 yen; a KWD one 2.500 dinars.
var minorUnitExceptions = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0,
	"PYG": 0, "RWF": 0, "UGX": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// MinorUnits is the ISO 4217 exponent of an active currency code: every
// amount SeatFlow stores is a whole number of that currency's minor unit.
// Codes it does not know get 2, the exponent of most currencies.
func MinorUnits(code string) int {
	if n, ok := minorUnitExceptions[code]; ok {
		return n
	}
	return 2
}

// ParseAmount reads an amount written in the currency's units, as staff
// type it ("25", "25.5", "25.50" EUR; "2500" JPY; "2.500" KWD), into minor
// units: no sign, no grouping, at most the currency's exponent of decimals.
func ParseAmount(text, currency string) (int64, error) {
	exp := MinorUnits(currency)
	whole, frac, dotted := strings.Cut(strings.TrimSpace(text), ".")
	if whole == "" || dotted && frac == "" || len(frac) > exp || !allDigits(whole) || !allDigits(frac) || len(whole) > 15 {
		if exp == 0 {
			return 0, Invalidf("%q is not a whole amount of %s", text, currency)
		}
		return 0, Invalidf("%q is not an amount of %s with at most %d decimals", text, currency, exp)
	}
	n, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac+strings.Repeat("0", exp-len(frac)), 10, 64)
	for range exp {
		n *= 10
	}
	return n + f, nil
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
