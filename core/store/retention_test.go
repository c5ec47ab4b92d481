package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"seatflow/core"
)

// TestPruneOrderEvents deletes exactly the old events of closed orders, in
// batches, and never a payment or an audit line.
func TestPruneOrderEvents(t *testing.T) {
	cutoff := t0.Add(-90 * 24 * time.Hour)
	old, young := cutoff.Add(-time.Hour), cutoff.Add(time.Hour)
	type order struct {
		no       string
		status   core.OrderStatus
		closedAt time.Time
		eventAt  []time.Time
		keep     int // events that must survive
	}
	orders := []order{
		{"paid-old", core.StatusPaid, old, []time.Time{old, old}, 0},
		{"cancelled-old", core.StatusCancelled, old, []time.Time{old}, 0},
		{"refunded-old", core.StatusRefunded, old, []time.Time{old, old, old}, 0},
		{"paid-young", core.StatusPaid, young, []time.Time{old, young}, 2},
		{"pending-old", core.StatusPending, time.Time{}, []time.Time{old}, 1},
		{"closed-old-event-young", core.StatusCancelled, old, []time.Time{old, young}, 1},
	}
	for _, batch := range []int{1, 2, 1000} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, db *DB) {
				ctx := context.Background()
				show := mkShow(t, db, 2, 10)
				for i, o := range orders {
					mustPlace(t, db, pending(o.no, show.ID, int64(i+1), old, fmt.Sprintf("A-%d", i+1)))
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
