package reconcile_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
)

// One test per fault, each on the embedded and the real stack, each ending
// with a reconcile run and DESIGN.md's invariants checked seat by seat.

func TestFaultTimeoutNeverSent(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		f.queue.failSend.Store(true) // the broker is down at placement
		o := f.place(t, 1, "A-1", "A-2")

		f.clock.Advance(holdTTL - time.Millisecond)
		wantCounts(t, f.run(t), nil) // not expired yet: left alone

		f.clock.Advance(time.Millisecond) // expire_at <= now
		run := f.run(t)
		wantCounts(t, run, map[string][2]int{reconcile.CheckExpiredPending: {1, 1}})
		got, err := st.DB.Order(context.Background(), o.OrderNo)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != core.StatusCancelled || got.CancelReason != core.ReasonReconcile || got.CancelActor != reconcile.Actor {
			t.Errorf("order after reconcile: %s by %s/%s, want cancelled by reconcile", got.Status, got.CancelReason, got.CancelActor)
		}
		f.wantSeat(t, "A-1", core.SeatAvailable, "")
		f.wantRepaired(t, o.OrderNo, reconcile.CheckExpiredPending)
		if v := metricValue(t, f.reg, "seatflow_reconcile_fixed_total", reconcile.CheckExpiredPending); v != 1 {
			t.Errorf("seatflow_reconcile_fixed_total{check=expired_pending} = %v, want 1", v)
		}
		f.checkInvariants(t)
	})
}

func TestFaultReleaseFailsAfterCancel(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		o := f.place(t, 1, "A-1", "A-2")
		f.seats.failRelease.Store(true)
		f.cancel(t, o) // committed; the release after it fails
		f.wantSeat(t, "A-1", core.SeatLocked, o.OrderNo)

		// The lock is younger than the grace period: left alone for now.
		wantCounts(t, f.run(t), nil)
		f.wantSeat(t, "A-1", core.SeatLocked, o.OrderNo)

		f.clock.Advance(grace + time.Second)
		run := f.run(t)
		wantCounts(t, run, map[string][2]int{reconcile.CheckStaleRedisLock: {2, 2}})
		f.wantSeat(t, "A-1", core.SeatAvailable, "")
		f.wantRepaired(t, o.OrderNo, reconcile.CheckStaleRedisLock)
		f.checkInvariants(t)
	})
}

func TestFaultRedisFlushed(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		paid := f.place(t, 1, "A-1", "A-2")
		f.pay(t, paid)
		pending := f.place(t, 2, "B-1")
		f.cancel(t, f.place(t, 3, "C-1"))
		mine := f.place(t, 1, "D-1")
		f.flushSeats(t)

		// Everything just happened: a payment's sell or a placement may be
		// in flight, so nothing is touched within the grace period.
		wantCounts(t, f.run(t), nil)

		f.clock.Advance(grace + time.Second)
		run := f.run(t)
		wantCounts(t, run, map[string][2]int{
			reconcile.CheckPaidNotSold:    {1, 1}, // one order, two seats
			reconcile.CheckStaleRedisLock: {2, 2}, // two pending orders locked again
		})
		f.wantSeat(t, "A-2", core.SeatSold, paid.OrderNo)
		f.wantSeat(t, "B-1", core.SeatLocked, pending.OrderNo)
		f.wantSeat(t, "D-1", core.SeatLocked, mine.OrderNo)
		f.wantRepaired(t, paid.OrderNo, reconcile.CheckPaidNotSold)
		f.wantRepaired(t, pending.OrderNo, reconcile.CheckStaleRedisLock)
		f.checkInvariants(t)
		// The restored counters hold the limit again: user 1 has 3 of 6.
		if _, err := f.eng.Place(context.Background(), core.PlaceRequest{UserID: 1, ShowID: f.show.ID,
			SeatIDs: []string{"E-1", "E-2", "E-3", "E-4"}}); err == nil {
			t.Error("user 1 placed 4 more seats with 3 of 6 taken: the counters were not restored")
		}
	})
}

