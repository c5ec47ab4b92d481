package core_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/delay/dbqueue"
	"seatflow/core/stacktest"
)

// unsendable is the DB queue with its after-commit Send broken: on the
// outbox path nothing may call it.
type unsendable struct{ *dbqueue.Queue }

func (unsendable) Send(context.Context, []core.TimeoutMsg, int, time.Duration) error {
	return errors.New("injected: Send called after the commit")
}

// TestOutboxPlacement: on the DB queue a placement's first timeout message
// is a row of the placing transaction. It commits with the order (even when
// Send would fail), rolls back with it, and a batch writes one per order.
// Both databases, each with a DB queue of its own.
func TestOutboxPlacement(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		q, err := dbqueue.New(st.DB.X(), string(st.DB.Dialect()), dbqueue.Options{Levels: core.DefaultDelayPolicy().Levels})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close() })
		tasks := func(orderNo string) (n int, due int64) {
			t.Helper()
			if err := st.DB.X().QueryRowxContext(ctx, `SELECT COUNT(*), COALESCE(MAX(due_at), 0) FROM delay_task WHERE order_no = ? AND hop = 1`,
				orderNo).Scan(&n, &due); err != nil {
				t.Fatal(err)
			}
			return n, due
		}
		cfg := core.Config{HoldTTL: time.Minute, Delay: core.DefaultDelayPolicy()}
		show := st.NewShow(t, 4, 16)

		t.Run("commits with the order", func(t *testing.T) {
			eng, err := core.NewEngine(cfg, core.Deps{Store: st.DB, Seats: st.Seats, Queue: unsendable{q}})
			if err != nil {
				t.Fatal(err)
			}
			before := time.Now()
			o, err := eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1"}})
			if err != nil {
				t.Fatal(err)
			}
			n, due := tasks(o.OrderNo)
			// 1 minute is level 5 (1 m) of the default table: due a minute after placing.
			if lo, hi := before.Add(time.Minute).UnixMilli(), time.Now().Add(time.Minute).UnixMilli()+1; n != 1 || due < lo || due > hi {
				t.Errorf("%d delay tasks due %d, want one due in [%d, %d]", n, due, lo, hi)
			}
			_, evs, err := eng.Order(ctx, o.OrderNo)
			if err != nil {
				t.Fatal(err)
			}
			if !hasEvent(evs, core.EventTimeoutScheduled) || hasEvent(evs, core.EventTimeoutSendFailed) {
				t.Errorf("events %+v, want timeout_scheduled and no timeout_send_failed", evs)
			}
		})

		t.Run("rolls back with the order", func(t *testing.T) {
			eng, err := core.NewEngine(cfg, core.Deps{Store: st.DB, Seats: st.Seats, Queue: q})
			if err != nil {
				t.Fatal(err)
			}
			lost, err := eng.Place(ctx, core.PlaceRequest{UserID: 2, ShowID: show.ID, SeatIDs: []string{"B-1"}})
			if err != nil {
				t.Fatal(err)
			}
			// The seat store forgets it: the DB's unique seat index refuses the next one.
			if _, err := st.Seats.Release(ctx, show.ID, 2, lost.OrderNo, []string{"B-1"}); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Place(ctx, core.PlaceRequest{UserID: 3, ShowID: show.ID, SeatIDs: []string{"B-1"}}); !errors.Is(err, core.ErrSeatUnavailable) {
				t.Fatalf("place on a seat the DB has taken: %v, want ErrSeatUnavailable", err)
			}
			var n int
			if err := st.DB.X().GetContext(ctx, &n, `SELECT COUNT(*) FROM delay_task d JOIN order_info o ON o.order_no = d.order_no WHERE o.show_id = ? AND o.user_id = 3`, show.ID); err != nil {
				t.Fatal(err)
			}
			var all int
			if err := st.DB.X().GetContext(ctx, &all, `SELECT COUNT(*) FROM delay_task WHERE order_no NOT IN (SELECT order_no FROM order_info)`); err != nil {
				t.Fatal(err)
			}
			if n != 0 || all != 0 {
				t.Errorf("%d tasks of the refused order, %d tasks without an order; want none", n, all)
			}
		})

		t.Run("one per order of a batch", func(t *testing.T) {
			gs := &gatedStore{Store: st.DB, gate: make(chan struct{})}
			eng, err := core.NewEngine(cfg, core.Deps{Store: gs, Seats: st.Seats, Queue: unsendable{q}})
			if err != nil {
				t.Fatal(err)
			}
			reqs := make([]core.PlaceRequest, 16)
			for i := range reqs {
				reqs[i] = core.PlaceRequest{UserID: int64(100 + i), ShowID: show.ID, SeatIDs: []string{fmt.Sprintf("C-%d", i+1)}}
			}
			for i, err := range placeInOneBatch(t, eng, gs, show.ID, []string{"D-1", "D-2", "D-3", "D-4"}, reqs) {
				if err != nil {
					t.Fatalf("placement %d: %v", i, err)
				}
			}
			for i, r := range reqs {
				nos := ordersOf(t, st, show.ID, r.UserID)
				if len(nos) != 1 {
					t.Fatalf("order %d: %d orders", i, len(nos))
				}
				if n, _ := tasks(nos[0]); n != 1 {
					t.Errorf("order %d: %d delay tasks, want 1", i, n)
				}
			}
		})
	})
}
