package core

import (
	"context"
	"fmt"

	"seatflow/core/text"
)

// CancelRequest asks to end a pending order unpaid.
type CancelRequest struct {
	OrderNo string
	Reason  string // timeout | customer | staff | reconcile
	Actor   string // system | user:<id> | staff:<name>
	Note    string // free text from staff
	// Audit, for a staff force-cancel, writes its audit row with what came
	// of it (cancelled, or what a loser found) in the cancel's transaction.
	Audit *StaffAction
}

// CancelResult reports whether this call won the conditional update, and the
// order as it stands afterwards (paid or cancelled when the call lost).
type CancelResult struct {
	Won   bool
	Order Order
}

// CancelAndRelease is the one cancel path for timeout, customer, staff and
// reconcile. The transaction (cancelJob.write in cancelbatch.go; a batch of
// cancels that come together: cancelTogether) owns the conditional update
// and the order_seat delete; Redis is released strictly after commit,
// because Redis cannot roll back: a seat freed for an order that then
// stayed alive could be sold twice.
func (e *Engine) CancelAndRelease(ctx context.Context, r CancelRequest) (CancelResult, error) {
	if r.Note != "" {
		var err error
		if r.Note, err = text.Check("note", r.Note, text.MultiLine); err != nil {
			return CancelResult{}, err
		}
	}
	e.prepareHandoff(ctx)
	now := e.clock.Now()
	path := ExpiryPath(r.Reason, r.Actor)
	j := &cancelJob{e: e, ctx: ctx, r: r, now: now, expiry: path != ""}
	err := e.canceller.do(ctx, j)
	if err != nil {
		return CancelResult{}, fmt.Errorf("cancel %s: %w", r.OrderNo, err)
	}
	won, order, released := j.won, j.order, j.hand.rest
	if !won {
		e.recordLostAttempt(ctx, order, r.Actor, r.Reason, now)
		return CancelResult{Order: order}, nil
	}
	e.metrics.OrdersEnded.WithLabelValues(StatusCancelled.String(), r.Reason).Inc()
	e.countOfferExpired(order)
	freedAt := now
	if path != "" {
		e.metrics.CancelLateness.WithLabelValues(path).Observe(now.Sub(order.ExpireAt).Seconds())
		freedAt = order.ExpireAt
	}
	// Committed: the seats handed on move to their offers, the rest are
	// released. A failed release leaves a stale lock that reconcile frees.
	ctx = context.WithoutCancel(ctx)
	e.afterHandOff(ctx, order, j.hand, freedAt)
	if len(released) == 0 && len(j.hand.offers) > 0 {
		return CancelResult{Won: true, Order: order}, nil
	}
	n, rerr := e.releaseSeats(ctx, order.ShowID, order.UserID, order.OrderNo, released)
	if rerr != nil {
		e.metrics.SeatStoreFailure.WithLabelValues("release").Inc()
		e.log.ErrorContext(ctx, "cancel committed but seat release failed; reconcile will free them",
			"order_no", order.OrderNo, "err", rerr)
		e.addEvent(ctx, Event{OrderNo: order.OrderNo, At: e.clock.Now(), Kind: EventSeatReleaseFailed,
			Detail: map[string]any{"seat_ids": released, "error": rerr.Error()}})
	} else {
		e.addEvent(ctx, Event{OrderNo: order.OrderNo, At: e.clock.Now(), Kind: EventSeatsReleased,
			Detail: map[string]any{"seat_ids": released, "released": n}})
		e.notify.SeatsChanged(order.ShowID, released, SeatAvailable, "")
	}
	return CancelResult{Won: true, Order: order}, nil
}

// customerOrder reads an order a customer acts on: another user's order,
// and a counter sale, are "not found", so a caller can neither act on nor
// probe orders that are not its user's.
func (e *Engine) customerOrder(ctx context.Context, orderNo string, userID int64) (Order, error) {
	o, err := e.store.Order(ctx, orderNo)
	if err != nil {
		return Order{}, err
	}
	if o.UserID != userID || userID == BoxOfficeUserID {
		return Order{}, ErrOrderNotFound
	}
	return o, nil
}

// Cancel is the customer's cancel: only the owner may cancel, a repeat is a
// success, and a paid order cannot be cancelled here.
func (e *Engine) Cancel(ctx context.Context, orderNo string, userID int64) (Order, error) {
	o, err := e.customerOrder(ctx, orderNo, userID)
	if err != nil {
		return Order{}, err
	}
	actor := fmt.Sprintf("%s%d", ActorCustomerPrefix, userID)
	if o.Status == StatusPending {
		// The number as stored: the caller's may be spelled otherwise.
		res, err := e.CancelAndRelease(ctx, CancelRequest{OrderNo: o.OrderNo, Reason: ReasonCustomer, Actor: actor})
		if err != nil {
			return Order{}, err
		}
		o = res.Order
	} else {
		e.recordLostAttempt(ctx, o, actor, ReasonCustomer, e.clock.Now())
	}
	if o.Status == StatusPaid || o.Status == StatusRefunded {
		return o, ErrOrderNotPending
	}
	return o, nil
}
