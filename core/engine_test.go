package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// fixture is one engine on one stack with a fresh 10×10 show.
type fixture struct {
	st    *stacktest.Stack
	eng   *core.Engine
	clock *stacktest.Clock
	show  core.Show
}

func newFixture(t *testing.T, st *stacktest.Stack, cfg core.Config) *fixture {
	t.Helper()
	clock := stacktest.NewClock(time.Now())
	if cfg.PurchaseLimit == 0 {
		cfg.PurchaseLimit = 6
	}
	return &fixture{st: st, eng: st.Engine(t, cfg, clock), clock: clock, show: st.NewShow(t, 10, 10)}
}

func (f *fixture) place(t *testing.T, user int64, seats ...string) core.Order {
	t.Helper()
	o, err := f.eng.Place(context.Background(), core.PlaceRequest{UserID: user, ShowID: f.show.ID, SeatIDs: seats})
	if err != nil {
		t.Fatalf("place %v for user %d: %v", seats, user, err)
	}
	return o
}

// seatStates returns the seat store's state of the named seats.
func (f *fixture) seatStates(t *testing.T, ids ...string) map[string]core.SeatState {
	t.Helper()
	holds, err := f.st.Seats.Holds(context.Background(), f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]core.SeatState, len(ids))
	for _, id := range ids {
		out[id] = core.SeatAvailable
	}
	for _, h := range holds {
		if _, ok := out[h.SeatID]; ok {
			out[h.SeatID] = h.State
		}
	}
	return out
}

func (f *fixture) wantSeats(t *testing.T, want core.SeatState, ids ...string) {
	t.Helper()
	for id, got := range f.seatStates(t, ids...) {
		if got != want {
			t.Errorf("seat %s is %v in the seat store, want %v", id, got, want)
		}
	}
}

