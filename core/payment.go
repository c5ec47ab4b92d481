package core

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Payment results recorded on the payment row besides PaymentResult values.
const paymentAmountMismatch = "amount_mismatch"

// actor is who the paid transition records: the clerk for a counter payment.
func (p Payment) actor() string {
	if p.Actor != "" {
		return p.Actor
	}
	return "payment"
}

// detail is the paid event's detail; a counter payment adds how and by whom.
func (p Payment) detail() map[string]any {
	d := map[string]any{"txn_id": p.TxnID, "amount_cents": p.AmountCents}
	if p.Method == PaymentMethodCounter {
		d["method"], d["tender"], d["actor"] = p.Method, string(p.Tender), p.Actor
		if p.Reference != "" {
			d["reference"] = p.Reference
		}
	}
	return d
}

// recordTxnConflict opens a case for a callback whose txn id is already
// recorded for another order or amount, with both in its note, and puts it
// on the order's timeline when the order exists.
func recordTxnConflict(ctx context.Context, tx Tx, p, prev Payment, now time.Time, orderExists bool) error {
	if err := tx.InsertDiscrepancy(ctx, Discrepancy{OrderNo: p.OrderNo, TxnID: p.TxnID, Kind: DiscrepancyTxnConflict,
		AmountCents: p.AmountCents, CreatedAt: now, Status: "open",
		Note: fmt.Sprintf("txn id already recorded for order %s, %d cents", prev.OrderNo, prev.AmountCents)}); err != nil {
		return err
	}
	if !orderExists {
		return nil
	}
	return tx.AddEvent(ctx, Event{OrderNo: p.OrderNo, At: now, Kind: EventDiscrepancy, Detail: map[string]any{
		"txn_id": p.TxnID, "kind": DiscrepancyTxnConflict, "amount_cents": p.AmountCents,
		"other_order_no": prev.OrderNo, "other_amount_cents": prev.AmountCents}})
}

// paymentRefPattern is what a callback's order reference may look like
// (our order numbers and codes). Money for an unknown order is recorded
// under it, so it must be something a person can read back and search for;
// the provider's txn id is its own business and is stored as sent.
var paymentRefPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/+=-]*$`)

// HandlePayment applies a verified payment callback. One transaction records
// the payment (UNIQUE txn_id makes a repeat a no-op "duplicate") and runs the
// same conditional update as every cancel; a payment that loses to a cancel
// becomes a recorded discrepancy and never revives the order. The
// transaction is payJob.write in paybatch.go; callbacks that arrive together
// share one (payTogether, endbatch.go), each still deciding its own order's
// fate.
func (e *Engine) HandlePayment(ctx context.Context, p Payment) (PaymentResult, error) {
	switch {
	case len(p.OrderNo) > 40 || !paymentRefPattern.MatchString(p.OrderNo):
		return "", Invalidf("order_no is required: at most 40 letters, digits or . _ : / + = -")
	case p.TxnID == "" || len(p.TxnID) > 64 || !utf8.ValidString(p.TxnID) || strings.ContainsFunc(p.TxnID, unicode.IsControl):
		return "", Invalidf("txn_id is required: at most 64 bytes of text without control characters")
	case p.AmountCents <= 0:
		return "", Invalidf("amount_cents must be a positive integer")
	}
	now := e.clock.Now()
	if p.ReceivedAt.IsZero() {
		p.ReceivedAt = now
	}
	if p.PaidAt.IsZero() {
		p.PaidAt = now
	}
	j := &payJob{ctx: ctx, p: p, now: now}
	err := e.payer.do(ctx, j)
	if err != nil {
		return "", fmt.Errorf("payment %s for %s: %w", p.TxnID, p.OrderNo, err)
	}
	result, order, discKind := j.out.result, j.out.order, j.out.discKind
	ctx = context.WithoutCancel(ctx)
	if j.out.duplicate {
		e.metrics.Payments.WithLabelValues(string(PaymentDuplicate)).Inc()
		e.addEvent(ctx, Event{OrderNo: p.OrderNo, At: now, Kind: EventPaymentDuplicate, Detail: map[string]any{"txn_id": p.TxnID}})
		return PaymentDuplicate, nil
	}
	if discKind != "" {
		e.metrics.Discrepancies.WithLabelValues(discKind).Inc()
		e.log.WarnContext(ctx, "payment recorded as a discrepancy", "order_no", p.OrderNo, "txn_id", p.TxnID, "kind", discKind)
	}
	if j.out.conflict {
		e.metrics.Payments.WithLabelValues(DiscrepancyTxnConflict).Inc()
		return "", ErrTxnConflict
	}
	if j.out.mismatch {
		e.metrics.Payments.WithLabelValues(paymentAmountMismatch).Inc()
		return PaymentDiscrepancy, ErrAmountMismatch
	}
	e.metrics.Payments.WithLabelValues(string(result)).Inc()
	if result != PaymentApplied {
		return result, nil
	}
	e.metrics.OrdersEnded.WithLabelValues(StatusPaid.String(), "payment").Inc()
	if order.Source == OrderSourceWaitlist {
		e.metrics.WaitlistOffers.WithLabelValues(string(WaitAccepted)).Inc()
	}
	e.sell(ctx, order, "payment committed but marking seats sold failed; reconcile will fix them")
	return PaymentApplied, nil
}
