package web

import (
	"cmp"
	"slices"

	"seatflow/core/till"
)

// NavTill is the till's place in the nav.
const NavTill = "till"

// TillData is the clerk's till page: the open shift and its money so far,
// or the form to open one; the shift just closed, if any.
type TillData struct {
	Current    *till.Report
	Closed     *till.Report
	Currencies []string // of the shows on sale, the first preselected
	Float      string   // as typed, when refused
	Currency   string
	Counted    string
	Error      string
	Tolerance  int64
}

// TillReportData is the printable shift report of one clerk's day, or,
// with Clerk empty, the manager's day view of every clerk.
type TillReportData struct {
	Date    string // YYYY-MM-DD in the console's zone
	Clerk   string
	Reports []till.Report
	Manager bool // may see every clerk
}

// CurrencyTotal is one currency's money of a day.
type CurrencyTotal struct {
	Currency string
	Float    int64
	till.Totals
	Expected, Counted, Difference int64
	Open                          int // shifts not yet closed
}

// Totals sums the day's shifts by currency, currencies in order.
func (d TillReportData) Totals() []CurrencyTotal {
	by := map[string]*CurrencyTotal{}
	for _, r := range d.Reports {
		t := by[r.Currency]
		if t == nil {
			t = &CurrencyTotal{Currency: r.Currency}
			by[r.Currency] = t
		}
		t.Float += r.FloatCents
		t.Cash.Sales, t.Cash.SalesCents = t.Cash.Sales+r.Cash.Sales, t.Cash.SalesCents+r.Cash.SalesCents
		t.Cash.Refunds, t.Cash.RefundsCents = t.Cash.Refunds+r.Cash.Refunds, t.Cash.RefundsCents+r.Cash.RefundsCents
		t.Card.Sales, t.Card.SalesCents = t.Card.Sales+r.Card.Sales, t.Card.SalesCents+r.Card.SalesCents
		t.Card.Refunds, t.Card.RefundsCents = t.Card.Refunds+r.Card.Refunds, t.Card.RefundsCents+r.Card.RefundsCents
		if r.Open() {
			t.Open++
			continue
		}
		t.Expected, t.Counted, t.Difference = t.Expected+r.ExpectedCents, t.Counted+r.CountedCents, t.Difference+r.DifferenceCents
	}
	out := make([]CurrencyTotal, 0, len(by))
	for _, t := range by {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b CurrencyTotal) int { return cmp.Compare(a.Currency, b.Currency) })
	return out
}
