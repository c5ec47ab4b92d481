package store

import (
	"context"
	"time"

	"seatflow/core"
)

// The approvals inbox's reads: refund requests and write-off requests
// waiting for a second person, and a requester's own refund requests with
// their outcome. Each is a range of idx_state_created (refund and
// discrepancy), where the waiting rows are few.

// ApprovalsWaiting counts the refund requests and write-off requests
// waiting for a decision that username did not ask for: the approvals
// inbox's count in the navigation, one statement on every page an approver
// opens.
func (db *DB) ApprovalsWaiting(ctx context.Context, username string) (int, error) {
	var n int
	err := db.r.GetContext(ctx, &n, `SELECT
 (SELECT COUNT(*) FROM refund WHERE state = ? AND requested_by <> ?) +
 (SELECT COUNT(*) FROM discrepancy WHERE state = ? AND owner <> ?)`,
		string(core.RefundRequested), core.ActorStaffPrefix+username, string(core.CaseWriteOffRequested), username)
	if err != nil {
		return 0, dbErr(err, "approvals waiting")
	}
	return n, nil
}

// RefundOfOrder is a refund row with what a list shows of its order: the
// customer's code and the currency of its show.
type RefundOfOrder struct {
	core.Refund
	Code     string
	Currency string
}

const refundOfOrderSQL = `SELECT r.id, r.order_no, r.amount_cents, r.reason, r.reference, r.actor, r.requested_by,
 r.approved_by, r.state, r.note, r.created_at, r.decided_at, o.code, s.currency
 FROM refund r JOIN order_info o ON o.order_no = r.order_no JOIN show_info s ON s.id = o.show_id`

func (db *DB) refundsOfOrders(ctx context.Context, what, q string, args ...any) ([]RefundOfOrder, error) {
	var rs []struct {
		refundRow
		Code     string `db:"code"`
		Currency string `db:"currency"`
	}
	if err := db.r.SelectContext(ctx, &rs, refundOfOrderSQL+q, args...); err != nil {
		return nil, dbErr(err, "%s", what)
	}
	out := make([]RefundOfOrder, len(rs))
	for i, r := range rs {
		out[i] = RefundOfOrder{Refund: r.refund(), Code: r.Code, Currency: r.Currency}
	}
	return out, nil
}

// RefundRequestsWaiting lists the refund requests waiting for approval,
// oldest first: the longest-waiting customer is the most urgent.
func (db *DB) RefundRequestsWaiting(ctx context.Context, limit int) ([]RefundOfOrder, error) {
	return db.refundsOfOrders(ctx, "refund requests waiting",
		` WHERE r.state = ? ORDER BY r.created_at, r.id LIMIT ?`, string(core.RefundRequested), limit)
}

// RefundRequestsBy lists the refund requests actor asked for since, newest
// first, whether waiting or decided (by whom and when is in the row). A
// refund actor ran in one step was no request and is left out.
func (db *DB) RefundRequestsBy(ctx context.Context, actor string, since time.Time, limit int) ([]RefundOfOrder, error) {
	return db.refundsOfOrders(ctx, "refund requests of "+actor,
		` WHERE r.state IN (?, ?, ?, ?) AND r.created_at >= ? AND r.requested_by = ?
 AND NOT (r.state = ? AND r.approved_by = r.requested_by)
 ORDER BY r.created_at DESC, r.id DESC LIMIT ?`,
		string(core.RefundRequested), string(core.RefundDone), string(core.RefundRejected), string(core.RefundSuperseded),
		ms(since), actor, string(core.RefundDone), limit)
}

// WriteOffRequest is a write-off staff asked for and what became of it.
type WriteOffRequest struct {
	CaseID      int64
	OrderNo     string
	AmountCents int64
	Currency    string // "" for a case without an order
	AskedAt     time.Time
	// The decision: who moved the case on from write_off_requested, when,
	// and to what (written_off, or open: sent back); zero while waiting.
	DecidedBy string
	DecidedAt time.Time
	DecidedTo core.CaseState
}

// WriteOffRequestsBy lists the write-offs staff asked for since, newest
// first, each with the decision that followed the request. Read from the
// case history, which stays small: discrepancies are rare.
func (db *DB) WriteOffRequestsBy(ctx context.Context, staff string, since time.Time, limit int) ([]WriteOffRequest, error) {
	var rs []struct {
		CaseID    int64  `db:"discrepancy_id"`
		OrderNo   string `db:"order_no"`
		Amount    int64  `db:"amount_cents"`
		Currency  string `db:"currency"`
		AskedAt   int64  `db:"at"`
		DecidedBy string `db:"decided_by"`
		DecidedAt int64  `db:"decided_at"`
		DecidedTo string `db:"decided_to"`
	}
	err := db.r.SelectContext(ctx, &rs, `SELECT r.discrepancy_id, d.order_no, d.amount_cents, r.at,
 COALESCE((SELECT s.currency FROM order_info o JOIN show_info s ON s.id = o.show_id WHERE o.order_no = d.order_no), '') AS currency,
 COALESCE(x.staff, '') AS decided_by, COALESCE(x.at, 0) AS decided_at, COALESCE(x.to_state, '') AS decided_to
 FROM discrepancy_event r JOIN discrepancy d ON d.id = r.discrepancy_id
 LEFT JOIN discrepancy_event x ON x.id = (SELECT MIN(n.id) FROM discrepancy_event n
  WHERE n.discrepancy_id = r.discrepancy_id AND n.id > r.id AND n.action = ? AND n.from_state = ?)
 WHERE r.staff = ? AND r.action = ? AND r.to_state = ? AND r.at >= ?
 ORDER BY r.at DESC, r.id DESC LIMIT ?`,
		core.CaseActionMove, string(core.CaseWriteOffRequested),
		staff, core.CaseActionMove, string(core.CaseWriteOffRequested), ms(since), limit)
	if err != nil {
		return nil, dbErr(err, "write-off requests of %s", staff)
	}
	out := make([]WriteOffRequest, len(rs))
	for i, r := range rs {
		out[i] = WriteOffRequest{CaseID: r.CaseID, OrderNo: r.OrderNo, AmountCents: r.Amount, Currency: r.Currency,
			AskedAt: fromMS(r.AskedAt), DecidedBy: r.DecidedBy, DecidedTo: core.CaseState(r.DecidedTo)}
		if r.DecidedAt != 0 {
			out[i].DecidedAt = fromMS(r.DecidedAt)
		}
	}
	return out, nil
}
