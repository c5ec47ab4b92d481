package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"seatflow/core/text"
)

// A seat exchange moves some seats of a paid order to others of the same
// show, as one transaction: the seats given up are deleted from the
// order, the new ones inserted (UNIQUE(show_id, seat_id) has the last word,
// as for a placement), the order's seat list and amount set to what it now
// holds, and the price difference recorded as money: a payment row when the
// new seats cost more (taken at the counter into the clerk's till, or
// vouched for by the API key that asked), a refund row when they cost
// less. The order stays paid throughout.
//
// The seat store is claimed first, as a placement claims it: the new seats
// are locked for the order (so no buyer can take them meanwhile); after the
// commit they are marked sold through markSold, whose read-back gives them
// back should a refund have ended the order in between, and the seats
// given up are released while still sold to the order. A transaction that
// fails releases the lock. A crash between the steps leaves what reconcile
// repairs for a payment or a refund: a lock of an order that does not hold
// the seat, a sold seat no order holds.
//
// Money given back goes through the refund rules: above the approval
// threshold it needs a second person, so such an exchange is refused, and
// the clerk refunds the seats (a request) and sells the new ones instead.

// EventSeatsExchanged is the timeline event of an exchange.
const EventSeatsExchanged = "seats_exchanged"

// AuditSeatExchange is the audit action of an exchange by staff.
const AuditSeatExchange = "seat_exchange"

// PaymentMethodAPI is the method of an exchange's difference paid to the
// storefront: the API key that asked vouches for the money (Reference
// names its charge).
const PaymentMethodAPI = "api"

// PaymentExchange is the result recorded on an exchange's payment row: it
// paid a difference, not an order.
const PaymentExchange = "exchange"

// MaxExchangeSeats bounds the seats one exchange moves.
const MaxExchangeSeats = 20

// Exchange refusals.
var (
	ErrDifferenceUnpaid = &Error{Kind: KindConflict, Code: "difference_unpaid",
		Message: "the new seats cost more: the difference must be taken (a tender at the counter, a payment reference through the API)"}
	ErrExchangeNeedsApproval = &Error{Kind: KindConflict, Code: "exchange_needs_approval",
		Message: "the difference to give back is above the approval threshold: refund the seats (a second person approves) and sell the new ones"}
)

// SeatExchangeTx is what an exchange writes besides a partial refund's
// writes and a placement's order_seat rows.
type SeatExchangeTx interface {
	// AddPlacedSeats adds the seats to the order's seat search
	// (order_placed_seat), at time at.
	AddPlacedSeats(ctx context.Context, orderNo string, seatIDs []string, at time.Time) error
}

// ExchangeRequest asks to move seats From of a paid order to seats To
// (as many of one as of the other; the difference is priced over the sets).
type ExchangeRequest struct {
	OrderNo  string
	From, To []string
	Reason   string
	Actor    string // staff:<name> | api:<key prefix>
	// Tender takes a staff exchange's difference at the counter, into the
	// clerk's open shift; ignored when the new seats cost no more.
	Tender Tender
	// Reference is the card slip or note at the counter, the storefront's
	// charge through the API (required there when the new seats cost more).
	Reference string
	Audit     *StaffAction // staff exchanges: the audit row, in the transaction
}

// ExchangeOutcome is what an exchange did.
type ExchangeOutcome struct {
	Order           Order // as it stands afterwards
	DifferenceCents int64 // what the new seats cost over the old (negative: given back)
	Payment         *Payment
	Refund          *Refund
}

// Exchanges moves seats of paid orders (exchange.go).
type Exchanges struct {
	e       *Engine
	refunds *Refunds
	counter *Counter
}

// NewExchanges returns the exchange flow over e, refunding through r's
// store and rules and checking clerks' tills through c.
func NewExchanges(e *Engine, r *Refunds, c *Counter) *Exchanges {
	return &Exchanges{e: e, refunds: r, counter: c}
}

