package checkin

import (
	"context"
	"time"

	"seatflow/core"
)

// ArrivalSlot is the width of one bar of a show's arrivals.
const ArrivalSlot = 15 * time.Minute

// GateCount is how many tickets one gate admitted.
type GateCount struct {
	Gate     string
	Admitted int
}

// Counts is a show's door at a glance: tickets (seats of paid orders)
// admitted of those expected, and per gate, busiest first.
type Counts struct {
	ShowID   int64
	Expected int
	Admitted int
	Gates    []GateCount
}

// Arrival is how many tickets a gate admitted in one slot of time.
type Arrival struct {
	Start    time.Time
	Gate     string
	Admitted int
}

// Counts reads a show's door counts.
func (d *Desk) Counts(ctx context.Context, showID int64) (Counts, error) {
	if showID <= 0 {
		return Counts{}, core.Invalidf("show_id must be a positive integer")
	}
	return d.store.Counts(ctx, showID)
}

// Arrivals reads a show's admissions per gate and ArrivalSlot, oldest first.
func (d *Desk) Arrivals(ctx context.Context, showID int64) ([]Arrival, error) {
	if showID <= 0 {
		return nil, core.Invalidf("show_id must be a positive integer")
	}
	return d.store.Arrivals(ctx, showID, ArrivalSlot)
}
