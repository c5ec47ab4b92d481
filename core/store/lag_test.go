package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"seatflow/core"
)

// TestExpiryLagReads checks the dashboard's and the gauge's reads on rows
// whose expiry and close times are known, at both edges of every bucket.
func TestExpiryLagReads(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		show := mkShow(t, db, 2, 12)
		now := t0.Add(2 * time.Hour)
		type row struct {
			no             string
			expire, closed time.Duration // from now; closed 0: still pending
			reason, actor  string
			status         core.OrderStatus
		}
		rows := []row{
			{"late-timeout-a", -50 * time.Minute, -50*time.Minute + 99*time.Millisecond, core.ReasonTimeout, core.ActorSystem, core.StatusCancelled},
			{"late-timeout-b", -40 * time.Minute, -40*time.Minute + 100*time.Millisecond, core.ReasonTimeout, core.ActorSystem, core.StatusCancelled},
			{"late-sweep", -30 * time.Minute, -30*time.Minute + 20*time.Second, core.ReasonReconcile, core.ActorSweep, core.StatusCancelled},
			{"late-reconcile", -20 * time.Minute, -16 * time.Minute, core.ReasonReconcile, "reconcile", core.StatusCancelled},
			{"customer", -10 * time.Minute, -5 * time.Minute, core.ReasonCustomer, "user:1", core.StatusCancelled},
			{"paid-late", -12 * time.Minute, -7 * time.Minute, "", "payment", core.StatusPaid},
			{"refunded-late", -35 * time.Minute, -35*time.Minute + 30*time.Second, "", "payment", core.StatusPaid},
			{"old-timeout", -3 * time.Hour, -3*time.Hour + time.Second, core.ReasonTimeout, core.ActorSystem, core.StatusCancelled},
			{"overdue-now", -3 * time.Minute, 0, "", "", core.StatusPending},
			{"pending-ok", 10 * time.Minute, 0, "", "", core.StatusPending},
		}
		for i, r := range rows {
			o := pending(r.no, show.ID, int64(i+1), now.Add(r.expire-15*time.Minute), fmt.Sprintf("A-%d", i+1))
			mustPlace(t, db, o)
			if r.status != core.StatusPending {
				if _, err := transition(ctx, db, r.no, r.status, core.Transition{At: now.Add(r.closed), Reason: r.reason,
					Actor: r.actor}); err != nil {
					t.Fatal(err)
				}
			}
		}

		// Paid 30 s late, refunded since: closed_at stays the payment's.
		if _, err := db.X().ExecContext(ctx, `UPDATE order_info SET status = ? WHERE order_no = ?`,
			int(core.StatusRefunded), "refunded-late"); err != nil {
			t.Fatal(err)
		}

		n, err := db.OverdueCount(ctx, now)
		if err != nil || n != 1 {
			t.Errorf("OverdueCount = %d, %v; want 1", n, err)
		}

		bounds := []time.Duration{100 * time.Millisecond, time.Second, time.Minute}
		lag, err := db.ExpiryLag(ctx, now.Add(-time.Hour), bounds)
		want := map[string][]int{
			core.PathTimeout:   {1, 1, 0, 0}, // 99 ms below 100 ms, 100 ms in the next bucket
			core.PathSweep:     {0, 0, 1, 0},
			core.PathReconcile: {0, 0, 0, 1},
		}
		if err != nil || !reflect.DeepEqual(lag, want) {
			t.Errorf("ExpiryLag = %v, %v; want %v", lag, err, want)
		}

		// The most overdue at once per minute of the last hour: one in the
		// minutes of -50m, -40m, -35m and -30m (a 99 ms, a 100 ms, the
		// refunded order's 30 s and a 20 s span), -20m to -17m (closed at
		// -16m exactly: not overdue then), two while paid-late (-12m to
		// -7m) and the customer's cancel (-10m to -5m) overlap, and
		// overdue-now from -3m.
		got, err := db.OverdueMax(ctx, now.Add(-time.Hour), now, time.Minute, 0)
		wantMax := make([]int, 60)
		for _, k := range []int{10, 20, 25, 30, 40, 41, 42, 43, 48, 49, 53, 54, 57, 58, 59} {
			wantMax[k] = 1
		}
		wantMax[50], wantMax[51], wantMax[52] = 2, 2, 2
		if err != nil || !reflect.DeepEqual(got, wantMax) {
			t.Errorf("OverdueMax =\n%v, %v; want\n%v", got, err, wantMax)
		}
		// A window ending within a step: its last step is cut short.
		if got, err := db.OverdueMax(ctx, now.Add(-4*time.Minute), now.Add(-150*time.Second), time.Minute, 0); err != nil || !reflect.DeepEqual(got, []int{0, 1}) {
			t.Errorf("OverdueMax of -4m to -2.5m = %v, %v; want [0 1]", got, err)
		}
	})
}

