package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"seatflow/core"
)

// TestPruneOrderEvents deletes exactly the old events of orders closed
// before the cut-off with no refund or discrepancy case still open or
// settled since, and of order numbers no order has, in batches, and never a
// payment or an audit line.
func TestPruneOrderEvents(t *testing.T) {
	cutoff := t0.Add(-90 * 24 * time.Hour)
	old, young := cutoff.Add(-time.Hour), cutoff.Add(time.Hour)
	type refund struct {
		state              core.RefundState
		created, decidedAt time.Time
	}
	type discrepancy struct {
		status     string
		resolvedAt time.Time
	}
	type order struct {
		no       string
		status   core.OrderStatus
		closedAt time.Time
		eventAt  []time.Time
		keep     int          // events that must survive
		ghost    bool         // no order has the number (a payment for an unknown order, a repaired orphan lock)
		refund   *refund      // a refund row of the order
		disc     *discrepancy // a discrepancy case of the order
	}
	orders := []order{
		{no: "paid-old", status: core.StatusPaid, closedAt: old, eventAt: []time.Time{old, old}},
		{no: "cancelled-old", status: core.StatusCancelled, closedAt: old, eventAt: []time.Time{old}},
		{no: "refunded-old", status: core.StatusRefunded, closedAt: old, eventAt: []time.Time{old, old, old},
			refund: &refund{core.RefundDone, old, old}},
		{no: "paid-young", status: core.StatusPaid, closedAt: young, eventAt: []time.Time{old, young}, keep: 2},
		{no: "pending-old", status: core.StatusPending, eventAt: []time.Time{old}, keep: 1},
		{no: "closed-old-event-young", status: core.StatusCancelled, closedAt: old, eventAt: []time.Time{old, young}, keep: 1},
		// closed_at keeps the payment's time: the refund's own time counts.
		{no: "paid-old-refunded-young", status: core.StatusRefunded, closedAt: old, eventAt: []time.Time{old, young}, keep: 2,
			refund: &refund{core.RefundDone, young, young}},
		{no: "paid-old-refund-requested-old", status: core.StatusPaid, closedAt: old, eventAt: []time.Time{old, old}, keep: 2,
			refund: &refund{core.RefundRequested, old, time.Time{}}},
		{no: "paid-old-refund-rejected-young", status: core.StatusPaid, closedAt: old, eventAt: []time.Time{old}, keep: 1,
			refund: &refund{core.RefundRejected, old, young}},
		{no: "paid-old-discrepancy-open", status: core.StatusPaid, closedAt: old, eventAt: []time.Time{old, old}, keep: 2,
			disc: &discrepancy{core.DiscrepancyOpen, time.Time{}}},
		{no: "paid-old-discrepancy-resolved-young", status: core.StatusPaid, closedAt: old, eventAt: []time.Time{old}, keep: 1,
			disc: &discrepancy{core.DiscrepancyResolved, young}},
		{no: "paid-old-discrepancy-resolved-old", status: core.StatusPaid, closedAt: old, eventAt: []time.Time{old},
			disc: &discrepancy{core.DiscrepancyResolved, old}},
		{no: "ghost-old", ghost: true, eventAt: []time.Time{old, old}},
		{no: "ghost-young", ghost: true, eventAt: []time.Time{old, young}, keep: 1},
		{no: "ghost-discrepancy-open", ghost: true, eventAt: []time.Time{old}, keep: 1,
			disc: &discrepancy{core.DiscrepancyOpen, time.Time{}}},
	}
	for _, batch := range []int{1, 2, 1000} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, db *DB) {
				ctx := context.Background()
				show := mkShow(t, db, 2, 10)
				for i, o := range orders {
					if o.refund != nil {
						if _, err := db.X().ExecContext(ctx, `INSERT INTO refund (order_no, amount_cents, reason, requested_by, state,
 created_at, decided_at) VALUES (?, 1000, 'test', 's', ?, ?, ?)`, o.no, o.refund.state, ms(o.refund.created), ms(o.refund.decidedAt)); err != nil {
							t.Fatal(err)
						}
					}
					if o.disc != nil {
						if _, err := db.X().ExecContext(ctx, `INSERT INTO discrepancy (order_no, txn_id, kind, amount_cents, created_at,
 status, resolved_at, note) VALUES (?, ?, 'late_payment', 1000, ?, ?, ?, '')`, o.no, "d-"+o.no, ms(old), o.disc.status, ms(o.disc.resolvedAt)); err != nil {
							t.Fatal(err)
						}
					}
					if o.ghost {
						continue
					}
					mustPlace(t, db, pending(o.no, show.ID, int64(i+1), old, fmt.Sprintf("%c-%d", 'A'+i/10, i%10+1)))
					if _, err := db.X().ExecContext(ctx, `UPDATE order_info SET status = ?, closed_at = ? WHERE order_no = ?`,
						o.status, ms(o.closedAt), o.no); err != nil {
						t.Fatal(err)
					}
				}
				// Events are appended in time order, as the engine writes them.
				for _, when := range []time.Time{old, young} {
					for _, o := range orders {
						for _, at := range o.eventAt {
							if !at.Equal(when) {
								continue
							}
							if err := db.AddEvent(ctx, core.Event{OrderNo: o.no, At: at, Kind: "test"}); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				if _, err := db.X().ExecContext(ctx, `INSERT INTO payment (txn_id, order_no, amount_cents, paid_at, received_at, result)
 VALUES ('t1', 'paid-old', 1000, ?, ?, 'applied')`, ms(old), ms(old)); err != nil {
					t.Fatal(err)
				}
				if err := db.AddAudit(ctx, core.AuditEntry{At: old, Staff: "s", Action: "test"}); err != nil {
					t.Fatal(err)
				}
				var deleted, batches int
				for from := int64(0); ; {
					b, err := db.PruneOrderEvents(ctx, from, cutoff, batch)
					if err != nil {
						t.Fatal(err)
					}
					deleted += b.Deleted
					if b.Done {
						break
					}
					if batches++; batches > 100 {
						t.Fatal("pruning does not end")
					}
					from = b.Next
				}
				want := 0
				for _, o := range orders {
					if got := count(t, db, `SELECT COUNT(*) FROM order_event WHERE order_no = ?`, o.no); got != o.keep {
						t.Errorf("%s: %d events left, want %d", o.no, got, o.keep)
					}
					want += len(o.eventAt) - o.keep
				}
				if deleted != want {
					t.Errorf("reported %d deleted, want %d", deleted, want)
				}
				if n := count(t, db, `SELECT COUNT(*) FROM payment`); n != 1 {
					t.Errorf("%d payments left, want 1", n)
				}
				if n := count(t, db, `SELECT COUNT(*) FROM audit_log`); n != 1 {
					t.Errorf("%d audit lines left, want 1", n)
				}
			})
		})
	}
}

