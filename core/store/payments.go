package store

import (
	"context"
	"fmt"

	"seatflow/core"
)

// InsertPayment records a payment callback; false when its txn_id was
// recorded before (UNIQUE txn_id), which leaves the transaction usable.
func (t *tx) InsertPayment(ctx context.Context, p core.Payment) (bool, error) {
	_, err := t.x.ExecContext(ctx,
		`INSERT INTO payment (txn_id, order_no, amount_cents, paid_at, received_at, method, tender, reference, actor, result, shift_id)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.TxnID, p.OrderNo, p.AmountCents, ms(p.PaidAt), ms(p.ReceivedAt), paymentMethod(p), string(p.Tender), p.Reference, p.Actor, p.Result,
		p.ShiftID)
	if isDuplicate(err) {
		return false, nil
	}
	if err != nil {
		return false, dbErr(err, "insert payment %s", p.TxnID)
	}
	return true, nil
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
	if err != nil {
		return t.noteOtherClaim(ctx, d)
	}
	return nil
}

// noteOtherClaim handles a case that already exists for d's txn id and
// kind: a true repeat (same order and amount) changes nothing, but a claim
// for another order or amount (the same txn id sent a third time, for other
// money) goes on the case's history, so no claimed money is left unseen.
func (t *tx) noteOtherClaim(ctx context.Context, d core.Discrepancy) error {
	var c struct {
		ID          int64  `db:"id"`
		OrderNo     string `db:"order_no"`
		AmountCents int64  `db:"amount_cents"`
		State       string `db:"state"`
	}
	if err := t.x.GetContext(ctx, &c, `SELECT id, order_no, amount_cents, state FROM discrepancy
 WHERE txn_id = ? AND kind = ?`, d.TxnID, d.Kind); err != nil {
		return dbErr(err, "discrepancy %s/%s", d.TxnID, d.Kind)
	}
	if c.OrderNo == d.OrderNo && c.AmountCents == d.AmountCents {
		return nil
	}
	note := fmt.Sprintf("also claimed for order %s, %d cents", d.OrderNo, d.AmountCents)
	if d.Note != "" {
		note += "; " + d.Note
	}
	if _, err := t.x.ExecContext(ctx, `INSERT INTO discrepancy_event
 (discrepancy_id, at, staff, action, from_state, to_state, note) VALUES (?, ?, ?, 'note', ?, ?, ?)`,
		c.ID, ms(d.CreatedAt), core.ActorSystem, c.State, c.State, note); err != nil {
		return dbErr(err, "note another claim on discrepancy %d", c.ID)
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
	ShiftID     int64  `db:"shift_id"`
}

// PaymentByTxn implements core.Tx.
func (t *tx) PaymentByTxn(ctx context.Context, txnID string) (core.Payment, error) {
	var r paymentRow
	if err := t.x.GetContext(ctx, &r, `SELECT `+paymentCols+` FROM payment WHERE txn_id = ?`, txnID); err != nil {
		return core.Payment{}, dbErr(err, "payment %s", txnID)
	}
	return r.payment(), nil
}

const paymentCols = `txn_id, order_no, amount_cents, paid_at, received_at, result, method, tender, reference, actor, shift_id`

func (r paymentRow) payment() core.Payment {
	return core.Payment{TxnID: r.TxnID, OrderNo: r.OrderNo, AmountCents: r.AmountCents, PaidAt: fromMS(r.PaidAt),
		ReceivedAt: fromMS(r.ReceivedAt), Result: r.Result, Method: r.Method, Tender: core.Tender(r.Tender),
		Reference: r.Reference, Actor: r.Actor, ShiftID: r.ShiftID}
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

// paymentChecks find payments that are neither applied, a duplicate nor a
// recorded discrepancy (DESIGN.md's payment invariant), one query each,
// each naming what is wrong. A duplicate writes no row, so every row must
// have done one of the others, or paid an exchange's difference
// (core/exchange.go) on a paid order.
var paymentChecks = []struct{ what, query string }{
	{"payment %s is marked paid but its order is not paid by it",
		`SELECT p.txn_id FROM payment p LEFT JOIN order_info o ON o.order_no = p.order_no
 WHERE p.result = 'paid' AND (o.order_no IS NULL OR o.paid_txn_id <> p.txn_id OR o.status NOT IN (1, 3))`},
	{"payment %s is a discrepancy with no discrepancy row",
		`SELECT p.txn_id FROM payment p WHERE p.result IN ('discrepancy', 'amount_mismatch', 'unknown_order')
 AND NOT EXISTS (SELECT 1 FROM discrepancy d WHERE d.txn_id = p.txn_id)`},
	{"payment %s was neither applied nor recorded as a discrepancy",
		`SELECT p.txn_id FROM payment p WHERE p.result NOT IN ('paid', 'discrepancy', 'amount_mismatch', 'unknown_order', 'exchange')`},
	{"payment %s paid an exchange of an order that was never paid",
		`SELECT p.txn_id FROM payment p LEFT JOIN order_info o ON o.order_no = p.order_no
 WHERE p.result = 'exchange' AND (o.order_no IS NULL OR o.status NOT IN (1, 3))`},
	{"order %s is paid by a txn with no applied payment row",
		`SELECT o.order_no FROM order_info o LEFT JOIN payment p ON p.txn_id = o.paid_txn_id
 WHERE o.status IN (1, 3) AND (p.txn_id IS NULL OR p.result <> 'paid' OR p.order_no <> o.order_no)`},
}

// PaymentViolations lists up to limit breaches of the payment invariant.
func (db *DB) PaymentViolations(ctx context.Context, limit int) ([]string, error) {
	var out []string
	for _, c := range paymentChecks {
		var refs []string
		if err := db.r.SelectContext(ctx, &refs, c.query+` ORDER BY 1 LIMIT ?`, limit); err != nil {
			return nil, dbErr(err, "payment invariant")
		}
		for _, r := range refs {
			out = append(out, fmt.Sprintf(c.what, r))
		}
	}
	return out, nil
}

// MoneyRows counts the rows of every table that records money or its
// trouble (payment, discrepancy, refund): a check that must change nothing
// compares them before and after.
func (db *DB) MoneyRows(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, table := range []string{"payment", "discrepancy", "refund"} {
		var n int
		if err := db.r.GetContext(ctx, &n, `SELECT COUNT(*) FROM `+table); err != nil {
			return nil, dbErr(err, "count %s", table)
		}
		out[table] = n
	}
	return out, nil
}
