package core

import (
	"context"
	"fmt"
	"slices"
)

// Availability is a show's live seat state in brief: what a storefront
// reads in a rush, beside a plan it fetched once (the plan changes only
// before the first order). SeatMap carries every seat's geometry, price
// and category with its state, about 150 bytes a seat: 2,000 buyers each
// reading a 2,000-seat map move 600 MB and spend the on-sale's CPU on it.
type Availability struct {
	// Seats is how many the plan has; Taken (sorted) are those that
	// cannot be placed now: locked, sold or blocked.
	Seats int
	Taken []string
}

// Availability reads a show's taken seats from the seat store alone: the
// show's existence and plan come from the engine's plan cache, so a rush
// of reads costs no database round trip.
func (e *Engine) Availability(ctx context.Context, showID int64) (Availability, error) {
	plan, _, err := e.plans.plan(ctx, e.store, showID)
	if err != nil {
		return Availability{}, err
	}
	holds, err := e.seats.Holds(ctx, showID)
	if err != nil {
		return Availability{}, fmt.Errorf("availability %d: seat state: %w", showID, err)
	}
	blocked, err := e.seats.Blocks(ctx, showID)
	if err != nil {
		return Availability{}, fmt.Errorf("availability %d: blocks: %w", showID, err)
	}
	taken := make([]string, 0, len(holds)+len(blocked))
	held := make(map[string]bool, len(holds))
	for _, h := range holds {
		if _, ok := plan[h.SeatID]; ok {
			taken = append(taken, h.SeatID)
			held[h.SeatID] = true
		}
	}
	for id := range blocked {
		if _, ok := plan[id]; ok && !held[id] {
			taken = append(taken, id)
		}
	}
	slices.Sort(taken)
	return Availability{Seats: len(plan), Taken: taken}, nil
}
