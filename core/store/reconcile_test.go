package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"seatflow/core"
)

// Tests of reconcile.go and reconcile_run.go (reconcile's queries).

// TestReconcileQueryPlans shows that every reconcile query reads through an
// index, on both dialects, with a table shaped like production: many closed
// orders, few pending ones. The plans are logged (go test -v) for the note.
func TestReconcileQueryPlans(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		show := seedPlanData(t, db)
		now := t0.Add(time.Hour)
		mysql := db.Dialect() == MySQL
		ix := func(my, lite string) string {
			if mysql {
				return my
			}
			return lite
		}
		tests := []struct {
			name  string
			query string
			args  []any
			want  []string // index names the plan must use
		}{
			{"ExpiredPendingAfter", expiredPendingAfterSQL, []any{ms(t0), ms(now), ms(t0), 7, 500},
				[]string{ix("idx_status_expire", "order_info_idx_status_expire")}},
			{"ShowsOnSale", showsOnSaleSQL, []any{ms(now)}, []string{ix("idx_starts", "show_info_idx_starts")}},
			{"PendingShows", pendingShowsSQL, []any{int(core.StatusPending)}, []string{"idx_status_"}},
			{"ShowSeatRows", showSeatRowsSQL, []any{show, "A-1", 500},
				[]string{ix("PRIMARY", "sqlite_autoindex_order_seat_1"), ix("uk_order_no", "order_info_uk_order_no")}},
			{"OrderStates", strings.Replace(orderStatesSQL, "(?)", "(?, ?, ?)", 1), []any{"P0001", "P0002", "P0003"},
				[]string{ix("uk_order_no", "order_info_uk_order_no")}},
			{"OpenDiscrepancyCount", openDiscrepancyCountSQL, []any{DiscrepancyOpen},
				[]string{ix("idx_status_created", "discrepancy_idx_status_created")}},
			{"PaidOrdersAfter", paidOrdersAfterSQL, []any{show, int64(10), 500},
				[]string{ix("idx_show_status", "order_info_idx_show_status")}},
			// SQLite reads a rowid table in rowid order: "SCAN" without a sort
			// is the primary key read backwards, stopping at the LIMIT.
			{"ReconcileRuns", reconcileRunsSQL, []any{20}, []string{ix("key=PRIMARY", "SCAN reconcile_run")}},
			{"ReconcileRunByID", reconcileRunByIDSQL, []any{int64(500)},
				[]string{ix("type=const key=PRIMARY", "SEARCH reconcile_run USING INTEGER PRIMARY KEY")}},
			{"AbandonReconcileRuns", abandonRunsSQL, []any{ms(now)},
				[]string{ix("idx_status_started", "reconcile_run_idx_status_started")}},
			{"PruneReconcileRuns", pruneRunsSQL, []any{ms(t0)}, []string{ix("idx_started", "reconcile_run_idx_started")}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				plan := fullPlan(t, db, tt.query, tt.args...)
				t.Logf("%s plan (%s):\n%s", tt.name, db.Dialect(), plan)
				for _, w := range tt.want {
					if !strings.Contains(plan, w) {
						t.Errorf("%s does not use %s:\n%s", tt.name, w, plan)
					}
				}
				for _, bad := range []string{"type=ALL", "filesort", "TEMP B-TREE"} {
					if strings.Contains(plan, bad) {
						t.Errorf("%s: %s in the plan:\n%s", tt.name, bad, plan)
					}
				}
			})
		}
		if _, err := db.OpenDiscrepancyCount(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// seedPlanData fills the tables with enough rows that the planners have a
// reason to prefer the indexes, then refreshes the statistics.
func seedPlanData(t *testing.T, db *DB) int64 {
	t.Helper()
	ctx := context.Background()
	var shows []int64
	for range 5 {
		shows = append(shows, mkShow(t, db, 20, 20).ID)
	}
	for i := range 30 { // past shows: the catalogue outgrows the shows on sale
		if _, err := db.CreateShow(ctx, core.Show{Name: fmt.Sprintf("Past %d", i), StartsAt: t0.Add(-time.Duration(i+1) * 24 * time.Hour)},
			DemoSeats(1, 1, 100)); err != nil {
			t.Fatal(err)
		}
	}
	seats := DemoSeats(20, 20, 1)
	for i := range 1000 {
		o := pending(fmt.Sprintf("P%04d", i), shows[i%5], int64(i%7+1), t0, seats[i/5].SeatID)
		if i >= 10 {
			o.Status, o.ClosedAt = core.StatusPaid, t0.Add(time.Duration(i)*time.Second)
			if i%3 == 0 {
				o.Status = core.StatusCancelled
			}
		}
		mustPlace(t, db, o)
	}
	for i := range 100 {
		_, err := db.X().ExecContext(ctx, `INSERT INTO discrepancy (order_no, txn_id, kind, amount_cents, created_at, status, note)
 VALUES (?, ?, 'paid_after_cancel', 100, ?, ?, '')`, fmt.Sprintf("P%04d", i), fmt.Sprintf("T%d", i), ms(t0),
			map[bool]string{true: DiscrepancyOpen, false: DiscrepancyResolved}[i < 3])
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1000 {
		if _, err := db.InsertReconcileRun(ctx, ReconcileRun{Trigger: "sweep", StartedAt: t0.Add(time.Duration(i) * time.Minute),
			Status: "ok", Checks: "[]"}); err != nil {
			t.Fatal(err)
		}
	}
	stats := "ANALYZE"
	if db.Dialect() == MySQL {
		stats = "ANALYZE TABLE show_info, order_info, order_seat, discrepancy, reconcile_run"
	}
	if _, err := db.X().ExecContext(ctx, stats); err != nil {
		t.Fatal(err)
	}
	return shows[0]
}

// fullPlan is the query plan of q: MySQL's EXPLAIN rows (table, access
// type, key, rows, Extra), SQLite's EXPLAIN QUERY PLAN details.
func fullPlan(t *testing.T, db *DB, q string, args ...any) string {
	t.Helper()
	if db.Dialect() != MySQL {
		return explain(t, db, q, args...)
	}
	rows, err := db.X().QueryxContext(context.Background(), "EXPLAIN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		m := map[string]any{}
		if err := rows.MapScan(m); err != nil {
			t.Fatal(err)
		}
		str := func(k string) string {
			if b, ok := m[k].([]byte); ok {
				return string(b)
			}
			return fmt.Sprint(m[k])
		}
		lines = append(lines, fmt.Sprintf("table=%s type=%s key=%s rows=%s Extra=%s",
			str("table"), str("type"), str("key"), str("rows"), str("Extra")))
	}
	return strings.Join(lines, "\n")
}

func TestExpiredPendingAfter(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		show := mkShow(t, db, 3, 10)
		seats := DemoSeats(3, 10, 1)
		now := t0.Add(time.Hour)
		var want []string
		for i := range 12 {
			o := pending(fmt.Sprintf("X%02d", i), show.ID, 1, t0, seats[i].SeatID)
			// Ties on expire_at across page boundaries: the id breaks them.
			o.ExpireAt = now.Add(time.Duration(i/3-3) * time.Minute)
			switch {
			case i == 4:
				o.Status, o.ClosedAt = core.StatusPaid, t0
			case i == 5:
				o.Status, o.ClosedAt = core.StatusCancelled, t0
			case o.ExpireAt.After(now):
			default:
				want = append(want, o.OrderNo)
			}
			mustPlace(t, db, o)
		}
		for _, size := range []int{1, 2, 3, 500} {
			var got []string
			var cur ExpiredRef
			for {
				page, err := db.ExpiredPendingAfter(ctx, now, cur, size)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range page {
					got = append(got, r.OrderNo)
				}
				if len(page) < size {
					break
				}
				cur = page[len(page)-1]
			}
			if !slices.Equal(got, want) {
				t.Errorf("page size %d: got %v, want %v", size, got, want)
			}
		}
	})
}

