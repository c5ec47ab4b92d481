package web

import (
	"math"
	"testing"
	"time"

	"seatflow/core"
)

func TestMoney(t *testing.T) {
	const nb = "\u00a0"
	for _, c := range []struct {
		minor    int64
		currency string
		en, zh   string
	}{
		{123450, "EUR", "€1,234.50", "€1,234.50"},
		{0, "EUR", "€0.00", "€0.00"},
		{5, "EUR", "€0.05", "€0.05"},
		{-1250, "EUR", "-€12.50", "-€12.50"},
		{2500, "JPY", "¥2,500", "JP¥2,500"}, // no minor unit: 2500 is 2,500 yen
		{-7, "JPY", "-¥7", "-JP¥7"},
		{123450, "CNY", "CN¥1,234.50", "¥1,234.50"},
		{1250, "KWD", "KWD" + nb + "1.250", "KWD" + nb + "1.250"}, // three decimals: 1250 fils
		{5, "KWD", "KWD" + nb + "0.005", "KWD" + nb + "0.005"},
		{-1000, "BHD", "-BHD" + nb + "1.000", "-BHD" + nb + "1.000"},
		{99, "USD", "$0.99", "US$0.99"},
		{123456789012, "CHF", "CHF" + nb + "1,234,567,890.12", "CHF" + nb + "1,234,567,890.12"},
		{123456789, "KRW", "₩123,456,789", "₩123,456,789"},
		{math.MaxInt64, "EUR", "€92,233,720,368,547,758.07", "€92,233,720,368,547,758.07"},
		{math.MinInt64, "JPY", "-¥9,223,372,036,854,775,808", "-JP¥9,223,372,036,854,775,808"},
		{100000, "", "1,000.00", "1,000.00"}, // money for an unknown order: no currency to name
	} {
		if got := (Page{Lang: LangEN}).Money(c.minor, c.currency); got != c.en {
			t.Errorf("Money(%d, %s) = %q, want %q", c.minor, c.currency, got, c.en)
		}
		if got := (Page{Lang: LangZH}).Money(c.minor, c.currency); got != c.zh {
			t.Errorf("Chinese Money(%d, %s) = %q, want %q", c.minor, c.currency, got, c.zh)
		}
	}
}

// TestEventAmounts checks a timeline's amounts are in the show's currency,
// or in the one the detail names.
func TestEventAmounts(t *testing.T) {
	p := Page{Lang: LangEN, Now: time.Now()}
	for _, c := range []struct {
		detail   map[string]any
		currency string
		want     string
	}{
		{map[string]any{"amount_cents": 2500.0}, "JPY", "¥2,500"},
		{map[string]any{"amount_cents": 2500.0}, "EUR", "€25.00"},
		{map[string]any{"amount_cents": 2500.0, "currency": "KWD"}, "", "KWD\u00a02.500"},
	} {
		facts := EventFacts(p, core.Event{Detail: c.detail}, c.currency)
		if len(facts) != 1 || facts[0] != (Fact{p.T("ev.amount"), c.want}) {
			t.Errorf("%v in %q: facts %v, want one amount %q", c.detail, c.currency, facts, c.want)
		}
	}
}
