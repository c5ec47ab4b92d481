package core

import (
	"context"
	"errors"
	"fmt"
)

// SeatView is one seat of a show's plan with its live state.
type SeatView struct {
	Seat
	State   SeatState
	OrderNo string
}

// Shows lists every show.
func (e *Engine) Shows(ctx context.Context) ([]Show, error) { return e.store.Shows(ctx) }

// Order returns an order and its whole timeline, oldest event first.
func (e *Engine) Order(ctx context.Context, orderNo string) (Order, []Event, error) {
	o, err := e.store.Order(ctx, orderNo)
	if err != nil {
		return Order{}, nil, err
	}
	evs, err := e.store.Events(ctx, orderNo)
	if err != nil {
		return Order{}, nil, fmt.Errorf("order %s: events: %w", orderNo, err)
	}
	return o, evs, nil
}

// SeatMap joins the show's seat plan (DB) with the live seat state (Redis).
func (e *Engine) SeatMap(ctx context.Context, showID int64) ([]SeatView, error) {
	show, err := e.store.Show(ctx, showID)
	if err != nil {
		return nil, err
	}
	// The cached plan, as placements use it: reading 20,000 seats was most
	// of a big map's answer. The show's version says whether it is still
	// the plan (another instance may have replaced it).
	cached, err := e.plans.get(ctx, e.store, showID)
	if err == nil && cached.version != show.PlanVersion {
		e.plans.forget(showID)
		cached, err = e.plans.get(ctx, e.store, showID)
	}
	if err != nil {
		return nil, fmt.Errorf("seat map %d: plan: %w", showID, err)
	}
	plan := cached.ordered
	holds, err := e.seats.Holds(ctx, showID)
	if err != nil {
		return nil, fmt.Errorf("seat map %d: seat state: %w", showID, err)
	}
	blocked, err := e.seats.Blocks(ctx, showID)
	if err != nil {
		return nil, fmt.Errorf("seat map %d: blocks: %w", showID, err)
	}
	byID := make(map[string]SeatHold, len(holds))
	for _, h := range holds {
		byID[h.SeatID] = h
	}
	out := make([]SeatView, len(plan))
	for i, s := range plan {
		h, held := byID[s.SeatID]
		out[i] = SeatView{Seat: s, State: h.State, OrderNo: h.OrderNo}
		if _, b := blocked[s.SeatID]; b && !held {
			out[i].State = SeatBlocked // a held blocked seat (sold at the counter) shows its holder
		}
	}
	return out, nil
}

// RebuildSeats makes the seat store's view of a show exactly what the DB
// says (a seat is taken iff an order_seat row exists, blocked iff a
// seat_block row does), for a flushed or failed-over Redis and for the
// embedded store at start.
func (e *Engine) RebuildSeats(ctx context.Context, showID int64) error {
	taken, err := e.store.TakenSeats(ctx, showID)
	if err != nil {
		return fmt.Errorf("rebuild seats %d: %w", showID, err)
	}
	blocks, err := e.store.Blocks(ctx, showID)
	if err != nil {
		return fmt.Errorf("rebuild seats %d: %w", showID, err)
	}
	if err := e.seats.Replace(ctx, showID, taken); err != nil {
		return fmt.Errorf("rebuild seats %d: %w", showID, err)
	}
	if err := e.seats.ReplaceBlocks(ctx, showID, blocks); err != nil {
		return fmt.Errorf("rebuild seats %d: %w", showID, err)
	}
	return nil
}

// RebuildAllSeats rebuilds every show's seat state from the DB.
func (e *Engine) RebuildAllSeats(ctx context.Context) error {
	shows, err := e.store.Shows(ctx)
	if err != nil {
		return fmt.Errorf("rebuild seats: %w", err)
	}
	for _, s := range shows {
		if err := e.RebuildSeats(ctx, s.ID); err != nil {
			return err
		}
	}
	return nil
}

// Ready pings every store; the error names the ones that do not answer.
func (e *Engine) Ready(ctx context.Context) error {
	var errs []error
	if err := e.store.Ping(ctx); err != nil {
		errs = append(errs, fmt.Errorf("database: %w", err))
	}
	if err := e.seats.Ping(ctx); err != nil {
		errs = append(errs, fmt.Errorf("seat store: %w", err))
	}
	if err := e.queue.Ping(ctx); err != nil {
		errs = append(errs, fmt.Errorf("delay queue: %w", err))
	}
	if len(errs) == 0 {
		return nil
	}
	err := errors.Join(errs...)
	return &Error{Kind: KindUnavailable, Code: ErrStoreUnavailable.Code, Message: "not ready", Err: err}
}
