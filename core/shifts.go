package core

import (
	"context"
	"strings"
)

// Shifts at the till (core/till runs them): the engine's part is only
// that counter money carries the clerk's open shift. A counter payment,
// and a refund of a counter sale run by a clerk, read the shift with
// ShiftTx.OpenShift inside their own transaction and write its id on
// their row, so the till's expected cash is a sum over the ledger. The
// read takes a shared lock on the shift row until commit: closing the
// shift locks it exclusively, so money is attached to a shift either
// wholly before its close counts it, or not at all.

// ShiftRef is what money needs to know of a clerk's open shift.
type ShiftRef struct {
	ID       int64
	Currency string
}

// ShiftTx is the till's part of a money transaction.
type ShiftTx interface {
	// OpenShift returns clerk's open shift, share-locked until the
	// transaction ends; false when the clerk has none.
	OpenShift(ctx context.Context, clerk string) (ShiftRef, bool, error)
}

// ShiftReader reads a clerk's open shift outside a transaction, to refuse
// a counter sale before anything is written.
type ShiftReader interface {
	OpenShiftOf(ctx context.Context, clerk string) (ShiftRef, bool, error)
}

// Till errors.
var (
	ErrNoOpenShift = &Error{Kind: KindConflict, Code: "no_open_shift",
		Message: "no open shift at the till: open a shift (with its float) before taking money at the counter"}
	ErrShiftCurrency = &Error{Kind: KindConflict, Code: "shift_currency",
		Message: "the show is sold in another currency than the open shift's till"}
)

// clerkOf is the username in a staff actor ("staff:ada"), "" for others.
func clerkOf(actor string) string {
	name, ok := strings.CutPrefix(actor, ActorStaffPrefix)
	if !ok {
		return ""
	}
	return name
}

// counterShift is the open shift a counter payment belongs to, locked in
// tx: ErrNoOpenShift when its clerk has none (closed meanwhile).
func counterShift(ctx context.Context, tx Tx, p Payment) (int64, error) {
	if p.Method != PaymentMethodCounter {
		return 0, nil
	}
	s, ok, err := tx.OpenShift(ctx, clerkOf(p.Actor))
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, ErrNoOpenShift
	}
	return s.ID, nil
}

// refundShift attaches refund row to its actor's open shift when the order
// o was paid at the counter: the money goes back in the payment's tender
// from that clerk's till. A cash refund needs an open shift (cash leaves
// a till); a card refund by someone with no till open (ops approving a
// request) belongs to no shift.
func refundShift(ctx context.Context, tx RefundTx, o Order, row *Refund) error {
	if o.PaidTxnID == "" {
		return nil
	}
	p, err := tx.PaymentByTxn(ctx, o.PaidTxnID)
	if err != nil {
		return err
	}
	if p.Method != PaymentMethodCounter {
		return nil
	}
	row.Tender = p.Tender
	s, ok, err := tx.OpenShift(ctx, clerkOf(row.Actor))
	switch {
	case err != nil:
		return err
	case ok:
		row.ShiftID = s.ID
	case p.Tender == TenderCash:
		return ErrNoOpenShift
	}
	return nil
}
