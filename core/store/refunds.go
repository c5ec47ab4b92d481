package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

var (
	_ core.RefundStore = (*DB)(nil)
	_ core.RefundTx    = (*tx)(nil)
)

// InRefundTx implements core.RefundStore on InTx (the same retries): the
// refund's writes run on the same *tx as the engine's.
func (db *DB) InRefundTx(ctx context.Context, fn func(core.RefundTx) error) error {
	return db.InTx(ctx, func(t core.Tx) error { return fn(t.(*tx)) })
}

// TransitionPaid is the refund's conditional update: true when this caller
// moved the order from paid to refunded. closed_at keeps the payment's time
// (when the order left pending); the refund row has the refund's.
func (t *tx) TransitionPaid(ctx context.Context, orderNo string) (bool, error) {
	res, err := t.x.ExecContext(ctx, `UPDATE order_info SET status = ? WHERE order_no = ? AND status = ?`,
		int(core.StatusRefunded), orderNo, int(core.StatusPaid))
	if err != nil {
		return false, dbErr(err, "refund %s", orderNo)
	}
	return oneRow(res, "refund "+orderNo)
}

const refundCols = `id, order_no, amount_cents, reason, reference, actor, requested_by, approved_by, state, note,
 created_at, decided_at, tender, shift_id`

type refundRow struct {
	ID          int64  `db:"id"`
	OrderNo     string `db:"order_no"`
	AmountCents int64  `db:"amount_cents"`
	Reason      string `db:"reason"`
	Reference   string `db:"reference"`
	Actor       string `db:"actor"`
	RequestedBy string `db:"requested_by"`
	ApprovedBy  string `db:"approved_by"`
	State       string `db:"state"`
	Note        string `db:"note"`
	CreatedAt   int64  `db:"created_at"`
	DecidedAt   int64  `db:"decided_at"`
	Tender      string `db:"tender"`
	ShiftID     int64  `db:"shift_id"`
}

func (r refundRow) refund() core.Refund {
	return core.Refund{ID: r.ID, OrderNo: r.OrderNo, AmountCents: r.AmountCents, Reason: r.Reason,
		Reference: r.Reference, Actor: r.Actor, RequestedBy: r.RequestedBy, ApprovedBy: r.ApprovedBy,
		State: core.RefundState(r.State), Note: r.Note, CreatedAt: fromMS(r.CreatedAt), DecidedAt: fromMS(r.DecidedAt),
		Tender: core.Tender(r.Tender), ShiftID: r.ShiftID}
}

func refunds(rs []refundRow) []core.Refund {
	out := make([]core.Refund, len(rs))
	for i, r := range rs {
		out[i] = r.refund()
	}
	return out
}

