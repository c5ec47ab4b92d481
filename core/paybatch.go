package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// payJob is one payment callback on its way into the DB (HandlePayment).
type payJob struct {
	ctx context.Context
	p   Payment
	now time.Time
	out payOutcome
}

// payOutcome is what a payment did, for HandlePayment to answer with after
// the commit.
type payOutcome struct {
	result              PaymentResult
	order               Order
	discKind            string // the case it opened, if any
	mismatch, duplicate bool
	conflict            bool   // its txn id names other money
	recorded            string // the result written with its payment row; "": no row written
}

func (j *payJob) orderNo() string         { return j.p.OrderNo }
func (j *payJob) caller() context.Context { return j.ctx }

// write applies the payment in tx, one statement at a time.
func (j *payJob) write(ctx context.Context, tx Tx) error {
	j.out = payOutcome{}
	o, p, now := &j.out, j.p, j.now
	// The order row first, as in every cancel (one lock order, no
	// deadlock). Money for an unknown order is recorded all the same.
	var err error
	o.order, err = tx.OrderForUpdate(ctx, p.OrderNo)
	unknown := errors.Is(err, ErrOrderNotFound)
	if err != nil && !unknown {
		return err
	}
	if !unknown && o.order.OrderNo != p.OrderNo {
		// Found only by the collation (MariaDB's ignores case): money for
		// a number we never issued, as on SQLite.
		unknown, o.order = true, Order{}
	}
	// What the payment does is known once the order row is locked, so
	// its result goes in with the payment row, not in an UPDATE after.
	rec := p
	switch {
	case unknown:
		rec.Result = DiscrepancyUnknownOrder
	case p.AmountCents != o.order.AmountCents:
		rec.Result = paymentAmountMismatch
	case o.order.Status == StatusPending:
		rec.Result = string(PaymentApplied)
	default:
		rec.Result = string(PaymentDiscrepancy)
	}
	if rec.ShiftID, err = counterShift(ctx, tx, p); err != nil {
		return err
	}
	inserted, err := tx.InsertPayment(ctx, rec)
	if err != nil {
		return err
	}
	if !inserted {
		prev, err := tx.PaymentByTxn(ctx, p.TxnID)
		if err != nil {
			return err
		}
		if prev.OrderNo == p.OrderNo && prev.AmountCents == p.AmountCents {
			o.duplicate = true
			return nil
		}
		// The txn id names other money: not a repeat, so never
		// swallowed. The payment row keeps the first; the case keeps this one.
		o.conflict, o.discKind = true, DiscrepancyTxnConflict
		return recordTxnConflict(ctx, tx, p, prev, now, !unknown)
	}
	o.recorded = rec.Result
	if unknown {
		o.result, o.discKind = PaymentDiscrepancy, DiscrepancyUnknownOrder
		return tx.InsertDiscrepancy(ctx, Discrepancy{OrderNo: p.OrderNo, TxnID: p.TxnID, Kind: o.discKind,
			AmountCents: p.AmountCents, CreatedAt: now, Status: "open"})
	}
	won := false
	if p.AmountCents != o.order.AmountCents {
		o.mismatch = true
		o.discKind = DiscrepancyAmountMismatch
	} else if won, err = tx.TransitionPending(ctx, p.OrderNo, StatusPaid, Transition{At: now, TxnID: p.TxnID, Actor: p.actor()}); err != nil {
		return err
	}
	if won != (rec.Result == string(PaymentApplied)) {
		// The row is locked: a pending order cannot be lost to anyone.
		return fmt.Errorf("payment %s: order %s was %s under its row lock, the update won=%v", p.TxnID, p.OrderNo, o.order.Status, won)
	}
	switch {
	case won:
		o.result = PaymentApplied
		o.order.Status, o.order.PaidTxnID, o.order.ClosedAt = StatusPaid, p.TxnID, now
		return tx.AddEvent(ctx, Event{OrderNo: p.OrderNo, At: now, Kind: EventPaid, Detail: p.detail()})
	case !o.mismatch && o.order.Status == StatusCancelled:
		o.discKind = DiscrepancyPaidAfterCancel
	case !o.mismatch && o.order.Status == StatusRefunded:
		o.discKind = DiscrepancyPaidAfterRefund
	case !o.mismatch:
		o.discKind = DiscrepancySecondPayment
	}
	o.result = PaymentDiscrepancy
	if err := tx.InsertDiscrepancy(ctx, Discrepancy{OrderNo: p.OrderNo, TxnID: p.TxnID, Kind: o.discKind,
		AmountCents: p.AmountCents, CreatedAt: now, Status: "open"}); err != nil {
		return err
	}
	kind := EventDiscrepancy
	if o.mismatch {
		kind = EventAmountMismatch
	}
	return tx.AddEvent(ctx, Event{OrderNo: p.OrderNo, At: now, Kind: kind, Detail: map[string]any{
		"txn_id": p.TxnID, "kind": o.discKind, "amount_cents": p.AmountCents,
		"order_amount_cents": o.order.AmountCents, "order_status": o.order.Status.String()}})
}

