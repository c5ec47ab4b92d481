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

		// Overdue at: -45m (late-timeout-b overdue for 100 ms, not at this
		// instant), -30m+10s (late-sweep), -18m (late-reconcile), -10m
		// (paid-late), now (overdue-now).
		ts := []time.Time{now.Add(-45 * time.Minute), now.Add(-30*time.Minute + 10*time.Second), now.Add(-18 * time.Minute),
			now.Add(-10 * time.Minute), now.Add(-2 * time.Minute), now}
		got, err := db.OverdueAt(ctx, ts)
		if wantAt := []int{0, 1, 1, 1, 1, 1}; err != nil || !reflect.DeepEqual(got, wantAt) {
			t.Errorf("OverdueAt = %v, %v; want %v", got, err, wantAt)
		}
		// Edges: overdue-now expires at -3m (not overdue at that instant);
		// paid-late is closed at -7m (overdue just before, not at it), while
		// the customer's cancel of an expired hold at -5m is still ahead.
		edges := []time.Time{now.Add(-3 * time.Minute), now.Add(-7 * time.Minute), now.Add(-7*time.Minute - time.Millisecond)}
		if got, err := db.OverdueAt(ctx, edges); err != nil || !reflect.DeepEqual(got, []int{0, 1, 2}) {
			t.Errorf("OverdueAt at the edges = %v, %v; want [0 1 2] (expire_at < t, closed_at > t)", got, err)
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
			{"OverdueAt pending", overdueAtSQL(1, true), []any{ms(now), ms(now)},
				ix("idx_status_expire", "order_info_idx_status_expire")},
			// Closed after the window's start: none of the seeded rows.
			{"OverdueAt closed", overdueAtSQL(1, false), []any{ms(now), ms(now), ms(now)},
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
