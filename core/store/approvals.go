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
