package store

import (
	"context"
	"strings"
	"time"

	"seatflow/core"
)

// Queries of the console and reconcile. Each names the index it relies on.

// PendingQuery filters and pages PendingOrders.
type PendingQuery struct {
	Search string // substring of the order no; empty matches all
	ShowID int64  // 0: any show
	UserID int64  // 0: any user
	Sort   string // "expire" (default): soonest expiry first; "created": newest first
	Limit  int    // default 50, at most 500
	Offset int
	// ExpireFrom and ExpireTo bound expire_at (from inclusive, to
	// exclusive); zero: unbounded. The dashboard's holds expiring soon.
	ExpireFrom, ExpireTo time.Time
}

// PendingOrders returns one page of pending orders, with their SeatIDs, and
// how many match in all. Range on idx_status_expire (status = 0).
func (db *DB) PendingOrders(ctx context.Context, q PendingQuery) ([]core.Order, int, error) {
	var order string
	switch q.Sort {
	case "", "expire":
		order = "expire_at, order_no"
	case "created":
		order = "created_at DESC, order_no"
	default:
		return nil, 0, core.Invalidf("unknown sort %q (want expire or created)", q.Sort)
	}
	limit, offset, err := page(q.Limit, q.Offset)
	if err != nil {
		return nil, 0, err
	}
	where := []string{"status = 0"}
	var args []any
	if q.Search != "" {
		where = append(where, `order_no LIKE ? ESCAPE '!'`)
		args = append(args, "%"+escapeLike(q.Search)+"%")
	}
	if q.ShowID != 0 {
		where = append(where, "show_id = ?")
		args = append(args, q.ShowID)
	}
	if q.UserID != 0 {
		where = append(where, "user_id = ?")
		args = append(args, q.UserID)
	}
	if !q.ExpireFrom.IsZero() {
		where = append(where, "expire_at >= ?")
		args = append(args, ms(q.ExpireFrom))
	}
	if !q.ExpireTo.IsZero() {
		where = append(where, "expire_at < ?")
		args = append(args, ms(q.ExpireTo))
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := db.r.GetContext(ctx, &total, `SELECT COUNT(*) FROM order_info WHERE `+cond, args...); err != nil {
		return nil, 0, dbErr(err, "count pending orders")
	}
	var rs []orderRow
	err = db.r.SelectContext(ctx, &rs, `SELECT `+orderCols+` FROM order_info WHERE `+cond+
		` ORDER BY `+order+` LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, dbErr(err, "pending orders")
	}
	return orderRows(rs), total, nil
}

// ExpiredPending returns up to limit (default 100) orders still pending at
// or after their expiry, oldest expiry first: the reconcile sweep. Range on
// idx_status_expire.
func (db *DB) ExpiredPending(ctx context.Context, now time.Time, limit int) ([]core.Order, error) {
	if limit <= 0 {
		limit = 100
	}
	var rs []orderRow
	err := db.r.SelectContext(ctx, &rs, expiredPendingSQL, ms(now), limit)
	if err != nil {
		return nil, dbErr(err, "expired pending orders")
	}
	return orderRows(rs), nil
}

const expiredPendingSQL = `SELECT ` + orderCols + ` FROM order_info WHERE status = 0 AND expire_at <= ? ORDER BY expire_at LIMIT ?`

// Discrepancy states.
const (
	DiscrepancyOpen     = "open"
	DiscrepancyResolved = "resolved"
)

// Discrepancies returns one page of discrepancies in a state ("" for all),
// newest first. With a state: idx_status_created.
func (db *DB) Discrepancies(ctx context.Context, status string, limit, offset int) ([]core.Discrepancy, error) {
	limit, offset, err := page(limit, offset)
	if err != nil {
		return nil, err
	}
	where, args := "", []any{}
	switch status {
	case "":
	case DiscrepancyOpen, DiscrepancyResolved:
		where, args = "WHERE status = ? ", append(args, status)
	default:
		return nil, core.Invalidf("unknown discrepancy status %q", status)
	}
	var rs []discrepancyRow
	err = db.r.SelectContext(ctx, &rs, `SELECT id, order_no, txn_id, kind, amount_cents, created_at, status,
 resolved_at, resolved_by, note FROM discrepancy `+where+`ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
		append(args, limit, offset)...)
	if err != nil {
		return nil, dbErr(err, "discrepancies")
	}
	out := make([]core.Discrepancy, len(rs))
	for i, r := range rs {
		out[i] = r.discrepancy()
	}
	return out, nil
}

// discrepancyRow is a discrepancy row as stored.
type discrepancyRow struct {
	ID          int64  `db:"id"`
	OrderNo     string `db:"order_no"`
	TxnID       string `db:"txn_id"`
	Kind        string `db:"kind"`
	AmountCents int64  `db:"amount_cents"`
	CreatedAt   int64  `db:"created_at"`
	Status      string `db:"status"`
	ResolvedAt  int64  `db:"resolved_at"`
	ResolvedBy  string `db:"resolved_by"`
	Note        string `db:"note"`
}

func (r discrepancyRow) discrepancy() core.Discrepancy {
	return core.Discrepancy{ID: r.ID, OrderNo: r.OrderNo, TxnID: r.TxnID, Kind: r.Kind,
		AmountCents: r.AmountCents, CreatedAt: fromMS(r.CreatedAt), Status: r.Status,
		ResolvedAt: fromMS(r.ResolvedAt), ResolvedBy: r.ResolvedBy, Note: r.Note}
}

// OrderCounts returns the dashboard counters, every key always present:
// "pending" (now), and since the given time "placed", "paid", "cancelled"
// (by anyone but the clock) and "expired" (cancelled by timeout); cancelled
// and expired do not overlap. Uses idx_status_expire, idx_created and
// idx_status_closed.
func (db *DB) OrderCounts(ctx context.Context, since time.Time) (map[string]int, error) {
	counts := map[string]int{"pending": 0, "placed": 0, "paid": 0, "cancelled": 0, "expired": 0}
	var n int
	if err := db.r.GetContext(ctx, &n, `SELECT COUNT(*) FROM order_info WHERE status = 0`); err != nil {
		return nil, dbErr(err, "count pending")
	}
	counts["pending"] = n
	if err := db.r.GetContext(ctx, &n, `SELECT COUNT(*) FROM order_info WHERE created_at >= ?`, ms(since)); err != nil {
		return nil, dbErr(err, "count placed")
	}
	counts["placed"] = n
	var rs []struct {
		Status  int `db:"status"`
		ByClock int `db:"by_clock"`
		N       int `db:"n"`
	}
	err := db.r.SelectContext(ctx, &rs, `SELECT status, CASE WHEN cancel_reason = ? THEN 1 ELSE 0 END AS by_clock, COUNT(*) AS n
 FROM order_info WHERE status IN (1, 2) AND closed_at >= ? GROUP BY status, by_clock`, core.ReasonTimeout, ms(since))
	if err != nil {
		return nil, dbErr(err, "count closed")
	}
	for _, r := range rs {
		switch {
		case core.OrderStatus(r.Status) == core.StatusPaid:
			counts["paid"] += r.N
		case r.ByClock == 1:
			counts["expired"] += r.N
		default:
			counts["cancelled"] += r.N
		}
	}
	return counts, nil
}

// page checks paging arguments and applies the defaults.
func page(limit, offset int) (int, int, error) {
	if limit < 0 || offset < 0 {
		return 0, 0, core.Invalidf("negative limit or offset")
	}
	if limit == 0 {
		limit = 50
	}
	return min(limit, 500), offset, nil
}

// escapeLike escapes LIKE wildcards for a pattern with ESCAPE '!'.
func escapeLike(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}