// checkExchange validates req and returns it with its seats in seat order
// and its texts as stored.
func checkExchange(req ExchangeRequest) (ExchangeRequest, error) {
	switch {
	case req.OrderNo == "" || len(req.OrderNo) > 40:
		return req, Invalidf("order number is required (at most 40 characters)")
	case len(req.From) == 0 || len(req.From) != len(req.To):
		return req, Invalidf("an exchange names as many new seats as seats given up, at least one")
	case len(req.From) > MaxExchangeSeats:
		return req, Invalidf("an exchange moves at most %d seats", MaxExchangeSeats)
	case req.Actor == "":
		return req, Invalidf("an exchange needs an actor")
	}
	var err error
	if req.From, err = refundSeats(req.From); err != nil {
		return req, err
	}
	if req.To, err = refundSeats(req.To); err != nil {
		return req, err
	}
	for _, id := range req.To {
		if slices.Contains(req.From, id) {
			return req, Invalidf("seat %s is both given up and taken", id)
		}
	}
	req.Reason = strings.TrimSpace(req.Reason)
	req.Reference = strings.TrimSpace(req.Reference)
	switch {
	case req.Reason == "":
		return req, Invalidf("reason is required")
	case utf8.RuneCountInString(req.Reason) > MaxRefundReasonLen:
		return req, Invalidf("reason may have at most %d characters", MaxRefundReasonLen)
	case utf8.RuneCountInString(req.Reference) > MaxCounterReferenceLen:
		return req, Invalidf("reference may have at most %d characters", MaxCounterReferenceLen)
	case req.Tender != "" && req.Tender != TenderCash && req.Tender != TenderCard:
		return req, Invalidf("tender must be cash or card")
	}
	if _, err := text.Check("reference", req.Reference, text.OneLine); err != nil {
		return req, err
	}
	req.Reason, err = text.Check("reason", req.Reason, text.MultiLine)
	return req, err
}

// Exchange moves req.From of a paid order to req.To. It is refused with
// seats_not_in_order (a seat given up is not the order's), seat_unavailable
// (a new seat is not free), order_not_paid, refund_pending,
// difference_unpaid, exchange_needs_approval, no_open_shift, or the show's
// sale checks; a refusal writes nothing and leaves the seat store as it was.
func (x *Exchanges) Exchange(ctx context.Context, req ExchangeRequest) (ExchangeOutcome, error) {
	req, err := checkExchange(req)
	if err != nil {
		return ExchangeOutcome{}, err
	}
	o, err := x.e.store.Order(ctx, req.OrderNo)
	if err != nil {
		return ExchangeOutcome{}, err
	}
	if o.Status != StatusPaid {
		return ExchangeOutcome{}, notPaid(o)
	}
	out, err := x.exchange(ctx, o, req)
	if errors.Is(err, ErrPlanChanged) {
		x.e.plans.forget(o.ShowID)
		out, err = x.exchange(ctx, o, req)
	}
	return out, err
}

// exchange claims req.To in the seat store for order o, runs the
// transaction and, strictly after its commit, moves the seat store along.
func (x *Exchanges) exchange(ctx context.Context, o Order, req ExchangeRequest) (ExchangeOutcome, error) {
	e := x.e
	plan, planVersion, err := e.plans.plan(ctx, e.store, o.ShowID)
	if err != nil {
		return ExchangeOutcome{}, err
	}
	var unknown []string
	var diff int64
	for i := range req.To {
		to, ok := plan[req.To[i]]
		if !ok {
			unknown = append(unknown, req.To[i])
		}
		diff += to.PriceCents - plan[req.From[i]].PriceCents
	}
	if len(unknown) > 0 {
		return ExchangeOutcome{}, Invalidf("unknown seats for show %d: %v", o.ShowID, unknown)
	}
	if err := seatsToMove(o, req); err != nil {
		return ExchangeOutcome{}, err
	}
	clerk := clerkOf(req.Actor)
	if clerk != "" && req.Tender != "" && diff > 0 {
		// Money into a till that is not open is refused before anything
		// is claimed; the transaction reads the shift again.
		if err := x.counter.checkShift(ctx, clerk, o.ShowID); err != nil {
			return ExchangeOutcome{}, err
		}
	}
	now := e.clock.Now()
	// A clerk may move a buyer onto a blocked seat, as a counter sale may
	// sell one; the API may not. The order keeps its seat count, so no
	// purchase limit applies.
	lock := e.seats.Lock
	if clerk != "" {
		lock = e.seats.LockBlocked
	}
	claim := Order{OrderNo: o.OrderNo, ShowID: o.ShowID, UserID: o.UserID, SeatIDs: req.To}
	if err := lock(ctx, o.ShowID, o.UserID, o.OrderNo, req.To, 0, now); err != nil {
		if lockMayHaveRun(err) {
			x.release(ctx, claim, "exchange: releasing new seats after an ambiguous lock reply", err)
		}
		return ExchangeOutcome{}, err
	}
	out, err := x.commit(ctx, req, planVersion, diff, now)
	if err != nil {
		x.release(ctx, claim, "exchange: releasing new seats after a failed transaction", err)
		return ExchangeOutcome{}, fmt.Errorf("exchange %s: %w", req.OrderNo, err)
	}
	x.after(ctx, out.Order, req)
	return out, nil
}

