package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"seatflow/core/text"
)

// Box-office (counter) sales. A clerk holds seats through the same
// Engine.Place as the public API and takes cash or card through the same
// HandlePayment as the provider's callback, so a counter sale races with
// timeouts and cancels on the one conditional update like any other order.

// BoxOfficeUserID is the user of every counter sale: the buyer has no
// account, and the public API only accepts positive user ids, so nobody can
// cancel a counter hold or count against its purchase limit through it.
const BoxOfficeUserID int64 = 0

// Payment methods: how the money reached SeatFlow.
const (
	PaymentMethodCallback = "callback" // the payment provider's signed callback
	PaymentMethodCounter  = "counter"  // taken by a clerk at the box office
)

// Tender is what a counter customer paid with.
type Tender string

const (
	TenderCash Tender = "cash"
	TenderCard Tender = "card"
)

// MaxCounterReferenceLen bounds a counter payment's reference (the card
// terminal's slip number, a note): payment.reference is VARCHAR(64).
const MaxCounterReferenceLen = 64

// Audit actions of counter sales.
const (
	AuditCounterHold    = "counter_hold"
	AuditCounterPayment = "counter_payment"
)

// ErrNoTicket: only a paid order has a ticket to print.
var ErrNoTicket = &Error{Kind: KindConflict, Code: "order_not_paid", Message: "only a paid order has a ticket"}

// ErrHoldEnded refuses to take money for an order that is no longer
// pending: the clerk must hold the seats again, not pay a dead order.
var ErrHoldEnded = &Error{Kind: KindConflict, Code: "hold_ended", Message: "the hold has ended: the order is no longer waiting for payment"}

// ErrOnlineOrder refuses counter money for an order placed online: its
// buyer pays through the provider, and a clerk marking it paid in cash would
// record money no sale at the counter accounts for.
var ErrOnlineOrder = &Error{Kind: KindConflict, Code: "not_counter_hold",
	Message: "the order was placed online: only seats held at the counter are paid at the counter"}

// CounterStore is what counter sales read from the system of record.
type CounterStore interface {
	OrderPayments(ctx context.Context, orderNo string) ([]Payment, error) // oldest first
	ShiftReader
}

// Counter runs box-office sales on the engine.
type Counter struct {
	e     *Engine
	store CounterStore
}

// NewCounter returns the box office over e and s.
func NewCounter(e *Engine, s CounterStore) *Counter { return &Counter{e: e, store: s} }

// Store returns the payments' store, for read-only views.
func (c *Counter) Store() CounterStore { return c.store }

// CounterHold asks to hold seats at the counter.
type CounterHold struct {
	ShowID   int64
	SeatIDs  []string
	Customer Customer // optional
}

// Hold places a box-office order: blocked seats may be sold and no
// purchase limit applies (the counter sells for many people).
func (c *Counter) Hold(ctx context.Context, h CounterHold) (Order, error) {
	return c.e.Place(ctx, PlaceRequest{UserID: BoxOfficeUserID, ShowID: h.ShowID, SeatIDs: h.SeatIDs,
		Customer: h.Customer, BoxOffice: true})
}

// CounterPayment is money a clerk took for a pending order.
type CounterPayment struct {
	OrderNo   string
	Tender    Tender
	Reference string // optional: the card slip number, a note
	Clerk     string // the clerk's username
}

// TakePayment records the clerk's payment through HandlePayment, for the
// order's amount, with a generated txn id. An order that is no longer
// pending, or was not held at the counter, is refused before anything is
// written; if it ends between that
// check and the payment's transaction, the payment is a recorded
// discrepancy like any late callback, and the result says so.
func (c *Counter) TakePayment(ctx context.Context, p CounterPayment) (PaymentResult, Order, error) {
	if err := checkCounterPayment(&p); err != nil {
		return "", Order{}, err
	}
	o, err := c.e.store.Order(ctx, p.OrderNo)
	if err != nil {
		return "", Order{}, err
	}
	if o.Status != StatusPending {
		return "", o, ErrHoldEnded
	}
	if o.UserID != BoxOfficeUserID {
		return "", o, ErrOnlineOrder
	}
	if err := c.checkShift(ctx, p.Clerk, o.ShowID); err != nil {
		return "", o, err
	}
	res, err := c.e.HandlePayment(ctx, Payment{TxnID: counterTxnID(o), OrderNo: o.OrderNo, AmountCents: o.AmountCents,
		Method: PaymentMethodCounter, Tender: p.Tender, Reference: p.Reference, Actor: ActorStaffPrefix + p.Clerk})
	if err != nil {
		return "", o, err
	}
	after, err := c.e.store.Order(ctx, o.OrderNo)
	if err != nil {
		return res, o, err
	}
	return res, after, nil
}

// checkCounterPayment checks what the clerk entered (the reference
// trimmed in place), before anything is written.
func checkCounterPayment(p *CounterPayment) error {
	p.Reference = strings.TrimSpace(p.Reference)
	if _, err := text.Check("reference", p.Reference, text.OneLine); err != nil {
		return err
	}
	switch {
	case p.Tender != TenderCash && p.Tender != TenderCard:
		return Invalidf("tender must be cash or card")
	case utf8.RuneCountInString(p.Reference) > MaxCounterReferenceLen:
		return Invalidf("reference may have at most %d characters", MaxCounterReferenceLen)
	case p.Clerk == "":
		return Invalidf("a counter payment needs the clerk who took it")
	}
	return nil
}

// checkShift refuses money from a clerk with no open shift, or for a show
// sold in another currency than the shift's till holds, before anything
// is written. The payment's transaction reads the shift again (it may
// close meanwhile).
func (c *Counter) checkShift(ctx context.Context, clerk string, showID int64) error {
	s, ok, err := c.store.OpenShiftOf(ctx, clerk)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNoOpenShift
	}
	show, err := c.e.store.Show(ctx, showID)
	if err != nil {
		return err
	}
	if show.Currency != s.Currency {
		return &Error{Kind: KindConflict, Code: ErrShiftCurrency.Code, Message: fmt.Sprintf(
			"the show is sold in %s but the open shift's till holds %s: close it and open one in %s", show.Currency, s.Currency, show.Currency)}
	}
	return nil
}

// counterTxnID names a counter payment: the order's code for a person
// reading it, random bytes so a second payment of the order is a new txn
// (a discrepancy), never a silent duplicate.
func counterTxnID(o Order) string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "counter-" + o.Code + "-" + hex.EncodeToString(b[:])
}
