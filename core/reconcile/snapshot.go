package reconcile

import (
	"context"
	"fmt"

	"seatflow/core"
	"seatflow/core/store"
)

// snapshot is one show's seats as both stores see them. The seat store is
// read first, then the DB. Every engine path writes the DB first and the
// seat store after commit (cancel, pay) or the seat store first and the DB
// after (place), so a change caught between the two reads looks like a
// lock younger than the grace period or an order closed within it — which
// the checks leave alone — and never like a settled anomaly.
type snapshot struct {
	showID int64
	holds  map[string]core.SeatHold // seat store: non-available seats
	rows   map[string]store.SeatRow // DB: order_seat rows with their orders
	limits map[int64]int            // seat store: purchase counters, when asked for
}

// readSnapshot reads the show's seat state; withLimits adds the purchase
// counters, read before the seats (see limit_drift.go).
func (e *Env) readSnapshot(ctx context.Context, showID int64, withLimits bool) (snapshot, error) {
	s := snapshot{showID: showID}
	var err error
	if withLimits {
		if s.limits, err = e.Seats.Limits(ctx, showID); err != nil {
			return s, err
		}
	}
	holds, err := e.Seats.Holds(ctx, showID)
	if err != nil {
		return s, err
	}
	s.holds = make(map[string]core.SeatHold, len(holds))
	for _, h := range holds {
		s.holds[h.SeatID] = h
	}
	s.rows = make(map[string]store.SeatRow)
	after := ""
	for {
		page, err := e.DB.ShowSeatRows(ctx, showID, after, e.PageSize)
		if err != nil {
			return s, err
		}
		for _, r := range page {
			s.rows[r.SeatID] = r
		}
		if len(page) < e.PageSize {
			return s, nil
		}
		after = page[len(page)-1].SeatID
	}
}

// eachShow runs fn on the snapshot of every show on sale, stopping at the
// first error (a store that cannot be read).
func (e *Env) eachShow(ctx context.Context, withLimits bool, fn func(snapshot) error) error {
	shows, err := e.ShowsOnSale(ctx)
	if err != nil {
		return err
	}
	for _, id := range shows {
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := e.readSnapshot(ctx, id, withLimits)
		if err != nil {
			return fmt.Errorf("show %d: %w", id, err)
		}
		if err := fn(s); err != nil {
			return fmt.Errorf("show %d: %w", id, err)
		}
	}
	return nil
}
