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

func TestParseAmount(t *testing.T) {
	for _, c := range []struct {
		text, currency string
		want           int64
		ok             bool
	}{
		{"25", "EUR", 2500, true},
		{"25.5", "EUR", 2550, true},
		{" 25.50 ", "EUR", 2550, true},
		{"0.05", "EUR", 5, true},
		{"2500", "JPY", 2500, true},
		{"2.500", "KWD", 2500, true},
		{"25.505", "EUR", 0, false},
		{"25.", "EUR", 0, false},
		{".5", "EUR", 0, false},
		{"25.0", "JPY", 0, false},
		{"-1", "EUR", 0, false},
		{"1,000", "EUR", 0, false},
		{"1e3", "EUR", 0, false},
		{"", "EUR", 0, false},
		{"1234567890123456", "EUR", 0, false},
	} {
		got, err := ParseAmount(c.text, c.currency)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("ParseAmount(%q, %s) = %d, %v; want %d, ok %v", c.text, c.currency, got, err, c.want, c.ok)
		}
		if err != nil && ErrorKind(err) != KindInvalid {
			t.Errorf("ParseAmount(%q): error kind %v, want invalid", c.text, ErrorKind(err))
		}
	}
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"25", "25.50", "0.05", "2.500", "", ".", "9999999999999.99"} {
		f.Add(s, "EUR")
	}
	f.Add("2500", "JPY")
	f.Add("2.500", "KWD")
	f.Fuzz(func(t *testing.T, text, currency string) {
		n, err := ParseAmount(text, currency)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseAmount(%q, %q) = %d: negative", text, currency, n)
		}
	})
}