func TestShowsOnSale(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		ids := map[string]int64{}
		for name, at := range map[string]time.Time{"past": t0.Add(-48 * time.Hour), "undated": {},
			"soon": t0.Add(time.Hour), "just started": t0.Add(-time.Hour)} {
			s, err := db.CreateShow(ctx, core.Show{Name: name, StartsAt: at}, DemoSeats(1, 1, 1))
			if err != nil {
				t.Fatal(err)
			}
			ids[name] = s.ID
		}
		got, err := db.ShowsOnSale(ctx, t0.Add(-24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{ids["undated"], ids["soon"], ids["just started"]}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("ShowsOnSale = %v, want %v (all but %d)", got, want, ids["past"])
		}
		// A pending order (its timeout late) keeps a past show's seat
		// state compared; retention keeps it for the same reason.
		mustPlace(t, db, pending("late", ids["past"], 1, t0.Add(-49*time.Hour), "A-1"))
		if got, err = db.ShowsOnSale(ctx, t0.Add(-24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		want = append(want, ids["past"])
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("with a pending order on the past show: ShowsOnSale = %v, want %v", got, want)
		}
	})
}

func TestShowSeatRowsAndOrderStates(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		show := mkShow(t, db, 2, 5)
		mustPlace(t, db, pending("PEND", show.ID, 1, t0, "A-1", "A-2"))
		paid := pending("PAID", show.ID, 2, t0, "A-3")
		paid.Status, paid.ClosedAt = core.StatusPaid, t0.Add(time.Minute)
		mustPlace(t, db, paid)
		gone := pending("GONE", show.ID, 3, t0, "B-1")
		gone.Status, gone.ClosedAt = core.StatusCancelled, t0.Add(2*time.Minute)
		mustPlace(t, db, gone) // a cancelled order that kept its row
		if _, err := db.X().ExecContext(ctx, `INSERT INTO order_seat (show_id, seat_id, order_no, user_id, created_at, ticket_code)
 VALUES (?, 'B-2', 'NOPE', 4, ?, ?)`, show.ID, ms(t0), core.NewSeatCode()); err != nil {
			t.Fatal(err)
		}
		var got []string
		for after := ""; ; {
			page, err := db.ShowSeatRows(ctx, show.ID, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page {
				got = append(got, fmt.Sprintf("%s:%s:%d:%v:%s:%v:%d", r.SeatID, r.OrderNo, r.UserID, r.OrderFound,
					r.Status, r.Live(), ms(r.ClosedAt)))
			}
			if len(page) < 2 {
				break
			}
			after = page[len(page)-1].SeatID
		}
		want := []string{
			"A-1:PEND:1:true:pending:true:0", "A-2:PEND:1:true:pending:true:0",
			fmt.Sprintf("A-3:PAID:2:true:paid:true:%d", ms(t0.Add(time.Minute))),
			fmt.Sprintf("B-1:GONE:3:true:cancelled:false:%d", ms(t0.Add(2*time.Minute))),
			"B-2:NOPE:4:false:pending:false:0",
		}
		if !slices.Equal(got, want) {
			t.Errorf("ShowSeatRows:\n got %v\nwant %v", got, want)
		}
		states, err := db.OrderStates(ctx, []string{"PAID", "NOPE", "GONE"})
		if err != nil {
			t.Fatal(err)
		}
		if len(states) != 2 || states["PAID"].Status != core.StatusPaid || states["GONE"].UserID != 3 ||
			!states["GONE"].ClosedAt.Equal(t0.Add(2*time.Minute)) {
			t.Errorf("OrderStates = %+v", states)
		}
	})
}

