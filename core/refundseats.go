package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// A partial refund gives back some seats of a paid order and the money of
// those seats, and nothing else changes: the order stays paid with the
// seats it keeps. It runs as a whole refund does, under the order row's
// lock: the named order_seat rows deleted, the order row shrunk to the
// seats kept and their amount (so every seat a paid order lists has its
// row, the invariant reconcile checks), the refund row, an event; after
// the commit the named seats go back in the seat store through the same
// holder-guarded ReleaseSold. A partial refund naming every seat the order
// still has is the whole refund (the order ends refunded).
//
// A seat's money is its plan price: a show's prices are fixed once it has
// orders (ErrShowOnSale), so that is what was paid for it. Repeating a
// request is harmless: its seats are no longer the order's, so it is
// refused with seats_not_in_order and writes nothing.
//
// Above the approval threshold (the partial amount counts) it is a request
// like any other; its seats travel in the refund_requested event, written
// in the request's transaction, and the approval refunds exactly those.

// EventSeatsRefunded is the timeline event of a partial refund.
const EventSeatsRefunded = "seats_refunded"

// MaxRefundSeats bounds the seats one partial refund names.
const MaxRefundSeats = 100

// ErrSeatsNotInOrder refuses a partial refund naming a seat the order does
// not hold (never had, or gave back already).
var ErrSeatsNotInOrder = &Error{Kind: KindConflict, Code: "seats_not_in_order",
	Message: "a seat named is not (or no longer) in the order"}

// SeatRefundTx is what a partial refund writes besides a refund's writes.
type SeatRefundTx interface {
	// DeleteOrderSeatsOf deletes the named order_seat rows of the order
	// and returns the seat ids it deleted, in seat order.
	DeleteOrderSeatsOf(ctx context.Context, orderNo string, seatIDs []string) ([]string, error)
	// KeepPaidSeats sets a paid order's seats and amount to what it keeps:
	// UPDATE order_info SET seat_ids, seat_count, amount_cents WHERE
	// order_no=? AND status=1. False when the order is not paid.
	KeepPaidSeats(ctx context.Context, orderNo string, seatIDs []string, amountCents int64) (bool, error)
}

// refundSeats checks the seats a partial refund names: distinct, at most
// MaxRefundSeats, returned in seat order (nil: the whole order).
func refundSeats(ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > MaxRefundSeats {
		return nil, Invalidf("a partial refund names at most %d seats", MaxRefundSeats)
	}
	out := slices.Clone(ids)
	slices.SortFunc(out, CompareSeatIDs)
	for i, id := range out {
		if id == "" || len(id) > 16 {
			return nil, Invalidf("seat ids are 1 to 16 characters")
		}
		if i > 0 && out[i-1] == id {
			return nil, Invalidf("seat %s is named twice", id)
		}
	}
	return out, nil
}

// seatPart is what a partial refund takes from order o: the named seats,
// the seats kept and the money of the named seats. whole is set when
// the named seats are all the order still has: then it is the whole
// refund.
type seatPart struct {
	seats, kept []string
	amountCents int64
	whole       bool
}