// checkSeatsMatchDB is DESIGN.md's invariant: the seat store equals the
// state derived from the DB, seat by seat.
func (f *fixture) checkSeatsMatchDB(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	taken, err := f.st.DB.TakenSeats(ctx, f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	holds, err := f.st.Seats.Holds(ctx, f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	key := func(h core.SeatHold) string { return fmt.Sprintf("%s=%v/%s", h.SeatID, h.State, h.OrderNo) }
	var a, b []string
	for _, h := range taken {
		a = append(a, key(h))
	}
	for _, h := range holds {
		b = append(b, key(h))
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Errorf("seat store != DB\n db:    %v\n redis: %v", a, b)
	}
}

func (f *fixture) events(t *testing.T, orderNo string, kind string) []core.Event {
	t.Helper()
	_, evs, err := f.eng.Order(context.Background(), orderNo)
	if err != nil {
		t.Fatal(err)
	}
	var out []core.Event
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func (f *fixture) status(t *testing.T, orderNo string) core.OrderStatus {
	t.Helper()
	o, _, err := f.eng.Order(context.Background(), orderNo)
	if err != nil {
		t.Fatal(err)
	}
	return o.Status
}

func (f *fixture) pay(t *testing.T, o core.Order, txn string) (core.PaymentResult, error) {
	t.Helper()
	return f.eng.HandlePayment(context.Background(), core.Payment{OrderNo: o.OrderNo, TxnID: txn, AmountCents: o.AmountCents})
}

func TestEngineContract(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()

		t.Run("place holds seats and schedules the timeout", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			o := f.place(t, 7, "A-1", "A-2")
			if o.Status != core.StatusPending || o.AmountCents <= 0 || !o.ExpireAt.Equal(f.clock.Now().Add(15*time.Minute)) {
				t.Fatalf("placed order = %+v", o)
			}
			f.wantSeats(t, core.SeatLocked, "A-1", "A-2")
			sched := f.events(t, o.OrderNo, core.EventTimeoutScheduled)
			if len(sched) != 1 || sched[0].Detail["level"] != float64(14) {
				t.Fatalf("timeout_scheduled events = %+v, want one at level 14 (10 m)", sched)
			}
			if len(f.events(t, o.OrderNo, core.EventPlaced)) != 1 {
				t.Fatal("no placed event")
			}
			f.checkSeatsMatchDB(t)
		})

		t.Run("conflict locks nothing and writes nothing", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			f.place(t, 1, "B-2")
			_, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 2, ShowID: f.show.ID, SeatIDs: []string{"B-1", "B-2", "B-3"}})
			var ce *core.Error
			if !errors.Is(err, core.ErrSeatUnavailable) || !errors.As(err, &ce) || !slices.Equal(ce.Seats, []string{"B-2"}) {
				t.Fatalf("err = %v, want seat_unavailable naming B-2", err)
			}
			f.wantSeats(t, core.SeatAvailable, "B-1", "B-3")
			f.checkSeatsMatchDB(t)
		})

		t.Run("purchase limit", func(t *testing.T) {
			f := newFixture(t, st, core.Config{PurchaseLimit: 4})
			f.place(t, 3, "C-1", "C-2", "C-3")
			if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 3, ShowID: f.show.ID, SeatIDs: []string{"C-4", "C-5"}}); !errors.Is(err, core.ErrPurchaseLimit) {
				t.Fatalf("err = %v, want purchase_limit", err)
			}
			f.place(t, 3, "C-4") // exactly at the limit
			f.place(t, 4, "C-5") // another user is not limited by user 3
		})

		t.Run("customer cancel releases seats; repeat is ok; other user sees nothing", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			o := f.place(t, 5, "D-1", "D-2")
			if _, err := f.eng.Cancel(ctx, o.OrderNo, 6); !errors.Is(err, core.ErrOrderNotFound) {
				t.Fatalf("cancel by another user: %v, want order_not_found", err)
			}
			for range 2 {
				got, err := f.eng.Cancel(ctx, o.OrderNo, 5)
				if err != nil || got.Status != core.StatusCancelled {
					t.Fatalf("cancel: %+v, %v", got, err)
				}
			}
			f.wantSeats(t, core.SeatAvailable, "D-1", "D-2")
			if n := len(f.events(t, o.OrderNo, core.EventCancelled)); n != 1 {
				t.Fatalf("%d cancelled events, want 1", n)
			}
			f.checkSeatsMatchDB(t)
			f.place(t, 9, "D-1") // the seat can be sold again
		})

		t.Run("pay sells seats; duplicate is a no-op; paid cannot be cancelled", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			o := f.place(t, 8, "E-1")
			if r, err := f.pay(t, o, "txn-"+o.OrderNo); err != nil || r != core.PaymentApplied {
				t.Fatalf("pay: %v, %v", r, err)
			}
			if r, err := f.pay(t, o, "txn-"+o.OrderNo); err != nil || r != core.PaymentDuplicate {
				t.Fatalf("duplicate pay: %v, %v", r, err)
			}
			f.wantSeats(t, core.SeatSold, "E-1")
			if _, err := f.eng.Cancel(ctx, o.OrderNo, 8); !errors.Is(err, core.ErrOrderNotPending) {
				t.Fatalf("cancel paid: %v, want order_not_pending", err)
			}
			if f.status(t, o.OrderNo) != core.StatusPaid {
				t.Fatal("order not paid")
			}
			f.checkSeatsMatchDB(t)
		})

		t.Run("pay after cancel is a discrepancy and revives nothing", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			o := f.place(t, 10, "F-1")
			if _, err := f.eng.Cancel(ctx, o.OrderNo, 10); err != nil {
				t.Fatal(err)
			}
			if r, err := f.pay(t, o, "late-"+o.OrderNo); err != nil || r != core.PaymentDiscrepancy {
				t.Fatalf("pay after cancel: %v, %v", r, err)
			}
			if f.status(t, o.OrderNo) != core.StatusCancelled {
				t.Fatal("order revived")
			}
			f.wantSeats(t, core.SeatAvailable, "F-1")
			ds, err := st.DB.Discrepancies(ctx, "open", 10, 0)
			if err != nil || len(ds) != 1 || ds[0].Kind != core.DiscrepancyPaidAfterCancel || ds[0].OrderNo != o.OrderNo {
				t.Fatalf("discrepancies = %+v, %v", ds, err)
			}
		})

		t.Run("amount mismatch is recorded and leaves the order pending", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			o := f.place(t, 11, "G-1")
			_, err := f.eng.HandlePayment(ctx, core.Payment{OrderNo: o.OrderNo, TxnID: "mm-" + o.OrderNo, AmountCents: o.AmountCents + 1})
			if !errors.Is(err, core.ErrAmountMismatch) {
				t.Fatalf("err = %v, want amount_mismatch", err)
			}
			if f.status(t, o.OrderNo) != core.StatusPending {
				t.Fatal("mismatched payment changed the order")
			}
			if len(f.events(t, o.OrderNo, core.EventAmountMismatch)) != 1 {
				t.Fatal("mismatch not on the timeline")
			}
		})

		t.Run("timeout re-arms before expiry and cancels after", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			o := f.place(t, 12, "H-1", "H-2")
			f.clock.Advance(10*time.Minute + 100*time.Millisecond)
			if err := f.eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}); err != nil {
				t.Fatal(err)
			}
			sched := f.events(t, o.OrderNo, core.EventTimeoutScheduled)
			if len(sched) != 2 || sched[1].Detail["hop"] != float64(2) || sched[1].Detail["level"] != float64(9) {
				t.Fatalf("after first hop: %+v, want hop 2 at level 9 (5 m)", sched)
			}
			f.wantSeats(t, core.SeatLocked, "H-1", "H-2")
			f.clock.Advance(5*time.Minute + 100*time.Millisecond)
			if err := f.eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 2}); err != nil {
				t.Fatal(err)
			}
			if f.status(t, o.OrderNo) != core.StatusCancelled {
				t.Fatal("expired order not cancelled")
			}
			f.wantSeats(t, core.SeatAvailable, "H-1", "H-2")
			f.checkSeatsMatchDB(t)
		})

		t.Run("a timeout message delivered 5 times cancels once", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			o := f.place(t, 13, "I-1")
			f.clock.Advance(16 * time.Minute)
			for range 5 {
				if err := f.eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(f.events(t, o.OrderNo, core.EventCancelled)); n != 1 {
				t.Fatalf("%d cancels, want 1", n)
			}
			if n := len(f.events(t, o.OrderNo, core.EventSeatsReleased)); n != 1 {
				t.Fatalf("%d releases, want 1", n)
			}
		})

		t.Run("a duplicated early hop re-arms once", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			o := f.place(t, 14, "J-1")
			f.clock.Advance(10 * time.Minute)
			for range 3 {
				if err := f.eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(f.events(t, o.OrderNo, core.EventTimeoutScheduled)); n != 2 {
				t.Fatalf("%d timeout messages sent, want 2 (placement + one re-arm)", n)
			}
		})

		t.Run("timeout for an unknown or paid order is ignored", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			if err := f.eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: "SF-none", Hop: 1}); err != nil {
				t.Fatal(err)
			}
			o := f.place(t, 15, "J-9")
			if _, err := f.pay(t, o, "t-"+o.OrderNo); err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(time.Hour)
			if err := f.eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}); err != nil {
				t.Fatal(err)
			}
			if f.status(t, o.OrderNo) != core.StatusPaid {
				t.Fatal("timeout touched a paid order")
			}
			f.wantSeats(t, core.SeatSold, "J-9")
		})

		t.Run("seat plans are cached per show, misses are not", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			f.place(t, 16, "A-1") // loads and caches the plan
			other := st.NewShow(t, 2, 2)
			if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 16, ShowID: other.ID, SeatIDs: []string{"C-1"}}); core.ErrorKind(err) != core.KindInvalid {
				t.Fatalf("seat outside a 2x2 plan: %v, want invalid_request", err)
			}
			if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 16, ShowID: other.ID, SeatIDs: []string{"B-2"}}); err != nil {
				t.Fatalf("second show: %v", err)
			}
		})

		t.Run("bad input writes nothing", func(t *testing.T) {
			f := newFixture(t, st, core.Config{})
			bad := []core.PlaceRequest{
				{UserID: 0, ShowID: f.show.ID, SeatIDs: []string{"A-1"}},
				{UserID: -1, ShowID: f.show.ID, SeatIDs: []string{"A-1"}},
				{UserID: 1, ShowID: -3, SeatIDs: []string{"A-1"}},
				{UserID: 1, ShowID: f.show.ID},
				{UserID: 1, ShowID: f.show.ID, SeatIDs: []string{"A-1", "A-1"}},
				{UserID: 1, ShowID: f.show.ID, SeatIDs: []string{"Z-99"}},
				{UserID: 1, ShowID: f.show.ID, SeatIDs: []string{"A-1'; DROP TABLE seat; --"}},
				{UserID: 1, ShowID: f.show.ID, SeatIDs: []string{"A-1", "A-2", "A-3", "A-4", "A-5", "A-6", "A-7"}},
			}
			for _, r := range bad {
				if _, err := f.eng.Place(ctx, r); core.ErrorKind(err) != core.KindInvalid {
					t.Errorf("Place(%+v) = %v, want invalid_request", r, err)
				}
			}
			if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: f.show.ID + 999999, SeatIDs: []string{"A-1"}}); !errors.Is(err, core.ErrShowNotFound) {
				t.Errorf("unknown show: %v", err)
			}
			f.wantSeats(t, core.SeatAvailable, "A-1", "A-2")
			f.checkSeatsMatchDB(t)
		})
	})
}

