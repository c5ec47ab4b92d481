package till_test

import (
	"testing"

	"seatflow/core"
	"seatflow/core/till"
)

func TestParseAmount(t *testing.T) {
	for _, tc := range []struct {
		in, cur string
		want    int64
		ok      bool
	}{
		{"150", "EUR", 15000, true},
		{"150.5", "EUR", 15050, true},
		{" 1234.50 ", "EUR", 123450, true},
		{"1,234.50", "EUR", 0, false}, // 25,50 may mean 25.50: no grouping
		{".75", "EUR", 0, false},
		{"0", "EUR", 0, true},
		{"2500", "JPY", 2500, true},
		{"2500.5", "JPY", 0, false},
		{"1.250", "KWD", 1250, true},
		{"1.001", "EUR", 0, false},
		{"-5", "EUR", 0, false},
		{"", "EUR", 0, false},
		{".", "EUR", 0, false},
		{"1e3", "EUR", 0, false},
		{"10000001", "EUR", 0, false},
		{"999999999999999", "EUR", 0, false},
	} {
		got, err := till.ParseAmount(tc.in, tc.cur)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseAmount(%q, %s) = %d, %v; want %d ok=%v", tc.in, tc.cur, got, err, tc.want, tc.ok)
		}
		if err != nil && core.ErrorKind(err) != core.KindInvalid {
			t.Errorf("ParseAmount(%q): %v is not invalid", tc.in, err)
		}
	}
}

// FuzzParseAmount: any text is a bounded amount or an invalid-input error.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"150", "1,234.50", ".5", "-1", "9999999999999999999", "1..2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := till.ParseAmount(s, "EUR")
		if err != nil {
			if core.ErrorKind(err) != core.KindInvalid {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if n < 0 || n > till.MaxFloatCents {
			t.Fatalf("%q: %d out of bounds", s, n)
		}
	})
}