// release gives back the new seats an exchange locked for o and did not
// get: only while still locked by o (Release is holder-guarded), so seats
// the order held before are never touched.
func (x *Exchanges) release(ctx context.Context, claim Order, what string, cause error) {
	ctx = context.WithoutCancel(ctx)
	if _, err := x.e.releaseSeats(ctx, claim.ShowID, claim.UserID, claim.OrderNo, claim.SeatIDs); err != nil {
		x.e.metrics.SeatStoreFailure.WithLabelValues("compensate").Inc()
		x.e.log.ErrorContext(ctx, what, "order_no", claim.OrderNo, "cause", cause, "err", err)
	}
}

// commit is the exchange's one transaction.
func (x *Exchanges) commit(ctx context.Context, req ExchangeRequest, planVersion, diff int64, now time.Time) (ExchangeOutcome, error) {
	var out ExchangeOutcome
	err := x.refunds.store.InRefundTx(ctx, func(tx RefundTx) error {
		out = ExchangeOutcome{DifferenceCents: diff}
		o, err := tx.OrderForUpdate(ctx, req.OrderNo)
		if err != nil {
			return err
		}
		if o.Status != StatusPaid {
			return notPaid(o)
		}
		if err := tx.CheckShowSale(ctx, o.ShowID, planVersion, now); err != nil {
			return err
		}
		if err := seatsToMove(o, req); err != nil {
			return err
		}
		if open, ok, err := tx.OpenRefundRequest(ctx, o.OrderNo); err != nil {
			return err
		} else if ok {
			// The request may name the seats given up: it is decided first.
			return &Error{Kind: KindConflict, Code: ErrRefundPending.Code, Message: fmt.Sprintf(
				"refund request %d for order %s is waiting for approval", open.ID, o.OrderNo)}
		}
		deleted, err := tx.DeleteOrderSeatsOf(ctx, o.OrderNo, req.From)
		if err != nil {
			return err
		}
		if !slices.Equal(deleted, req.From) {
			return fmt.Errorf("order %s lists seats %v, order_seat has %v of them", o.OrderNo, req.From, deleted)
		}
		taken := o
		taken.SeatIDs, taken.CreatedAt = req.To, now
		if err := tx.InsertOrderSeats(ctx, taken); err != nil {
			return err
		}
		if err := tx.AddPlacedSeats(ctx, o.OrderNo, req.To, now); err != nil {
			return err
		}
		seats := slices.Concat(slices.DeleteFunc(slices.Clone(o.SeatIDs), func(id string) bool {
			return slices.Contains(req.From, id)
		}), req.To)
		slices.SortFunc(seats, CompareSeatIDs)
		if ok, err := tx.KeepPaidSeats(ctx, o.OrderNo, seats, o.AmountCents+diff); err != nil {
			return err
		} else if !ok {
			return notPaid(o)
		}
		o.SeatIDs, o.AmountCents = seats, o.AmountCents+diff
		out.Order = o
		detail := map[string]any{"from_seat_ids": req.From, "to_seat_ids": req.To,
			"difference_cents": diff, "reason": req.Reason, "actor": req.Actor}
		switch {
		case diff > 0:
			p, err := x.payDifference(ctx, tx, o, req, diff, now)
			if err != nil {
				return err
			}
			out.Payment, detail["txn_id"] = &p, p.TxnID
		case diff < 0:
			r, err := x.refundDifference(ctx, tx, o, req, -diff, now)
			if err != nil {
				return err
			}
			out.Refund, detail["refund_id"] = &r, r.ID
		}
		if err := tx.AddEvent(ctx, Event{OrderNo: o.OrderNo, At: now, Kind: EventSeatsExchanged, Detail: detail}); err != nil {
			return err
		}
		return req.Audit.record(ctx, tx, now, AuditSeatExchange, "order:"+o.OrderNo, detail)
	})
	return out, err
}