// failingSeats wraps a seat store and fails Release: a crash or an outage
// between the cancel commit and the Redis release.
type failingSeats struct{ core.SeatStore }

func (failingSeats) Release(context.Context, int64, int64, string, []string) (int, error) {
	return 0, errors.New("injected: redis unreachable")
}

func TestCancelCommitsBeforeRelease(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		clock := stacktest.NewClock(time.Now())
		show := st.NewShow(t, 3, 3)
		eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, Delay: core.DefaultDelayPolicy()},
			core.Deps{Store: st.DB, Seats: failingSeats{st.Seats}, Queue: st.Queue, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		o, err := eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1"}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: o.OrderNo, Reason: core.ReasonStaff, Actor: "staff:t"})
		if err != nil || !res.Won {
			t.Fatalf("cancel: %+v, %v", res, err)
		}
		// The DB says cancelled and the seat is free there; Redis still holds
		// the lock for the dead order: exactly what reconcile's stale-lock
		// check looks for, and nothing else is broken.
		taken, err := st.DB.TakenSeats(ctx, show.ID)
		if err != nil || len(taken) != 0 {
			t.Fatalf("order_seat rows left: %+v, %v", taken, err)
		}
		holds, err := st.Seats.Holds(ctx, show.ID)
		if err != nil || len(holds) != 1 || holds[0].State != core.SeatLocked || holds[0].OrderNo != o.OrderNo {
			t.Fatalf("redis holds = %+v, %v; want A-1 still locked by %s", holds, err, o.OrderNo)
		}
		got, evs, err := eng.Order(ctx, o.OrderNo)
		if err != nil || got.Status != core.StatusCancelled {
			t.Fatalf("order %+v, %v", got, err)
		}
		if !slices.ContainsFunc(evs, func(e core.Event) bool { return e.Kind == core.EventSeatReleaseFailed }) {
			t.Fatal("no seat_release_failed event")
		}
	})
}