func TestLease(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		const ttl = 400 * time.Millisecond
		steps := []struct {
			name string
			do   func() (bool, error)
			want bool
		}{
			{"a takes the free lease", func() (bool, error) { return db.AcquireLease(ctx, "reconcile", "a", "ta", ttl) }, true},
			{"b cannot take a held lease", func() (bool, error) { return db.AcquireLease(ctx, "reconcile", "b", "tb", ttl) }, false},
			{"b cannot renew what it does not hold", func() (bool, error) { return db.RenewLease(ctx, "reconcile", "tb", ttl) }, false},
			{"a renews", func() (bool, error) { return db.RenewLease(ctx, "reconcile", "ta", ttl) }, true},
			{"b's release does not free a's lease", func() (bool, error) {
				return true, db.ReleaseLease(ctx, "reconcile", "tb")
			}, true},
			{"still held", func() (bool, error) { return db.AcquireLease(ctx, "reconcile", "b", "tb", ttl) }, false},
			{"a dies; after the TTL b takes it", func() (bool, error) {
				time.Sleep(ttl + 100*time.Millisecond)
				return db.AcquireLease(ctx, "reconcile", "b", "tb", ttl)
			}, true},
			{"a cannot renew a lease it lost", func() (bool, error) { return db.RenewLease(ctx, "reconcile", "ta", ttl) }, false},
			{"b releases", func() (bool, error) { return true, db.ReleaseLease(ctx, "reconcile", "tb") }, true},
			{"a takes it at once after a release", func() (bool, error) { return db.AcquireLease(ctx, "reconcile", "a", "ta2", ttl) }, true},
		}
		for _, s := range steps {
			got, err := s.do()
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if got != s.want {
				t.Fatalf("%s: got %v, want %v", s.name, got, s.want)
			}
		}
		owner, until, err := db.LeaseHolder(ctx, "reconcile")
		if err != nil || owner != "a" || until.IsZero() {
			t.Errorf("LeaseHolder = %q %v %v, want a, a time", owner, until, err)
		}
		if _, err := db.AcquireLease(ctx, "nope", "a", "t", ttl); !errors.Is(err, ErrLeaseRow) {
			t.Errorf("AcquireLease of an unknown lease: %v, want ErrLeaseRow", err)
		}
	})
}