// TestShowsEndedBefore returns the shows started before the cut-off, but
// not one with an order still pending: its holds and counters must stay.
func TestShowsEndedBefore(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		ids := map[string]int64{}
		for _, c := range []struct {
			name string
			at   time.Time
		}{{"over", t0.Add(-48 * time.Hour)}, {"over, one pending", t0.Add(-48 * time.Hour)},
			{"over, one paid", t0.Add(-48 * time.Hour)}, {"undated", time.Time{}}, {"soon", t0.Add(time.Hour)}} {
			s, err := db.CreateShow(ctx, core.Show{Name: c.name, StartsAt: c.at}, DemoSeats(1, 1, 1))
			if err != nil {
				t.Fatal(err)
			}
			ids[c.name] = s.ID
		}
		placed := t0.Add(-49 * time.Hour)
		mustPlace(t, db, pending("pending", ids["over, one pending"], 1, placed, "A-1"))
		mustPlace(t, db, pending("paid", ids["over, one paid"], 1, placed, "A-1"))
		if won, err := transition(ctx, db, "paid", core.StatusPaid, core.Transition{At: placed, TxnID: "t-paid"}); err != nil || !won {
			t.Fatalf("pay: %v %v", won, err)
		}
		got, err := db.ShowsEndedBefore(ctx, t0.Add(-24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if want := []int64{ids["over"], ids["over, one paid"]}; !slices.Equal(got, want) {
			t.Errorf("ShowsEndedBefore = %v, want %v (ids %v)", got, want, ids)
		}
	})
}

// TestPruneOrderEventsPlan: one pruning DELETE reads a primary-key range of
// order_event and, per row, an order_no index of each table it consults.
func TestPruneOrderEventsPlan(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		seedPlanData(t, db)
		for i := range 300 {
			no := fmt.Sprintf("P%04d", i)
			if err := db.AddEvent(ctx, core.Event{OrderNo: no, At: t0, Kind: "test"}); err != nil {
				t.Fatal(err)
			}
			if i%10 == 0 {
				if _, err := db.X().ExecContext(ctx, `INSERT INTO refund (order_no, amount_cents, reason, requested_by, state,
 created_at) VALUES (?, 100, 'test', 's', ?, ?)`, no, core.RefundDone, ms(t0)); err != nil {
					t.Fatal(err)
				}
			}
		}
		stats := "ANALYZE"
		if db.Dialect() == MySQL {
			stats = "ANALYZE TABLE order_event, refund"
		}
		if _, err := db.X().ExecContext(ctx, stats); err != nil {
			t.Fatal(err)
		}
		cut := ms(t0.Add(time.Hour))
		plan := fullPlan(t, db, pruneEventsSQL, int64(1), int64(101), cut, cut, string(core.RefundRequested), cut, cut,
			DiscrepancyOpen, cut)
		t.Logf("prune plan (%s):\n%s", db.Dialect(), plan)
		want := []string{"table=order_event type=range key=PRIMARY", "table=o type=eq_ref key=uk_order_no",
			"table=r type=ref key=idx_order_no", "table=d type=ref key=idx_order_no"}
		if db.Dialect() != MySQL {
			want = []string{"SEARCH order_event USING INTEGER PRIMARY KEY", "SEARCH o USING INDEX order_info_uk_order_no",
				"SEARCH r USING INDEX refund_idx_order_no", "SEARCH d USING INDEX"}
		}
		for _, w := range want {
			if !strings.Contains(plan, w) {
				t.Errorf("the prune DELETE does not use %s:\n%s", w, plan)
			}
		}
		for _, bad := range []string{"type=ALL", "SCAN "} {
			if strings.Contains(plan, bad) {
				t.Errorf("%s in the prune DELETE's plan:\n%s", bad, plan)
			}
		}
	})
}