func TestFaultPaidSeatsStayedLocked(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		o := f.place(t, 1, "A-1", "A-2")
		f.seats.failSell.Store(true)
		f.pay(t, o) // committed; marking the seats sold fails

		wantCounts(t, f.run(t), nil) // paid moments ago: its own sell may be on its way
		f.wantSeat(t, "A-1", core.SeatLocked, o.OrderNo)

		f.clock.Advance(grace + time.Second)
		run := f.run(t)
		// stale_redis_lock must not free seats the DB gives to a paid order.
		wantCounts(t, run, map[string][2]int{reconcile.CheckPaidNotSold: {1, 1}})
		f.wantSeat(t, "A-1", core.SeatSold, o.OrderNo)
		f.wantSeat(t, "A-2", core.SeatSold, o.OrderNo)
		f.wantRepaired(t, o.OrderNo, reconcile.CheckPaidNotSold)
		f.checkInvariants(t)
	})
}

func TestFaultOrderSeatLeftBehind(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		ctx := context.Background()
		o := f.place(t, 1, "A-1")
		f.cancel(t, o)
		// A restore brought back a row of the cancelled order, and a row of
		// an order that does not exist at all.
		for _, row := range []struct {
			seat, order string
			user        int64
		}{{"A-1", o.OrderNo, 1}, {"B-5", "SFNOSUCHORDER", 9}} {
			if _, err := st.DB.X().ExecContext(ctx, st.DB.X().Rebind(`INSERT INTO order_seat
 (show_id, seat_id, order_no, user_id, created_at, ticket_code) VALUES (?, ?, ?, ?, ?, ?)`),
				f.show.ID, row.seat, row.order, row.user, f.clock.Now().UnixMilli(), core.NewSeatCode()); err != nil {
				t.Fatal(err)
			}
		}
		if err := reconcile.CheckInvariants(ctx, st.DB, st.Seats, f.clock.Now()); err == nil {
			t.Fatal("the invariant checker missed the orphan rows")
		}
		run := f.run(t)
		wantCounts(t, run, map[string][2]int{reconcile.CheckOrphanOrderSeat: {2, 2}})
		f.wantRepaired(t, o.OrderNo, reconcile.CheckOrphanOrderSeat)
		f.wantRepaired(t, "SFNOSUCHORDER", reconcile.CheckOrphanOrderSeat)
		f.checkInvariants(t)
		// The seat can be sold again.
		f.place(t, 2, "A-1", "B-5")
	})
}

func TestFaultLimitCountersCorrupted(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		ctx := context.Background()
		f.place(t, 1, "A-1", "A-2")
		f.pay(t, f.place(t, 2, "B-1"))
		for user, n := range map[int64]int{1: 6, 2: 0, 3: 4} {
			if err := st.Seats.SetLimit(ctx, f.show.ID, user, n); err != nil {
				t.Fatal(err)
			}
		}
		run := f.run(t)
		wantCounts(t, run, map[string][2]int{reconcile.CheckLimitDrift: {3, 3}})
		limits, err := st.Seats.Limits(ctx, f.show.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int64]int{1: 2, 2: 1}; !maps.Equal(limits, want) {
			t.Errorf("counters after reconcile = %v, want %v", limits, want)
		}
		f.checkInvariants(t)
	})
}

// TestStaleLockGrace: a seat locked with no order behind it is what an
// order being placed right now looks like (Lock comes before the order's
// transaction). Reconcile must leave it alone until it is older than the
// grace period, to the millisecond.
func TestStaleLockGrace(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		ctx := context.Background()
		tests := []struct {
			seat  string
			age   time.Duration
			freed bool
		}{
			{"A-1", 0, false},
			{"A-2", time.Minute, false},
			{"A-3", grace - time.Millisecond, false},
			{"A-4", grace, false},
			{"A-5", grace + time.Millisecond, true},
			{"A-6", time.Hour, true},
		}
		for i, tt := range tests {
			if err := st.Seats.Lock(ctx, f.show.ID, int64(10+i), "SFPLACING"+tt.seat, []string{tt.seat}, 6,
				f.clock.Now().Add(-tt.age)); err != nil {
				t.Fatal(err)
			}
		}
		run := f.run(t)
		wantCounts(t, run, map[string][2]int{reconcile.CheckStaleRedisLock: {2, 2}})
		for _, tt := range tests {
			if tt.freed {
				f.wantSeat(t, tt.seat, core.SeatAvailable, "")
			} else {
				f.wantSeat(t, tt.seat, core.SeatLocked, "SFPLACING"+tt.seat)
			}
		}
		// The placements never commit: once past the grace period, they go too.
		f.clock.Advance(grace + time.Millisecond)
		wantCounts(t, f.run(t), map[string][2]int{reconcile.CheckStaleRedisLock: {4, 4}})
		f.checkInvariants(t)
	})
}

