package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// fixture is one engine and one reconciler on one stack, with a fresh
// 10×10 show, a test clock shared by both, and switches that make the
// engine's seat store and delay queue fail on demand.
type fixture struct {
	st    *stacktest.Stack
	clock *stacktest.Clock
	eng   *core.Engine
	rec   *reconcile.Reconciler
	reg   *prometheus.Registry
	show  core.Show
	seats *flakySeats
	queue *flakyQueue
	// queues is the reconcilers' waiting rooms; none unless a test sets it
	// before calling reconciler.
	queues reconcile.QueueStore
}

const (
	holdTTL = 15 * time.Minute
	grace   = 2 * time.Minute
)

func newFixture(t *testing.T, st *stacktest.Stack) *fixture {
	t.Helper()
	f := &fixture{st: st, clock: stacktest.NewClock(time.Now()), reg: prometheus.NewRegistry(),
		seats: &flakySeats{SeatStore: st.Seats}, queue: &flakyQueue{DelayQueue: st.Queue}}
	eng, err := core.NewEngine(core.Config{HoldTTL: holdTTL, PurchaseLimit: 6, Delay: core.DefaultDelayPolicy()},
		core.Deps{Store: st.DB, Seats: f.seats, Queue: f.queue, Clock: f.clock, Metrics: core.NewMetrics(f.reg)})
	if err != nil {
		t.Fatal(err)
	}
	f.eng = eng
	f.rec = f.reconciler(t, "test-"+stacktest.RandHex(3), f.reg)
	f.show = st.NewShow(t, 10, 10)
	return f
}

