package core

import (
	"context"
	"errors"
	"slices"
	"time"
)

// BestAvailableRequest asks for seats the seat store chooses (bestseats.go)
// instead of named ones. r.SeatIDs stays empty.
type BestAvailableRequest struct {
	PlaceRequest
	Count      int
	Category   string // "" for any
	Together   bool
	Accessible bool
}

// PlaceBest places an order on seats chosen by the best-available rules:
// the same path as Place, with the seat store's choose-and-lock in place
// of its lock of named seats. The returned bool says a single seat was
// stranded because no choice avoided it.
func (e *Engine) PlaceBest(ctx context.Context, r BestAvailableRequest) (Order, bool, error) {
	if err := e.validateBest(r); err != nil {
		return Order{}, false, err
	}
	customer, err := r.Customer.Normalize()
	if err != nil {
		return Order{}, false, err
	}
	r.Customer = customer
	o, stranded, err := e.placeBest(ctx, r)
	if errors.Is(err, ErrPlanChanged) {
		e.plans.forget(r.ShowID)
		o, stranded, err = e.placeBest(ctx, r)
	}
	return o, stranded, err
}

func (e *Engine) validateBest(r BestAvailableRequest) error {
	switch {
	case r.BoxOffice:
		return Invalidf("best available is not for box-office sales")
	case r.UserID <= 0:
		return Invalidf("user_id must be a positive integer")
	case r.ShowID <= 0:
		return Invalidf("show_id must be a positive integer")
	case len(r.SeatIDs) > 0:
		return fieldError(CodeInvalidRequest, "best_available", "give seat_ids or best_available, not both")
	}
	return e.checkBestCount(r.Count)
}

// checkBestCount bounds the seats of one best-available request.
func (e *Engine) checkBestCount(n int) error {
	if limit := min(MaxBestCount, e.cfg.MaxSeatsPerOrder); n < 1 || n > limit {
		return fieldError(CodeInvalidRequest, "best_available.count", "%d, want 1 to %d", n, limit)
	}
	return nil
}

// CodeInvalidRequest is the code of a malformed order request.
var CodeInvalidRequest = ErrInvalid.Code

func (e *Engine) placeBest(ctx context.Context, r BestAvailableRequest) (Order, bool, error) {
	p, err := e.plans.get(ctx, e.store, r.ShowID)
	if err != nil {
		return Order{}, false, err
	}
	if err := checkBestFits(p.index, r.ShowID, r.Category, r.Count, r.Together); err != nil {
		return Order{}, false, err
	}
	if err := e.checkClientHolds(ctx, r.PlaceRequest); err != nil {
		return Order{}, false, err
	}
	o, now := e.newOrder(r.PlaceRequest, nil)
	req := BestRequest{Count: r.Count, Category: r.Category, Together: r.Together, Accessible: r.Accessible,
		AvoidSingles: !p.index.AllowSingles}
	c, err := e.seats.ChooseAndLock(ctx, o.ShowID, o.UserID, o.OrderNo, p.index, req, e.cfg.PurchaseLimit, now)
	if err != nil && lockMayHaveRun(err) && !errors.Is(err, ErrNotEnoughSeats) && !errors.Is(err, ErrPlanChanged) {
		// No answer: the script may have chosen and locked seats this
		// request never learnt, so record cannot release them by id.
		e.compensateOrder(ctx, o, err)
	}
	if err == nil {
		// Priced and listed as Place does named seats.
		seats := make([]Seat, len(c.SeatIDs))
		for i, id := range c.SeatIDs {
			seats[i] = p.seats[id]
		}
		chosen, _ := e.newOrder(r.PlaceRequest, seats)
		o.SeatIDs, o.AmountCents = chosen.SeatIDs, chosen.AmountCents
	}
	o, err = e.record(ctx, o, p.version, now, err)
	return o, c.Stranded, err
}

// compensateOrder is compensate for an order whose seats are unknown: the
// seat store releases whatever the order number holds locked, once more
// when that reply is lost too (a second release frees nothing more).
func (e *Engine) compensateOrder(ctx context.Context, o Order, cause error) {
	ctx = context.WithoutCancel(ctx)
	_, err := e.seats.ReleaseOrder(ctx, o.ShowID, o.OrderNo)
	if err != nil && replyLost(err) {
		_, err = e.seats.ReleaseOrder(ctx, o.ShowID, o.OrderNo)
	}
	if err != nil {
		e.metrics.SeatStoreFailure.WithLabelValues("compensate").Inc()
		e.log.ErrorContext(ctx, "place best: releasing the seats of an order after an ambiguous choose reply",
			"order_no", o.OrderNo, "cause", cause, "err", err)
	}
}

// checkBestFits refuses a request no state of the show could answer: an
// unknown category, more seats together than its longest row seats.
func checkBestFits(idx *SeatIndex, showID int64, category string, count int, together bool) error {
	if category != "" && !hasCategory(idx, category) {
		return fieldError(CodeUnknownCategory, "best_available.category", "%q is not a category of show %d", category, showID)
	}
	if together && count > idx.Longest {
		return fieldError(CodeInvalidRequest, "best_available.count",
			"%d together, but the longest row of show %d seats %d together", count, showID, idx.Longest)
	}
	return nil
}

func hasCategory(idx *SeatIndex, cat string) bool {
	_, found := slices.BinarySearch(idx.Categories, cat)
	return found
}

// newOrder is the pending order of r on seats, placed now.
func (e *Engine) newOrder(r PlaceRequest, seats []Seat) (Order, time.Time) {
	now := e.clock.Now()
	o := Order{OrderNo: newOrderNo(now), Code: NewOrderCode(), Customer: r.Customer, ShowID: r.ShowID,
		UserID: r.UserID, Status: StatusPending, CreatedAt: now, ExpireAt: now.Add(e.cfg.HoldTTL),
		TimeoutHop: 1, ClientIP: r.ClientIP}
	for _, s := range seats {
		o.AmountCents += s.PriceCents
		o.SeatIDs = append(o.SeatIDs, s.SeatID)
	}
	slices.Sort(o.SeatIDs)
	o.TimeoutDueAt = now.Add(e.cfg.Delay.Plan(e.cfg.HoldTTL).Delay)
	return o, now
}
