package store

import (
	"context"

	"seatflow/core"
)

// InsertPayment records a payment callback; false when its txn_id was
// recorded before (UNIQUE txn_id), which leaves the transaction usable.
func (t *tx) InsertPayment(ctx context.Context, p core.Payment) (bool, error) {
	_, err := t.x.ExecContext(ctx,
		`INSERT INTO payment (txn_id, order_no, amount_cents, paid_at, received_at, method, tender, reference, actor)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.TxnID, p.OrderNo, p.AmountCents, ms(p.PaidAt), ms(p.ReceivedAt), paymentMethod(p), string(p.Tender), p.Reference, p.Actor)
	if isDuplicate(err) {
		return false, nil
	}
	if err != nil {
		return false, dbErr(err, "insert payment %s", p.TxnID)
	}
	return true, nil
}

// SetPaymentResult records what the payment did (a core.PaymentResult value).
func (t *tx) SetPaymentResult(ctx context.Context, txnID string, result string) error {
	if _, err := t.x.ExecContext(ctx, `UPDATE payment SET result = ? WHERE txn_id = ?`, result, txnID); err != nil {
		return dbErr(err, "set payment %s result", txnID)
	}
	return nil
}

// InsertDiscrepancy records money that could not be applied. A second record
// of the same (txn_id, kind) is ignored: it describes the same money. Status
// defaults to "open".
func (t *tx) InsertDiscrepancy(ctx context.Context, d core.Discrepancy) error {
	status := d.Status
	if status == "" {
		status = DiscrepancyOpen
	}
	_, err := t.x.ExecContext(ctx, `INSERT INTO discrepancy
 (order_no, txn_id, kind, amount_cents, created_at, status, resolved_at, resolved_by, note)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.OrderNo, d.TxnID, d.Kind, d.AmountCents, ms(d.CreatedAt), status, ms(d.ResolvedAt), d.ResolvedBy, d.Note)
	if err != nil && !isDuplicate(err) {
		return dbErr(err, "insert discrepancy %s/%s", d.TxnID, d.Kind)
	}
	return nil
}

func paymentMethod(p core.Payment) string {
	if p.Method == "" {
		return core.PaymentMethodCallback
	}
	return p.Method
}

type paymentRow struct {
	TxnID       string `db:"txn_id"`
	OrderNo     string `db:"order_no"`
	AmountCents int64  `db:"amount_cents"`
	PaidAt      int64  `db:"paid_at"`
	ReceivedAt  int64  `db:"received_at"`
	Result      string `db:"result"`
	Method      string `db:"method"`
	Tender      string `db:"tender"`
	Reference   string `db:"reference"`
	Actor       string `db:"actor"`
}

// PaymentByTxn implements core.Tx.
func (t *tx) PaymentByTxn(ctx context.Context, txnID string) (core.Payment, error) {
	var r paymentRow
	if err := t.x.GetContext(ctx, &r, `SELECT `+paymentCols+` FROM payment WHERE txn_id = ?`, txnID); err != nil {
		return core.Payment{}, dbErr(err, "payment %s", txnID)
	}
	return r.payment(), nil
}

const paymentCols = `txn_id, order_no, amount_cents, paid_at, received_at, result, method, tender, reference, actor`

func (r paymentRow) payment() core.Payment {
	return core.Payment{TxnID: r.TxnID, OrderNo: r.OrderNo, AmountCents: r.AmountCents, PaidAt: fromMS(r.PaidAt),
		ReceivedAt: fromMS(r.ReceivedAt), Result: r.Result, Method: r.Method, Tender: core.Tender(r.Tender),
		Reference: r.Reference, Actor: r.Actor}
}

// OrderPayments returns every payment recorded for the order, applied or
// not, oldest first (idx_order_no).
func (db *DB) OrderPayments(ctx context.Context, orderNo string) ([]core.Payment, error) {
	var rows []paymentRow
	if err := db.r.SelectContext(ctx, &rows, `SELECT `+paymentCols+` FROM payment WHERE order_no = ? ORDER BY id`, orderNo); err != nil {
		return nil, dbErr(err, "payments of %s", orderNo)
	}
	out := make([]core.Payment, len(rows))
	for i, r := range rows {
		out[i] = r.payment()
	}
	return out, nil
}
