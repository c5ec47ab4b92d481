package store

import (
	"context"
	"strings"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// The multi-row writes of a batch of payment callbacks (core/paybatch.go):
// the callbacks that pay pending orders, in a handful of statements
// instead of four each. Like the placements' multi-row writes, they do not
// say which row broke a constraint; the engine then writes the batch one
// callback at a time.

// OrdersForUpdate reads the orders and locks their rows until the
// transaction ends (on SQLite the transaction already holds the write
// lock). Orders that do not exist are missing from the map.
func (t *tx) OrdersForUpdate(ctx context.Context, orderNos []string) (map[string]core.Order, error) {
	if len(orderNos) == 0 {
		return map[string]core.Order{}, nil
	}
	// ORDER BY: InnoDB locks the rows in the order it reads them, the
	// order-number order every batch of endings locks in.
	q, args, err := sqlx.In(`SELECT `+orderCols+` FROM order_info WHERE order_no IN (?) ORDER BY order_no`+t.d.forUpdate(), orderNos)
	if err != nil {
		return nil, dbErr(err, "lock %d orders", len(orderNos))
	}
	var rows []orderRow
	if err := t.x.SelectContext(ctx, &rows, t.x.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "lock %d orders", len(orderNos))
	}
	orders := make(map[string]core.Order, len(rows))
	for _, r := range rows {
		orders[r.OrderNo] = r.order()
	}
	return orders, nil
}

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
	args := make([]any, 0, 10*len(ps))
	for _, p := range ps {
		args = append(args, p.TxnID, p.OrderNo, p.AmountCents, ms(p.PaidAt), ms(p.ReceivedAt), paymentMethod(p),
			string(p.Tender), p.Reference, p.Actor, p.Result)
	}
	return insertRows(ctx, t.x, `INSERT INTO payment
 (txn_id, order_no, amount_cents, paid_at, received_at, method, tender, reference, actor, result) VALUES `,
		10, args, "insert %d payments", len(ps))
}

// PayOrders is TransitionPending(StatusPaid) for many orders in one
// UPDATE: each order_no of ts gets its own close time, actor and txn id,
// and only while pending. It returns how many orders it paid.
func (t *tx) PayOrders(ctx context.Context, ts map[string]core.Transition) (int, error) {
	if len(ts) == 0 {
		return 0, nil
	}
	var closedAt, actor, txn strings.Builder
	var cArgs, aArgs, tArgs, nos []any
	for no, tr := range ts {
		closedAt.WriteString(" WHEN ? THEN ?")
		actor.WriteString(" WHEN ? THEN ?")
		txn.WriteString(" WHEN ? THEN ?")
		cArgs = append(cArgs, no, ms(tr.At))
		aArgs = append(aArgs, no, tr.Actor)
		tArgs = append(tArgs, no, tr.TxnID)
		nos = append(nos, no)
	}
	q := `UPDATE order_info SET status = ?, cancel_reason = '',
 closed_at = CASE order_no` + closedAt.String() + ` END,
 cancel_actor = CASE order_no` + actor.String() + ` END,
 paid_txn_id = CASE order_no` + txn.String() + ` END
 WHERE status = 0 AND order_no IN (` + strings.TrimSuffix(strings.Repeat("?,", len(nos)), ",") + `)`
	args := append([]any{int(core.StatusPaid)}, cArgs...)
	args = append(append(append(args, aArgs...), tArgs...), nos...)
	res, err := t.x.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, dbErr(err, "pay %d orders", len(ts))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbErr(err, "pay %d orders: rows", len(ts))
	}
	return int(n), nil
}
