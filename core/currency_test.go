package core

import "testing"

func TestMinorUnits(t *testing.T) {
	for code, want := range map[string]int{"EUR": 2, "USD": 2, "CNY": 2, "JPY": 0, "KRW": 0, "VND": 0,
		"KWD": 3, "BHD": 3, "IQD": 3, "TND": 3, "XYZ": 2} {
		if got := MinorUnits(code); got != want {
			t.Errorf("MinorUnits(%s) = %d, want %d", code, got, want)
		}
	}
	// Every exception is a code ValidCurrency accepts: a typo would go unnoticed.
	for code := range minorUnitExceptions {
		if !ValidCurrency(code) {
			t.Errorf("%s has an exponent but is not an active ISO 4217 code", code)
		}
	}
}
