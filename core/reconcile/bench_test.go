package reconcile_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// One full reconcile run on the embedded stack (SQLite file + in-process
// Redis) over 10 thousand and over 1 million orders, with the same 1,000
// anomalies (200 of each repairable kind) injected before every run:
//
//	go test -run '^$' -bench 'BenchmarkReconcile' -benchtime 3x ./core/reconcile
//
// Both datasets have the same shows on sale (4 × 2,500 seats, half of them
// taken by 5,000 live orders); the other orders are the history of past
// shows (half paid with their order_seat rows, half cancelled), which is
// what a ticketing database grows with. Reconcile's cost should follow the
// anomalies and the shows on sale, not the history.
func BenchmarkReconcile10k(b *testing.B) { benchmarkReconcile(b, 10_000) }

func BenchmarkReconcile1M(b *testing.B) { benchmarkReconcile(b, 1_000_000) }

const (
	benchLiveShows      = 4
	benchPaidPerShow    = 1000
	benchPendingPerShow = 250
	benchPerKind        = 200  // anomalies of each kind per run
	benchHistoryShow    = 5000 // history orders per past show
)

func benchmarkReconcile(b *testing.B, orders int) {
	ctx := context.Background()
	st := stacktest.Embedded(b)
	eng := st.Engine(b, core.Config{}, nil)
	start := time.Now()
	d := seedBench(b, st, orders)
	b.Logf("seeded %d orders in %v", orders, time.Since(start).Round(time.Millisecond))
	rec, err := reconcile.New(reconcile.Deps{Engine: eng, DB: st.DB, Seats: st.Seats}, reconcile.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range d.live {
		if err := eng.RebuildSeats(ctx, d.live[i]); err != nil {
			b.Fatal(err)
		}
	}
	if run, err := rec.RunOnce(ctx, reconcile.TriggerManual, false); err != nil || !run.OK() {
		b.Fatalf("clean run before injecting: %+v %v", run, err)
	}
	iter := 0
	took := map[string]int64{} // per check, ms over all runs
	for b.Loop() {
		b.StopTimer()
		d.inject(b, iter)
		iter++
		b.StartTimer()
		run, err := rec.RunOnce(ctx, reconcile.TriggerManual, false)
		b.StopTimer()
		if err != nil || !run.OK() {
			b.Fatalf("run: %+v %v", run, err)
		}
		for _, c := range run.Checks {
			want := benchPerKind
			if c.Name == reconcile.CheckOpenDiscrepancy {
				want = 0
			}
			if c.Found != want || c.Fixed != want {
				b.Fatalf("%s: found %d fixed %d, want %d", c.Name, c.Found, c.Fixed, want)
			}
			took[c.Name] += c.DurationMS
		}
		b.StartTimer()
	}
	for name, ms := range took {
		b.ReportMetric(float64(ms)/float64(iter), name+"-ms/op")
	}
}

// benchData is a seeded database and what inject needs to know about it.
type benchData struct {
	st        *stacktest.Stack
	live      []int64    // shows on sale
	free      [][]string // per live show, seats no order holds
	paid      []benchRef // live paid orders
	cancelled []string   // cancelled history orders
}

type benchRef struct {
	orderNo string
	show    int64
	user    int64
	seat    string
}

// seedBench bulk-inserts the shows and orders with multi-row INSERTs in
// one transaction per table chunk.
func seedBench(b *testing.B, st *stacktest.Stack, orders int) *benchData {
	b.Helper()
	ctx := context.Background()
	now := time.Now()
	d := &benchData{st: st}
	x := st.DB.X()
	past := (orders/2 + benchHistoryShow - 1) / benchHistoryShow
	var showRows [][]any
	for i := range benchLiveShows + past {
		starts := now.Add(24 * time.Hour)
		if i >= benchLiveShows {
			starts = now.Add(-time.Duration(i) * 24 * time.Hour)
		}
		showRows = append(showRows, []any{int64(i + 1), fmt.Sprintf("Show %d", i+1), "Hall", starts.UnixMilli(), 50, 50, now.UnixMilli()})
	}
	bulkInsert(b, st, "show_info (id, name, venue, starts_at, row_count, col_count, created_at)", showRows)

	var orderRows, seatRows [][]any
	flush := func(force bool) {
		if len(orderRows) >= 20_000 || force {
			bulkInsert(b, st, "order_info (order_no, show_id, user_id, status, amount_cents, seat_count, seat_ids, created_at, expire_at, closed_at, cancel_reason, cancel_actor, paid_txn_id, timeout_hop, timeout_due_at)", orderRows)
			orderRows = orderRows[:0]
		}
		if len(seatRows) >= 20_000 || force {
			bulkInsert(b, st, "order_seat (show_id, seat_id, order_no, user_id, created_at)", seatRows)
			seatRows = seatRows[:0]
		}
	}
	day := now.Add(-24 * time.Hour).UnixMilli()
	addOrder := func(no string, show, user int64, status core.OrderStatus, seat string, created, expire, closed int64) {
		reason := ""
		if status == core.StatusCancelled {
			reason = core.ReasonTimeout
		}
		orderRows = append(orderRows, []any{no, show, user, int(status), 5000, 1, seat, created, expire, closed, reason, "", "", 1, expire})
		if status != core.StatusCancelled {
			seatRows = append(seatRows, []any{show, seat, no, user, created})
		}
	}
	var planRows [][]any
	for s := range benchLiveShows {
		show := int64(s + 1)
		d.live = append(d.live, show)
		var free []string
		for i, p := range store.DemoSeats(50, 50, 5000) {
			seat := p.SeatID
			planRows = append(planRows, []any{show, seat, p.Row, p.Col, p.PriceCents})
			user := int64(s*10_000 + i + 1)
			no := fmt.Sprintf("SFL%d-%05d", show, i)
			switch {
			case i < benchPaidPerShow:
				addOrder(no, show, user, core.StatusPaid, seat, day, day+int64(15*time.Minute/time.Millisecond), day+1000)
				d.paid = append(d.paid, benchRef{orderNo: no, show: show, user: user, seat: seat})
			case i < benchPaidPerShow+benchPendingPerShow:
				addOrder(no, show, user, core.StatusPending, seat, now.UnixMilli(), now.Add(15*time.Minute).UnixMilli(), 0)
			default:
				free = append(free, seat)
			}
		}
		d.free = append(d.free, free)
	}
	bulkInsert(b, st, "seat (show_id, seat_id, row_no, col_no, price_cents)", planRows)
	for i := range orders - benchLiveShows*(benchPaidPerShow+benchPendingPerShow) {
		show := int64(benchLiveShows + 1 + i/2/benchHistoryShow)
		no := fmt.Sprintf("SFH%09d", i)
		if i%2 == 0 {
			addOrder(no, show, int64(i+1_000_000), core.StatusPaid, "H-"+strconv.Itoa(i/2%benchHistoryShow), day, day+1, day+1)
		} else {
			addOrder(no, show, int64(i+1_000_000), core.StatusCancelled, "H-"+strconv.Itoa(i%benchHistoryShow), day, day+1, day+1)
			if len(d.cancelled) < benchPerKind {
				d.cancelled = append(d.cancelled, no)
			}
		}
		flush(false)
	}
	flush(true)
	// Fresh statistics, and the seed moved out of the WAL: the runs measure
	// reconcile, not the tail of the bulk load.
	for _, q := range []string{"ANALYZE", "PRAGMA wal_checkpoint(TRUNCATE)"} {
		if _, err := x.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	return d
}

// bulkInsert inserts rows into table (with its column list) 500 rows per
// statement, in one transaction.
func bulkInsert(b *testing.B, st *stacktest.Stack, table string, rows [][]any) {
	b.Helper()
	if len(rows) == 0 {
		return
	}
	ctx := context.Background()
	tx, err := st.DB.X().BeginTxx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	cols := len(rows[0])
	tuple := "(" + strings.Repeat("?, ", cols-1) + "?)"
	for start := 0; start < len(rows); start += 500 {
		chunk := rows[start:min(start+500, len(rows))]
		args := make([]any, 0, cols*len(chunk))
		for _, r := range chunk {
			args = append(args, r...)
		}
		q := "INSERT INTO " + table + " VALUES " + strings.Repeat(tuple+", ", len(chunk)-1) + tuple
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("insert into %s: %v", table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// inject adds 200 anomalies of each repairable kind, all older than the
// grace period; the run that follows repairs them, so the next iteration
// starts clean and injects fresh ones.
func (d *benchData) inject(b *testing.B, iter int) {
	b.Helper()
	ctx := context.Background()
	st := d.st
	old := time.Now().Add(-time.Hour)
	seatAt := func(k int) (int64, string) { // the k-th free seat, round robin over the shows
		s := k % len(d.live)
		return d.live[s], d.free[s][k/len(d.live)]
	}
	// expired_pending: pending orders past expiry, seats locked.
	var orderRows [][]any
	for i := range benchPerKind {
		show, seat := seatAt(i)
		no := fmt.Sprintf("SFX%d-%d", iter, i)
		user := int64(9_000_000 + i)
		orderRows = append(orderRows, []any{no, show, user, 0, 5000, 1, seat, old.UnixMilli(),
			old.Add(15 * time.Minute).UnixMilli(), 0, "", "", "", 1, old.Add(15 * time.Minute).UnixMilli()})
		if err := st.Seats.Lock(ctx, show, user, no, []string{seat}, 0, old); err != nil {
			b.Fatal(err)
		}
	}
	bulkInsert(b, st, "order_info (order_no, show_id, user_id, status, amount_cents, seat_count, seat_ids, created_at, expire_at, closed_at, cancel_reason, cancel_actor, paid_txn_id, timeout_hop, timeout_due_at)", orderRows)
	// orphan_order_seat: rows of cancelled orders on free seats.
	seatRows := seatRowsOf(orderRows)
	for i, no := range d.cancelled {
		show, seat := seatAt(benchPerKind + i)
		seatRows = append(seatRows, []any{show, seat, no, int64(8_000_000 + i), old.UnixMilli()})
	}
	bulkInsert(b, st, "order_seat (show_id, seat_id, order_no, user_id, created_at)", seatRows)
	// stale_redis_lock: locks of orders that never committed.
	for i := range benchPerKind {
		show, seat := seatAt(2*benchPerKind + i)
		if err := st.Seats.Lock(ctx, show, int64(7_000_000+i), fmt.Sprintf("SFS%d-%d", iter, i), []string{seat}, 0, old); err != nil {
			b.Fatal(err)
		}
	}
	// paid_not_sold: paid seats the seat store shows merely locked;
	// limit_drift: counters of other paid users set wrong.
	for i := range benchPerKind {
		p := d.paid[i]
		// Sold → locked by the same order at old, its counter unchanged.
		if n, err := st.Seats.ReleaseSold(ctx, p.show, p.orderNo, []string{p.seat}); err != nil || n != 1 {
			b.Fatalf("unsell %s of %s: %d %v", p.seat, p.orderNo, n, err)
		}
		if err := st.Seats.Lock(ctx, p.show, p.user, p.orderNo, []string{p.seat}, 0, old); err != nil {
			b.Fatal(err)
		}
		q := d.paid[benchPerKind+i]
		if err := st.Seats.SetLimit(ctx, q.show, q.user, 5); err != nil {
			b.Fatal(err)
		}
	}
}

// seatRowsOf is the order_seat row of each one-seat order row.
func seatRowsOf(orderRows [][]any) [][]any {
	out := make([][]any, len(orderRows))
	for i, o := range orderRows {
		out[i] = []any{o[1], o[6], o[0], o[2], o[7]}
	}
	return out
}