// TestDryRunChangesNothing: with every kind of anomaly present, a dry run
// reports each and changes nothing; a real run then repairs them all.
func TestDryRunChangesNothing(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		ctx := context.Background()
		f.queue.failSend.Store(true)
		expired := f.place(t, 1, "A-1")
		f.queue.failSend.Store(false)
		f.seats.failSell.Store(true)
		f.pay(t, f.place(t, 2, "B-1"))
		f.seats.failSell.Store(false)
		f.seats.failRelease.Store(true)
		f.cancel(t, f.place(t, 3, "C-1"))
		f.seats.failRelease.Store(false)
		late := f.place(t, 4, "D-1")
		f.cancel(t, late)
		if res, err := f.eng.HandlePayment(ctx, core.Payment{TxnID: "LATE", OrderNo: late.OrderNo,
			AmountCents: late.AmountCents}); err != nil || res != core.PaymentDiscrepancy {
			t.Fatalf("payment after cancel: %v %v", res, err)
		}
		if _, err := st.DB.X().ExecContext(ctx, st.DB.X().Rebind(`INSERT INTO order_seat
 (show_id, seat_id, order_no, user_id, created_at, ticket_code) VALUES (?, 'E-1', 'SFGONE', 5, 0, ?)`), f.show.ID, core.NewSeatCode()); err != nil {
			t.Fatal(err)
		}
		if err := st.Seats.SetLimit(ctx, f.show.ID, 6, 3); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(holdTTL)

		before := f.snapshot(t)
		dry, err := f.rec.RunOnce(ctx, reconcile.TriggerCLI, true)
		if err != nil || !dry.OK() || !dry.DryRun {
			t.Fatalf("dry run: %+v %v", dry, err)
		}
		want := map[string][2]int{
			reconcile.CheckExpiredPending:  {1, 0},
			reconcile.CheckPaidNotSold:     {1, 0},
			reconcile.CheckOrphanOrderSeat: {1, 0},
			reconcile.CheckStaleRedisLock:  {1, 0},
			reconcile.CheckLimitDrift:      {1, 0},
			reconcile.CheckOpenDiscrepancy: {1, 0},
		}
		wantCounts(t, dry, want)
		if c, _ := dry.Check(reconcile.CheckExpiredPending); len(c.Items) != 1 || c.Items[0].OrderNo != expired.OrderNo ||
			c.Items[0].Action != reconcile.ActionCancel || c.Items[0].Fixed {
			t.Errorf("dry run expired_pending items = %+v", c.Items)
		}
		if after := f.snapshot(t); after != before {
			t.Errorf("a dry run changed state:\nbefore %s\nafter  %s", before, after)
		}

		run := f.run(t)
		for name, w := range want {
			if name != reconcile.CheckOpenDiscrepancy {
				want[name] = [2]int{w[0], w[0]}
			}
		}
		wantCounts(t, run, want)
		f.checkInvariants(t)
		// Repaired: a second run finds only what needs a person.
		wantCounts(t, f.run(t), map[string][2]int{reconcile.CheckOpenDiscrepancy: {1, 0}})
	})
}

// TestInvariantPaymentsAccountedFor: the checker finds a payment that was
// neither applied nor recorded, in each of the ways it can be so.
func TestInvariantPaymentsAccountedFor(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		ctx := context.Background()
		paid := f.place(t, 1, "A-1")
		f.pay(t, paid)
		f.checkInvariants(t)
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := st.DB.X().ExecContext(ctx, st.DB.X().Rebind(q), args...); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			name, want string
			breach     func()
		}{
			{"money with no outcome", "was neither applied nor recorded", func() {
				exec(`INSERT INTO payment (txn_id, order_no, amount_cents, paid_at, received_at) VALUES ('T-lost', ?, 100, 0, 0)`, paid.OrderNo)
			}},
			{"a discrepancy with no case", "is a discrepancy with no discrepancy row", func() {
				exec(`INSERT INTO payment (txn_id, order_no, amount_cents, paid_at, received_at, result) VALUES ('T-nocase', 'SF-X', 100, 0, 0, 'unknown_order')`)
			}},
			{"paid row, order not paid by it", "is marked paid but its order is not paid by it", func() {
				exec(`UPDATE order_info SET paid_txn_id = 'T-other' WHERE order_no = ?`, paid.OrderNo)
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				c.breach()
				err := reconcile.CheckInvariants(ctx, st.DB, st.Seats, f.clock.Now())
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("checker: %v, want %q", err, c.want)
				}
			})
		}
	})
}
