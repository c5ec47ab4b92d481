package store

import (
	"context"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// The payments' part of the multi-row writes of a batch of payment
// callbacks (core/paybatch.go; the orders' part is in orders_batch.go).
// Like the placements' multi-row writes, they do not say which row broke a
// constraint; the engine then writes the batch one callback at a time.

// PaymentsByTxns returns the payments recorded under any of txnIDs, by txn id.
func (t *tx) PaymentsByTxns(ctx context.Context, txnIDs []string) (map[string]core.Payment, error) {
	if len(txnIDs) == 0 {
		return map[string]core.Payment{}, nil
	}
	q, args, err := sqlx.In(`SELECT `+paymentCols+` FROM payment WHERE txn_id IN (?)`, txnIDs)
	if err != nil {
		return nil, dbErr(err, "payments of %d txn ids", len(txnIDs))
	}
	var rows []paymentRow
	if err := t.x.SelectContext(ctx, &rows, t.x.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "payments of %d txn ids", len(txnIDs))
	}
	pays := make(map[string]core.Payment, len(rows))
	for _, r := range rows {
		pays[r.TxnID] = r.payment()
	}
	return pays, nil
}

// InsertPayments records many payments, each with its result; a txn id
// recorded before fails the whole call.
func (t *tx) InsertPayments(ctx context.Context, ps []core.Payment) error {
	args := make([]any, 0, 11*len(ps))
	for _, p := range ps {
		args = append(args, p.TxnID, p.OrderNo, p.AmountCents, ms(p.PaidAt), ms(p.ReceivedAt), paymentMethod(p),
			string(p.Tender), p.Reference, p.Actor, p.Result, p.ShiftID)
	}
	return insertRows(ctx, t.x, `INSERT INTO payment
 (txn_id, order_no, amount_cents, paid_at, received_at, method, tender, reference, actor, result, shift_id) VALUES `,
		11, args, "insert %d payments", len(ps))
}