func TestReconcileRunRecords(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		var ids []int64
		for i, status := range []string{"ok", "running", "running", "errors"} {
			id, err := db.InsertReconcileRun(ctx, ReconcileRun{Trigger: "manual", Owner: "me",
				StartedAt: t0.Add(time.Duration(i) * time.Hour), DryRun: i == 3, Status: status, Checks: "[]"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if err := db.FinishReconcileRun(ctx, ReconcileRun{ID: ids[0], FinishedAt: t0.Add(time.Second), Status: "errors",
			Checks: `[{"name":"x"}]`, Error: "boom"}); err != nil {
			t.Fatal(err)
		}
		if n, err := db.AbandonReconcileRuns(ctx, t0.Add(5*time.Hour)); err != nil || n != 2 {
			t.Fatalf("AbandonReconcileRuns = %d %v, want 2", n, err)
		}
		runs, err := db.ReconcileRuns(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range runs {
			got = append(got, fmt.Sprintf("%d:%s:%v:%s", r.ID, r.Status, r.DryRun, r.Error))
		}
		want := []string{fmt.Sprintf("%d:errors:true:", ids[3]),
			fmt.Sprintf("%d:abandoned:false:the instance running it stopped", ids[2]),
			fmt.Sprintf("%d:abandoned:false:the instance running it stopped", ids[1]),
			fmt.Sprintf("%d:errors:false:boom", ids[0])}
		if !slices.Equal(got, want) {
			t.Errorf("ReconcileRuns:\n got %v\nwant %v", got, want)
		}
		if runs[3].Checks != `[{"name":"x"}]` || !runs[3].FinishedAt.Equal(t0.Add(time.Second)) || runs[3].Owner != "me" {
			t.Errorf("finished run = %+v", runs[3])
		}
		for _, tt := range []struct {
			id      int64
			want    string
			wantErr error
		}{
			{ids[0], fmt.Sprintf("%d:errors:false:boom:manual:me", ids[0]), nil},
			{ids[3], fmt.Sprintf("%d:errors:true::manual:me", ids[3]), nil},
			{ids[3] + 1, "0::false:::", ErrRunNotFound},
		} {
			r, err := db.ReconcileRunByID(ctx, tt.id)
			if got := fmt.Sprintf("%d:%s:%v:%s:%s:%s", r.ID, r.Status, r.DryRun, r.Error, r.Trigger, r.Owner); got != tt.want ||
				!errors.Is(err, tt.wantErr) {
				t.Errorf("ReconcileRunByID(%d) = %s, %v; want %s, %v", tt.id, got, err, tt.want, tt.wantErr)
			}
		}
		if r, _ := db.ReconcileRunByID(ctx, ids[0]); r.Checks != runs[3].Checks || !r.StartedAt.Equal(runs[3].StartedAt) {
			t.Errorf("ReconcileRunByID = %+v, want the row ReconcileRuns read: %+v", r, runs[3])
		}
		if n, err := db.PruneReconcileRuns(ctx, t0.Add(2*time.Hour)); err != nil || n != 2 {
			t.Fatalf("PruneReconcileRuns = %d %v, want 2", n, err)
		}
		if runs, _ := db.ReconcileRuns(ctx, 1); len(runs) != 1 || runs[0].ID != ids[3] {
			t.Errorf("after prune, newest = %+v", runs)
		}
	})
}

// TestLastReconcileRunExcept: the newest run of another trigger, however
// many sweeps came after it, and none on a table of sweeps only.
func TestLastReconcileRunExcept(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		add := func(trigger string) int64 {
			id, err := db.InsertReconcileRun(ctx, ReconcileRun{Trigger: trigger, StartedAt: t0, Status: "ok", Checks: "[]"})
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		check := func(step string, wantID int64) {
			t.Helper()
			r, ok, err := db.LastReconcileRunExcept(ctx, "sweep")
			if err != nil || ok != (wantID != 0) || r.ID != wantID {
				t.Errorf("%s: LastReconcileRunExcept = %d, %v, %v; want %d", step, r.ID, ok, err, wantID)
			}
		}
		check("no runs", 0)
		add("sweep")
		check("sweeps only", 0)
		add("manual")
		full := add("schedule")
		for range 120 { // an hour of sweeps after it
			add("sweep")
		}
		check("behind an hour of sweeps", full)
		cli := add("cli")
		check("newest", cli)
	})
}