// InsertRefund writes a refund row and returns its id.
func (t *tx) InsertRefund(ctx context.Context, r core.Refund) (int64, error) {
	res, err := t.x.ExecContext(ctx, `INSERT INTO refund
 (order_no, amount_cents, reason, reference, actor, requested_by, approved_by, state, note, created_at, decided_at,
 tender, shift_id)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.OrderNo, r.AmountCents, r.Reason, r.Reference, r.Actor, r.RequestedBy, r.ApprovedBy, string(r.State),
		r.Note, ms(r.CreatedAt), ms(r.DecidedAt), string(r.Tender), r.ShiftID)
	if err != nil {
		return 0, dbErr(err, "insert refund of %s", r.OrderNo)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, dbErr(err, "insert refund of %s: id", r.OrderNo)
	}
	return id, nil
}

// OpenRefundRequest returns the order's refund request still waiting for
// approval (idx_order_no). The caller holds the order row's lock, so no
// other request can appear before it commits.
func (t *tx) OpenRefundRequest(ctx context.Context, orderNo string) (core.Refund, bool, error) {
	var r refundRow
	err := sqlx.GetContext(ctx, t.x, &r, `SELECT `+refundCols+` FROM refund WHERE order_no = ? AND state = ? ORDER BY id LIMIT 1`,
		orderNo, string(core.RefundRequested))
	if errors.Is(err, sql.ErrNoRows) {
		return core.Refund{}, false, nil
	}
	if err != nil {
		return core.Refund{}, false, dbErr(err, "open refund request of %s", orderNo)
	}
	return r.refund(), true, nil
}

// DecideRefund moves a requested row to r.State, only while still requested.
func (t *tx) DecideRefund(ctx context.Context, r core.Refund) (bool, error) {
	res, err := t.x.ExecContext(ctx, `UPDATE refund SET state = ?, actor = ?, approved_by = ?, decided_at = ?, note = ?,
 tender = ?, shift_id = ? WHERE id = ? AND state = ?`, string(r.State), r.Actor, r.ApprovedBy, ms(r.DecidedAt), r.Note,
		string(r.Tender), r.ShiftID, r.ID, string(core.RefundRequested))
	if err != nil {
		return false, dbErr(err, "decide refund %d", r.ID)
	}
	return oneRow(res, fmt.Sprintf("decide refund %d", r.ID))
}

// Refund returns one refund row by id.
func (db *DB) Refund(ctx context.Context, id int64) (core.Refund, error) {
	var r refundRow
	err := db.r.GetContext(ctx, &r, `SELECT `+refundCols+` FROM refund WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return core.Refund{}, fmt.Errorf("refund %d: %w", id, core.ErrRefundNotFound)
	}
	if err != nil {
		return core.Refund{}, dbErr(err, "refund %d", id)
	}
	return r.refund(), nil
}

// RefundsByState lists refund rows in a state, oldest first (idx_state_created).
func (db *DB) RefundsByState(ctx context.Context, state core.RefundState, limit int) ([]core.Refund, error) {
	var rs []refundRow
	err := db.r.SelectContext(ctx, &rs, `SELECT `+refundCols+` FROM refund WHERE state = ? ORDER BY created_at, id LIMIT ?`,
		string(state), limit)
	if err != nil {
		return nil, dbErr(err, "refunds %s", state)
	}
	return refunds(rs), nil
}

// OrderRefunds lists an order's refund rows, oldest first (idx_order_no).
func (db *DB) OrderRefunds(ctx context.Context, orderNo string) ([]core.Refund, error) {
	var rs []refundRow
	if err := db.r.SelectContext(ctx, &rs, `SELECT `+refundCols+` FROM refund WHERE order_no = ? ORDER BY id`, orderNo); err != nil {
		return nil, dbErr(err, "refunds of %s", orderNo)
	}
	return refunds(rs), nil
}

const refundedAtSQL = `SELECT order_no, decided_at FROM refund WHERE order_no IN (?) AND state = ?`

// RefundedAt returns when each of orderNos that was refunded was refunded,
// the latest of its partial refunds too (idx_order_no), for reconcile's
// grace period; callers pass at most a page.
func (db *DB) RefundedAt(ctx context.Context, orderNos []string) (map[string]time.Time, error) {
	out := make(map[string]time.Time, len(orderNos))
	if len(orderNos) == 0 {
		return out, nil
	}
	q, args, err := sqlx.In(refundedAtSQL, orderNos, string(core.RefundDone))
	if err != nil {
		return nil, fmt.Errorf("store: refund times: %w", err)
	}
	var rs []struct {
		OrderNo   string `db:"order_no"`
		DecidedAt int64  `db:"decided_at"`
	}
	if err := db.r.SelectContext(ctx, &rs, db.r.Rebind(q), args...); err != nil {
		return nil, fmt.Errorf("store: refund times: %w", err)
	}
	for _, r := range rs {
		if at := fromMS(r.DecidedAt); at.After(out[r.OrderNo]) {
			out[r.OrderNo] = at
		}
	}
	return out, nil
}