// reconciler is another reconciler on the fixture's stack (another instance).
func (f *fixture) reconciler(t *testing.T, owner string, reg prometheus.Registerer) *reconcile.Reconciler {
	t.Helper()
	rec, err := reconcile.New(reconcile.Deps{Engine: f.eng, DB: f.st.DB, Seats: f.st.Seats,
		Queues: f.queues, Clock: f.clock, Metrics: reg},
		reconcile.Options{Owner: owner, Grace: grace})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func (f *fixture) place(t *testing.T, user int64, seatIDs ...string) core.Order {
	t.Helper()
	o, err := f.eng.Place(context.Background(), core.PlaceRequest{UserID: user, ShowID: f.show.ID, SeatIDs: seatIDs})
	if err != nil {
		t.Fatalf("place %v for user %d: %v", seatIDs, user, err)
	}
	return o
}

func (f *fixture) pay(t *testing.T, o core.Order) {
	t.Helper()
	res, err := f.eng.HandlePayment(context.Background(), core.Payment{TxnID: "T" + o.OrderNo, OrderNo: o.OrderNo,
		AmountCents: o.AmountCents})
	if err != nil || res != core.PaymentApplied {
		t.Fatalf("pay %s: %v %v", o.OrderNo, res, err)
	}
}

func (f *fixture) cancel(t *testing.T, o core.Order) {
	t.Helper()
	if _, err := f.eng.Cancel(context.Background(), o.OrderNo, o.UserID); err != nil {
		t.Fatalf("cancel %s: %v", o.OrderNo, err)
	}
}

// run runs reconcile now and fails the test unless the run had no errors.
func (f *fixture) run(t *testing.T) reconcile.Run {
	t.Helper()
	run, err := f.rec.RunOnce(context.Background(), reconcile.TriggerManual, false)
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if !run.OK() {
		t.Fatalf("reconcile run %s: %+v", run.Status, run)
	}
	return run
}

// wantCounts checks found/fixed of the named checks (others must find nothing).
func wantCounts(t *testing.T, run reconcile.Run, want map[string][2]int) {
	t.Helper()
	for _, c := range run.Checks {
		w := want[c.Name]
		if c.Found != w[0] || c.Fixed != w[1] {
			t.Errorf("%s: found %d fixed %d, want found %d fixed %d; items %+v", c.Name, c.Found, c.Fixed, w[0], w[1], c.Items)
		}
	}
}

// checkInvariants fails the test when DESIGN.md's invariants do not hold,
// redelivering every consumed timeout last (it must change nothing).
func (f *fixture) checkInvariants(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := reconcile.CheckInvariants(ctx, f.st.DB, f.st.Seats, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if err := reconcile.CheckRedelivery(ctx, f.eng, f.st.DB, f.st.Seats, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
}

// wantSeat checks one seat's state in the seat store.
func (f *fixture) wantSeat(t *testing.T, seat string, state core.SeatState, orderNo string) {
	t.Helper()
	holds, err := f.st.Seats.Holds(context.Background(), f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(holds, func(h core.SeatHold) bool { return h.SeatID == seat })
	got, gotOrder := core.SeatAvailable, ""
	if i >= 0 {
		got, gotOrder = holds[i].State, holds[i].OrderNo
	}
	if got != state || gotOrder != orderNo {
		t.Errorf("seat %s is %s (%q) in the seat store, want %s (%q)", seat, got, gotOrder, state, orderNo)
	}
}

// wantRepaired checks that the order's timeline has a repaired event of check.
func (f *fixture) wantRepaired(t *testing.T, orderNo, check string) {
	t.Helper()
	evs, err := f.st.DB.Events(context.Background(), orderNo)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == core.EventRepaired && ev.Detail["check"] == check {
			return
		}
	}
	t.Errorf("order %s has no %s event of check %s: %+v", orderNo, core.EventRepaired, check, evs)
}

// flushSeats wipes the seat store's locks, sales and counters of the show
// (its blocks stay): a seat store that lost its state.
func (f *fixture) flushSeats(t *testing.T) {
	t.Helper()
	if err := f.st.Seats.Replace(context.Background(), f.show.ID, nil); err != nil {
		t.Fatal(err)
	}
}

var errInjected = errors.New("injected failure")

// flakySeats is the engine's seat store, failing Release, MarkSold or
// Unblock when told.
type flakySeats struct {
	core.SeatStore
	failRelease, failSell, failUnblock atomic.Bool
}

func (s *flakySeats) Unblock(ctx context.Context, showID int64, seatIDs []string) error {
	if s.failUnblock.Load() {
		return fmt.Errorf("unblock: %w", errInjected)
	}
	return s.SeatStore.Unblock(ctx, showID, seatIDs)
}

func (s *flakySeats) Release(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) (int, error) {
	if s.failRelease.Load() {
		return 0, fmt.Errorf("release: %w", errInjected)
	}
	return s.SeatStore.Release(ctx, showID, userID, orderNo, seatIDs)
}

func (s *flakySeats) MarkSold(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) error {
	if s.failSell.Load() {
		return fmt.Errorf("mark sold: %w", errInjected)
	}
	return s.SeatStore.MarkSold(ctx, showID, userID, orderNo, seatIDs)
}

// flakyQueue is the engine's delay queue, failing Send when told (the broker
// is down at placement).
type flakyQueue struct {
	core.DelayQueue
	failSend atomic.Bool
}

func (q *flakyQueue) Send(ctx context.Context, msgs []core.TimeoutMsg, level int, delay time.Duration) error {
	if q.failSend.Load() {
		return fmt.Errorf("send: %w", errInjected)
	}
	return q.DelayQueue.Send(ctx, msgs, level, delay)
}

// snapshot is the show's whole state in both stores, as comparable text.
func (f *fixture) snapshot(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	holds, err := f.st.Seats.Holds(ctx, f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	limits, err := f.st.Seats.Limits(ctx, f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := f.st.DB.ShowSeatRows(ctx, f.show.ID, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	pending, _, err := f.st.DB.PendingOrders(ctx, store.PendingQuery{ShowID: f.show.ID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(holds, limits, rows, len(pending))
}

// lagCounts is the number of observations of the expiry-lag histogram in
// reg, by path; paths with none (created at 0) are left out.
func lagCounts(t *testing.T, reg *prometheus.Registry) map[string]uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]uint64)
	for _, mf := range mfs {
		if mf.GetName() != "seatflow_expiry_lag_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if n := m.GetHistogram().GetSampleCount(); l.GetName() == "path" && n > 0 {
					out[l.GetValue()] = n
				}
			}
		}
	}
	return out
}

// metricValue is the value of the counter name{check=check} in reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name, check string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "check" && l.GetValue() == check {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