// partOf prices seats of order o (locked, paid) from the show's plan.
func (r *Refunds) partOf(ctx context.Context, o Order, seats []string) (seatPart, error) {
	var missing []string
	for _, s := range seats {
		if !slices.Contains(o.SeatIDs, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return seatPart{}, &Error{Kind: KindConflict, Code: ErrSeatsNotInOrder.Code, Message: fmt.Sprintf(
			"seats %s are not (or no longer) in order %s", strings.Join(missing, ", "), o.OrderNo)}
	}
	p := seatPart{seats: seats}
	for _, s := range o.SeatIDs {
		if !slices.Contains(seats, s) {
			p.kept = append(p.kept, s)
		}
	}
	if len(p.kept) == 0 {
		p.whole, p.amountCents = true, o.AmountCents
		return p, nil
	}
	plan, _, err := r.e.plans.plan(ctx, r.e.store, o.ShowID)
	if err != nil {
		return seatPart{}, err
	}
	for _, s := range seats {
		p.amountCents += plan[s].PriceCents
	}
	if p.amountCents >= o.AmountCents {
		// Prices are fixed while a show has orders, so the seats kept
		// always have money left: anything else is a plan changed under us.
		return seatPart{}, fmt.Errorf("order %s: seats %v cost %d of its %d cents, leaving nothing for %v",
			o.OrderNo, seats, p.amountCents, o.AmountCents, p.kept)
	}
	return p, nil
}

// transitionSeats is transition for a partial refund p of order o (locked,
// paid): the named rows deleted, the order shrunk, the refund row
// (inserted, or the request moved to refunded when row.ID is set), the
// event. The order stays paid.
func (r *Refunds) transitionSeats(ctx context.Context, tx RefundTx, o Order, p seatPart, row *Refund) (handoff, error) {
	if err := refundShift(ctx, tx, o, row); err != nil {
		return handoff{}, err
	}
	deleted, err := tx.DeleteOrderSeatsOf(ctx, o.OrderNo, p.seats)
	if err != nil {
		return handoff{}, err
	}
	if !slices.Equal(deleted, p.seats) {
		// The order lists them but the DB has no row: reconcile's to look at.
		return handoff{}, fmt.Errorf("order %s lists seats %v, order_seat has %v of them", o.OrderNo, p.seats, deleted)
	}
	if ok, err := tx.KeepPaidSeats(ctx, o.OrderNo, p.kept, o.AmountCents-p.amountCents); err != nil {
		return handoff{}, err
	} else if !ok { // the row lock makes this a belt to the braces
		return handoff{}, notPaid(o)
	}
	if row.ID != 0 {
		if ok, err := tx.DecideRefund(ctx, *row); err != nil {
			return handoff{}, err
		} else if !ok {
			return handoff{}, ErrRefundDecided
		}
	} else if row.ID, err = tx.InsertRefund(ctx, *row); err != nil {
		return handoff{}, err
	}
	if err := tx.AddEvent(ctx, Event{OrderNo: o.OrderNo, At: row.DecidedAt, Kind: EventSeatsRefunded, Detail: map[string]any{
		"refund_id": row.ID, "amount_cents": row.AmountCents, "reason": row.Reason, "reference": row.Reference,
		"actor": row.Actor, "requested_by": row.RequestedBy, "approved_by": row.ApprovedBy,
		"seat_ids": p.seats, "kept_seat_ids": p.kept}}); err != nil {
		return handoff{}, err
	}
	return r.e.handOff(ctx, tx, o, p.seats, row.DecidedAt)
}

// afterRefundSeats runs strictly after a partial refund committed: the
// refunded seats handed to waiting-list offers move to them; the others,
// still sold to the order, go back to available with the buyer's limit,
// as afterRefund does for a whole order.
func (r *Refunds) afterRefundSeats(ctx context.Context, o Order, hand handoff) {
	r.e.metrics.Refunds.WithLabelValues(string(RefundDone)).Inc()
	r.e.afterHandOff(ctx, o, hand, r.e.clock.Now())
	if len(hand.rest) > 0 {
		r.e.releaseSold(ctx, o, hand.rest, "partial refund committed but seat release failed; reconcile will free them")
	}
}

// releaseSold gives back seats that a committed change took from order o
// (a partial refund, an exchange) while they are still sold to it, with
// the holder's limit; the release is sent once more when its reply is
// lost (releasing twice is harmless). A failure is logged as failed, the
// change is committed: reconcile frees the seats.
func (e *Engine) releaseSold(ctx context.Context, o Order, seats []string, failed string) {
	ctx = context.WithoutCancel(ctx)
	n, err := e.seats.ReleaseSold(ctx, o.ShowID, o.OrderNo, seats)
	if err != nil && replyLost(err) {
		var m int
		m, err = e.seats.ReleaseSold(ctx, o.ShowID, o.OrderNo, seats)
		n += m
	}
	if err != nil {
		e.metrics.SeatStoreFailure.WithLabelValues(seatReleaseOpRefund).Inc()
		e.log.ErrorContext(ctx, failed, "order_no", o.OrderNo, "seat_ids", seats, "err", err)
		e.addEvent(ctx, Event{OrderNo: o.OrderNo, At: e.clock.Now(), Kind: EventSeatReleaseFailed,
			Detail: map[string]any{"seat_ids": seats, "error": err.Error()}})
		return
	}
	e.addEvent(ctx, Event{OrderNo: o.OrderNo, At: e.clock.Now(), Kind: EventSeatsReleased,
		Detail: map[string]any{"seat_ids": seats, "released": n}})
	e.notify.SeatsChanged(o.ShowID, seats, SeatAvailable, "")
}

// requestedSeats returns the seats refund request req named (nil: the
// whole order), from its refund_requested event.
func (r *Refunds) requestedSeats(ctx context.Context, req Refund) ([]string, error) {
	evs, err := r.e.store.Events(ctx, req.OrderNo)
	if err != nil {
		return nil, err
	}
	for _, ev := range evs {
		// JSON numbers come back as float64: exact for any id below 2^53.
		if id, _ := ev.Detail["refund_id"].(float64); ev.Kind != EventRefundRequested || int64(id) != req.ID {
			continue
		}
		list, _ := ev.Detail["seat_ids"].([]any)
		var seats []string
		for _, s := range list {
			id, ok := s.(string)
			if !ok {
				return nil, fmt.Errorf("refund request %d: seat %v is not a seat id", req.ID, s)
			}
			seats = append(seats, id)
		}
		return seats, nil
	}
	return nil, nil
}
