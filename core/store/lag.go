package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
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

// The spans during which orders were pending past their expiry and a grace
// after it, from expire_at + grace to closed_at (open at both ends), that
// reach into a window: the orders pending now whose grace ended before its
// end (range on idx_status_expire), and the orders closed after its start
// that were overdue by then (range on idx_status_closed). A refunded order
// keeps its payment's closed_at, so a late payment refunded since counts.
const (
	overduePendingSQL = `SELECT expire_at FROM order_info WHERE status = 0 AND expire_at < ?`
	overdueClosedSQL  = `SELECT expire_at, closed_at FROM order_info
 WHERE status IN (1, 2, 3) AND closed_at > ? AND expire_at < closed_at - ? AND expire_at < ?`
)

// OverdueMax returns, for each step of [from, to) (the last one may end at
// to), the most orders that were pending more than grace past their expiry
// at any one instant of it: the overdue gauge's history (the gauge counts
// with the same grace, core.DelayPolicy.OverdueAfter), reconstructed from
// the rows rather than sampled, so 23 holds overdue for 30 s show in their
// minute.
func (db *DB) OverdueMax(ctx context.Context, from, to time.Time, step, grace time.Duration) ([]int, error) {
	if !from.Before(to) || step <= 0 {
		return nil, nil
	}
	var pendingAt []int64
	if err := db.r.SelectContext(ctx, &pendingAt, overduePendingSQL, ms(to.Add(-grace))); err != nil {
		return nil, dbErr(err, "overdue orders pending")
	}
	var closed []struct {
		Expire int64 `db:"expire_at"`
		Closed int64 `db:"closed_at"`
	}
	g := grace.Milliseconds()
	if err := db.r.SelectContext(ctx, &closed, overdueClosedSQL, ms(from), g, ms(to.Add(-grace))); err != nil {
		return nil, dbErr(err, "overdue orders closed")
	}
	spans := make([]overdueSpan, 0, len(pendingAt)+len(closed))
	for _, e := range pendingAt {
		spans = append(spans, overdueSpan{from: e + g, to: math.MaxInt64})
	}
	for _, c := range closed {
		spans = append(spans, overdueSpan{from: c.Expire + g, to: c.Closed})
	}
	return maxOverlap(spans, from.UnixMilli(), to.UnixMilli(), step.Milliseconds()), nil
}

// overdueSpan is one order's overdue time, epoch ms, open at both ends.
type overdueSpan struct{ from, to int64 }

// maxOverlap sweeps the spans' ends in time order: per step of [from, to),
// the count just after the step's start (spans opened at or before it and
// not closed by then), raised by every span opening within the step. At one
// instant a span closing goes before one opening: open ends do not touch.
func maxOverlap(spans []overdueSpan, from, to, step int64) []int {
	type edge struct {
		at    int64
		delta int
	}
	edges := make([]edge, 0, 2*len(spans))
	for _, s := range spans {
		edges = append(edges, edge{s.from, +1}, edge{s.to, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.delta, b.delta)
	})
	out := make([]int, 0, (to-from+step-1)/step)
	cur, i := 0, 0
	for start := from; start < to; start += step {
		for ; i < len(edges) && edges[i].at <= start; i++ {
			cur += edges[i].delta
		}
		peak := cur
		for end := min(start+step, to); i < len(edges) && edges[i].at < end; i++ {
			cur += edges[i].delta
			peak = max(peak, cur)
		}
		out = append(out, peak)
	}
	return out
}