// landed: the payment is in the database when its txn id's row is this
// callback's (order, amount, time received) with the result it wrote. A
// repeat wrote no row; a txn id naming other money wrote only its case.
func (j *payJob) landed(ctx context.Context, tx Tx) (wrote, landed bool, err error) {
	if j.out.recorded == "" {
		return false, false, nil
	}
	if _, err := tx.OrderForUpdate(ctx, j.p.OrderNo); err != nil && !errors.Is(err, ErrOrderNotFound) {
		return true, false, err
	}
	pays, err := tx.PaymentsByTxns(ctx, []string{j.p.TxnID})
	if err != nil {
		return true, false, err
	}
	prev, ok := pays[j.p.TxnID]
	return true, ok && prev.OrderNo == j.p.OrderNo && prev.AmountCents == j.p.AmountCents &&
		prev.Result == j.out.recorded && prev.ReceivedAt.UnixMilli() == j.p.ReceivedAt.UnixMilli(), nil
}

// payTogether writes a batch of callbacks in five statements whatever its
// size, when each callback either pays a pending order of the same amount
// or repeats a callback recorded before: the orders locked with one read,
// the recorded txn ids read, the payments inserted, the orders paid and
// their events inserted, each with one multi-row statement. Anything else
// in the batch (an unknown order, another amount, an order no longer
// pending, a txn id naming other money, two callbacks of one order or one
// txn id) has it written callback by callback instead (false), in the same
// transaction, where each case is recorded as it is alone.
func payTogether(ctx context.Context, tx Tx, jobs []*payJob) (bool, error) {
	nos, txns := make([]string, len(jobs)), make([]string, len(jobs))
	seen := make(map[string]bool, 2*len(jobs))
	for i, j := range jobs {
		// A counter payment reads its till shift: written alone.
		if seen["o:"+j.p.OrderNo] || seen["t:"+j.p.TxnID] || j.p.Method == PaymentMethodCounter {
			return false, nil
		}
		seen["o:"+j.p.OrderNo], seen["t:"+j.p.TxnID] = true, true
		nos[i], txns[i] = j.p.OrderNo, j.p.TxnID
	}
	orders, err := tx.OrdersForUpdate(ctx, nos)
	if err != nil {
		return false, err
	}
	recorded, err := tx.PaymentsByTxns(ctx, txns)
	if err != nil {
		return false, err
	}
	var (
		pays   []Payment
		paid   = make(map[string]Transition, len(jobs))
		events []Event
	)
	for _, j := range jobs {
		p := j.p
		o, found := orders[p.OrderNo]
		if prev, ok := recorded[p.TxnID]; ok {
			if prev.OrderNo != p.OrderNo || prev.AmountCents != p.AmountCents {
				return false, nil
			}
			j.out = payOutcome{duplicate: true, order: o}
			continue
		}
		if !found || o.Status != StatusPending || o.AmountCents != p.AmountCents {
			return false, nil
		}
		rec := p
		rec.Result = string(PaymentApplied)
		pays = append(pays, rec)
		paid[p.OrderNo] = Transition{At: j.now, TxnID: p.TxnID, Actor: p.actor()}
		events = append(events, Event{OrderNo: p.OrderNo, At: j.now, Kind: EventPaid, Detail: p.detail()})
		o.Status, o.PaidTxnID, o.ClosedAt = StatusPaid, p.TxnID, j.now
		j.out = payOutcome{result: PaymentApplied, order: o, recorded: rec.Result}
	}
	if len(pays) == 0 {
		return true, nil
	}
	if err := tx.InsertPayments(ctx, pays); err != nil {
		return false, err
	}
	if n, err := tx.TransitionPendings(ctx, StatusPaid, paid); err != nil {
		return false, err
	} else if n != len(paid) {
		// The rows are locked: a pending order cannot be lost to anyone.
		return false, fmt.Errorf("payments: %d of %d pending orders paid under their row locks", n, len(paid))
	}
	return true, tx.AddEvents(ctx, events)
}
