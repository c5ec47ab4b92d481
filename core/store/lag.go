package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"seatflow/core"
)

// Expiry-lag reads: how late expired orders are cancelled, and how many are
// pending past their expiry. Each reads one index range bounded by "now"
// or by the last hour, never the order history.

const overdueCountSQL = `SELECT COUNT(*) FROM order_info WHERE status = 0 AND expire_at < ?`

// OverdueCount counts the orders still pending after their expiry at now:
// the gauge seatflow_orders_overdue. Range on idx_status_expire.
func (db *DB) OverdueCount(ctx context.Context, now time.Time) (int, error) {
	var n int
	if err := db.r.GetContext(ctx, &n, overdueCountSQL, ms(now)); err != nil {
		return 0, dbErr(err, "count overdue orders")
	}
	return n, nil
}

// lagBucketExpr is a CASE numbering the bucket of closed_at - expire_at:
// bucket i holds lags below bounds[i] (and at or above bounds[i-1]); the
// last bucket, len(bounds), the rest.
func lagBucketExpr(bounds []time.Duration) (string, []any) {
	var b strings.Builder
	args := make([]any, len(bounds))
	b.WriteString("CASE")
	for i, d := range bounds {
		fmt.Fprintf(&b, " WHEN closed_at - expire_at < ? THEN %d", i)
		args[i] = d.Milliseconds()
	}
	fmt.Fprintf(&b, " ELSE %d END", len(bounds))
	return b.String(), args
}

func expiryLagSQL(bucket string) string {
	return `SELECT cancel_reason, cancel_actor, ` + bucket + ` AS bucket, COUNT(*) AS n FROM order_info
 WHERE status = 2 AND closed_at >= ? AND cancel_reason IN (?, ?)
 GROUP BY cancel_reason, cancel_actor, bucket`
}

// ExpiryLag buckets the lag (closed_at - expire_at) of the orders cancelled
// by an expiry path since `since`, by path (core.ExpiryPath of the row's
// cancel reason and actor): per path, len(bounds)+1 counts as lagBucketExpr
// numbers them. The rows are counted by the database; range on
// idx_status_closed (status = 2, closed_at >= since).
func (db *DB) ExpiryLag(ctx context.Context, since time.Time, bounds []time.Duration) (map[string][]int, error) {
	bucket, args := lagBucketExpr(bounds)
	args = append(args, ms(since), core.ReasonTimeout, core.ReasonReconcile)
	var rs []struct {
		Reason string `db:"cancel_reason"`
		Actor  string `db:"cancel_actor"`
		Bucket int    `db:"bucket"`
		N      int    `db:"n"`
	}
	if err := db.r.SelectContext(ctx, &rs, expiryLagSQL(bucket), args...); err != nil {
		return nil, dbErr(err, "expiry lag")
	}
	out := make(map[string][]int)
	for _, r := range rs {
		path := core.ExpiryPath(r.Reason, r.Actor)
		if out[path] == nil {
			out[path] = make([]int, len(bounds)+1)
		}
		out[path][r.Bucket] += r.N
	}
	return out, nil
}

// The rows that can have been overdue at a time t within a window: the
// orders pending now that expired before t (range on idx_status_expire),
// and the orders closed after t, hence after the window's start (ranges on
// idx_status_closed); the CASE of each time keeps the ones overdue at it.
const (
	overduePendingCond = `status = 0 AND expire_at < ?`
	overdueClosedCond  = `status IN (1, 2) AND closed_at > ?`
)

// overdueAtSQL is one query counting, for each of points times, the rows
// of one set that were overdue then. Pending rows close in the future, so
// their count reads expire_at alone (one argument per time), which the index
// holds; closed rows must also not have closed yet (two arguments per time).
func overdueAtSQL(points int, pending bool) string {
	when, cond := "expire_at < ? AND closed_at > ?", overdueClosedCond
	if pending {
		when, cond = "expire_at < ?", overduePendingCond
	}
	cols := make([]string, points)
	for i := range cols {
		cols[i] = fmt.Sprintf("COALESCE(SUM(CASE WHEN %s THEN 1 ELSE 0 END), 0) AS p%d", when, i)
	}
	return `SELECT ` + strings.Join(cols, ", ") + ` FROM order_info WHERE ` + cond
}

// OverdueAt returns, for each of the times ts, how many orders were
// pending past their expiry at that time: the overdue gauge's history,
// reconstructed from the rows (expire_at, closed_at) rather than sampled.
// Two queries, over index ranges bounded by the earliest and latest of ts.
func (db *DB) OverdueAt(ctx context.Context, ts []time.Time) ([]int, error) {
	out := make([]int, len(ts))
	if len(ts) == 0 {
		return out, nil
	}
	first, last := slices.MinFunc(ts, time.Time.Compare), slices.MaxFunc(ts, time.Time.Compare)
	var pendingArgs, closedArgs []any
	for _, t := range ts {
		pendingArgs = append(pendingArgs, ms(t))
		closedArgs = append(closedArgs, ms(t), ms(t))
	}
	for _, part := range []struct {
		query string
		args  []any
	}{
		{overdueAtSQL(len(ts), true), append(pendingArgs, ms(last))},
		{overdueAtSQL(len(ts), false), append(closedArgs, ms(first))},
	} {
		counts := make([]int64, len(ts))
		dest := make([]any, len(ts))
		for i := range counts {
			dest[i] = &counts[i]
		}
		if err := db.r.QueryRowxContext(ctx, part.query, part.args...).Scan(dest...); err != nil {
			return nil, dbErr(err, "overdue orders over time")
		}
		for i, n := range counts {
			out[i] += int(n)
		}
	}
	return out, nil
}