// TestOpsQueryPlans shows that the ops reads use their indexes on a table
// shaped like production (seedPlanData: many closed orders, few pending).
func TestOpsQueryPlans(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		seedPlanData(t, db)
		now := t0.Add(time.Hour)
		ix := func(my, lite string) string {
			if db.Dialect() == MySQL {
				return my
			}
			return lite
		}
		bucket, bucketArgs := lagBucketExpr([]time.Duration{time.Second, time.Minute})
		for _, tt := range []struct {
			name  string
			query string
			args  []any
			want  string
		}{
			{"OverdueCount", overdueCountSQL, []any{ms(now)}, ix("idx_status_expire", "order_info_idx_status_expire")},
			{"ExpiryLag", expiryLagSQL(bucket), append(bucketArgs, ms(t0), core.ReasonTimeout, core.ReasonReconcile),
				ix("idx_status_closed", "order_info_idx_status_closed")},
			{"OverdueMax pending", overduePendingSQL, []any{ms(now)},
				ix("idx_status_expire", "order_info_idx_status_expire")},
			// Closed after the window's start: none of the seeded rows.
			{"OverdueMax closed", overdueClosedSQL, []any{ms(now), 2000, ms(now)},
				ix("idx_status_closed", "order_info_idx_status_closed")},
			{"OpenDiscrepancyAges", discrepancyAgesSQL(3), []any{ms(now), ms(now), DiscrepancyOpen},
				ix("idx_status_created", "discrepancy_idx_status_created")},
			{"DiscrepancyCases", `SELECT ` + caseCols + ` FROM discrepancy WHERE state IN (?) ORDER BY created_at, id LIMIT ? OFFSET ?`,
				[]any{string(core.CaseOpen), 50, 0}, ix("idx_state_created", "discrepancy_idx_state_created")},
			{"CaseHistory", `SELECT id FROM discrepancy_event WHERE discrepancy_id = ? ORDER BY id`, []any{1},
				ix("idx_discrepancy", "discrepancy_event_idx_discrepancy")},
		} {
			plan := fullPlan(t, db, tt.query, tt.args...)
			t.Logf("%s plan (%s):\n%s", tt.name, db.Dialect(), plan)
			if !strings.Contains(plan, tt.want) {
				t.Errorf("%s does not use %s:\n%s", tt.name, tt.want, plan)
			}
		}
	})
}

// TestMaxOverlap: spans that only touch never count together, a span
// opening at a step's start counts in that step, and an outage shorter
// than a step shows at its full height.
func TestMaxOverlap(t *testing.T) {
	var outage []overdueSpan
	for i := range 23 {
		outage = append(outage, overdueSpan{from: 65_000 + int64(i), to: 95_000})
	}
	for _, tt := range []struct {
		name  string
		spans []overdueSpan
		want  []int
	}{
		{"touching", []overdueSpan{{0, 10}, {10, 20}}, []int{1, 1, 0}},
		{"opens at a step's start", []overdueSpan{{20, 25}}, []int{0, 0, 1}},
		{"closes at a step's start", []overdueSpan{{5, 20}}, []int{1, 1, 0}},
	} {
		if got := maxOverlap(tt.spans, 0, 30, 10); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := maxOverlap(outage, 0, 180_000, 60_000); !reflect.DeepEqual(got, []int{0, 23, 0}) {
		t.Errorf("23 holds overdue for 30 s: %v, want [0 23 0]", got)
	}
}