// failingQueue cannot send: placement must still succeed.
type failingQueue struct{ core.DelayQueue }

func (failingQueue) Send(context.Context, []core.TimeoutMsg, int, time.Duration) error {
	return errors.New("injected: broker down")
}

func TestPlaceSurvivesSendFailure(t *testing.T) {
	st := stacktest.Embedded(t)
	show := st.NewShow(t, 2, 2)
	eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, Delay: core.DefaultDelayPolicy()},
		core.Deps{Store: st.DB, Seats: st.Seats, Queue: failingQueue{st.Queue}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := eng.Place(context.Background(), core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1"}})
	if err != nil {
		t.Fatalf("place failed because the send failed: %v", err)
	}
	_, evs, _ := eng.Order(context.Background(), o.OrderNo)
	if !slices.ContainsFunc(evs, func(e core.Event) bool { return e.Kind == core.EventTimeoutSendFailed }) {
		t.Fatalf("no timeout_send_failed event: %+v", evs)
	}
}

// failingStore fails every transaction: the Redis locks must be given back.
type failingStore struct{ core.Store }

func (failingStore) InTx(context.Context, func(core.Tx) error) error {
	return errors.New("injected: database write failed")
}

func TestPlaceCompensatesFailedTransaction(t *testing.T) {
	st := stacktest.Embedded(t)
	show := st.NewShow(t, 2, 2)
	eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, PurchaseLimit: 2, Delay: core.DefaultDelayPolicy()},
		core.Deps{Store: failingStore{st.DB}, Seats: st.Seats, Queue: st.Queue})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 { // more attempts than the limit: the counter must come back too
		if _, err := eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1", "A-2"}}); err == nil {
			t.Fatal("place succeeded on a failing store")
		}
	}
	holds, _ := st.Seats.Holds(ctx, show.ID)
	limits, _ := st.Seats.Limits(ctx, show.ID)
	if len(holds) != 0 || limits[1] != 0 {
		t.Fatalf("after compensation: holds %+v limits %+v", holds, limits)
	}
}