// seatsToMove refuses an exchange of seats order o does not hold
// (seats_not_in_order: a repeated request lands here) or into seats it
// holds already. It runs on the order read before the seat store is
// claimed, and again under the row lock.
func seatsToMove(o Order, req ExchangeRequest) error {
	var missing []string
	for _, id := range req.From {
		if !slices.Contains(o.SeatIDs, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return &Error{Kind: KindConflict, Code: ErrSeatsNotInOrder.Code, Message: fmt.Sprintf(
			"seats %s are not (or no longer) in order %s", strings.Join(missing, ", "), o.OrderNo)}
	}
	for _, id := range req.To {
		if slices.Contains(o.SeatIDs, id) {
			return Invalidf("seat %s is already in order %s", id, o.OrderNo)
		}
	}
	return nil
}

// payDifference records the money taken for new seats that cost diff more.
func (x *Exchanges) payDifference(ctx context.Context, tx RefundTx, o Order, req ExchangeRequest, diff int64, now time.Time) (Payment, error) {
	p := Payment{OrderNo: o.OrderNo, AmountCents: diff, PaidAt: now, ReceivedAt: now,
		Reference: req.Reference, Actor: req.Actor, Result: PaymentExchange}
	switch {
	case clerkOf(req.Actor) != "" && req.Tender != "":
		p.Method, p.Tender = PaymentMethodCounter, req.Tender
	case clerkOf(req.Actor) == "" && req.Reference != "":
		p.Method = PaymentMethodAPI
	default:
		return Payment{}, &Error{Kind: KindConflict, Code: ErrDifferenceUnpaid.Code, Message: fmt.Sprintf(
			"the new seats cost %d minor units more: %s", diff, ErrDifferenceUnpaid.Message)}
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	p.TxnID = "exchange-" + o.Code + "-" + hex.EncodeToString(b[:])
	var err error
	if p.ShiftID, err = counterShift(ctx, tx, p); err != nil {
		return Payment{}, err
	}
	if ok, err := tx.InsertPayment(ctx, p); err != nil {
		return Payment{}, err
	} else if !ok {
		return Payment{}, fmt.Errorf("exchange payment %s recorded twice", p.TxnID)
	}
	return p, nil
}

// refundDifference records the money given back for new seats that cost
// amount less, in the order's payment tender for a counter sale.
func (x *Exchanges) refundDifference(ctx context.Context, tx RefundTx, o Order, req ExchangeRequest, amount int64, now time.Time) (Refund, error) {
	if x.refunds.NeedsApproval(amount) {
		return Refund{}, &Error{Kind: KindConflict, Code: ErrExchangeNeedsApproval.Code, Message: fmt.Sprintf(
			"%d minor units to give back, over the approval threshold of %d: %s", amount, x.refunds.ApprovalCents(), ErrExchangeNeedsApproval.Message)}
	}
	r := Refund{OrderNo: o.OrderNo, AmountCents: amount, Reason: req.Reason, Reference: req.Reference,
		Actor: req.Actor, RequestedBy: req.Actor, ApprovedBy: req.Actor, State: RefundDone, CreatedAt: now, DecidedAt: now}
	if err := refundShift(ctx, tx, o, &r); err != nil {
		return Refund{}, err
	}
	var err error
	if r.ID, err = tx.InsertRefund(ctx, r); err != nil {
		return Refund{}, err
	}
	return r, nil
}

// after runs strictly after an exchange committed: the new seats sold to
// the order (markSold reads the order back and gives them up again if a
// refund ended it meanwhile), then the seats given up released while still
// sold to it. A failure is logged and left to reconcile: the exchange is
// committed.
func (x *Exchanges) after(ctx context.Context, o Order, req ExchangeRequest) {
	e := x.e
	ctx = context.WithoutCancel(ctx)
	taken := Order{OrderNo: o.OrderNo, ShowID: o.ShowID, UserID: o.UserID, SeatIDs: req.To}
	e.sell(ctx, taken, "exchange committed but marking the new seats sold failed; reconcile will fix them")
	e.releaseSold(ctx, o, req.From, "exchange committed but releasing the seats given up failed; reconcile will free them")
}
