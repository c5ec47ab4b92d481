package web

import (
	"time"

	"seatflow/core"
	"seatflow/core/checkin"
)

// CheckinsData is a show's check-in page for ops: its door counts and its
// arrivals per gate over time.
type CheckinsData struct {
	Show     core.Show
	Counts   checkin.Counts
	Arrivals []checkin.Arrival
}

// ArrivalRow is one slot of the arrivals table: per gate of Gates, in
// order, and in all.
type ArrivalRow struct {
	Start  time.Time
	ByGate []int
	Total  int
}

// Gates are the gates that admitted tickets, busiest first.
func (d CheckinsData) Gates() []string {
	gates := make([]string, len(d.Counts.Gates))
	for i, g := range d.Counts.Gates {
		gates[i] = g.Gate
	}
	return gates
}

// Rows lays the arrivals out one row per slot, one column per gate.
func (d CheckinsData) Rows() []ArrivalRow {
	col := map[string]int{}
	for i, g := range d.Gates() {
		col[g] = i
	}
	var rows []ArrivalRow
	for _, a := range d.Arrivals {
		if len(rows) == 0 || !rows[len(rows)-1].Start.Equal(a.Start) {
			rows = append(rows, ArrivalRow{Start: a.Start, ByGate: make([]int, len(col))})
		}
		r := &rows[len(rows)-1]
		// A gate's first admission after the counts were read has no column:
		// it still counts in the slot's total.
		if i, ok := col[a.Gate]; ok {
			r.ByGate[i] += a.Admitted
		}
		r.Total += a.Admitted
	}
	return rows
}

// Percent is admitted of expected, in whole percent (0 with none expected).
func (d CheckinsData) Percent() int {
	if d.Counts.Expected == 0 {
		return 0
	}
	return d.Counts.Admitted * 100 / d.Counts.Expected
}
