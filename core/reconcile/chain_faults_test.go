package reconcile_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
)

// Faults at the edges of the timeout chain (issue 12 defect 6), each on the
// embedded and the real stack, each ending with DESIGN.md's invariants.

// crashAfterClaim is the engine's store with a fault between the claim of a
// hop and its send: the claim commits, then, once armed, the handler dies
// (a panic) or loses the claim's reply (an error).
type crashAfterClaim struct {
	core.Store
	panics bool
	armed  atomic.Bool
}

func (s *crashAfterClaim) ClaimTimeoutHops(ctx context.Context, claims []core.HopClaim) ([]bool, error) {
	won, err := s.Store.ClaimTimeoutHops(ctx, claims)
	if err != nil || !slices.Contains(won, true) || !s.armed.CompareAndSwap(true, false) {
		return won, err
	}
	if s.panics {
		panic("injected crash between claiming hop and sending it")
	}
	return nil, fmt.Errorf("claim hop: reply lost: %w", errInjected)
}

// recordingQueue is the stack's delay queue keeping every message sent, so
// the test delivers them itself at the clock's time.
type recordingQueue struct {
	core.DelayQueue
	mu   sync.Mutex
	sent []core.TimeoutMsg
}

func (q *recordingQueue) Send(ctx context.Context, msgs []core.TimeoutMsg, level int, delay time.Duration) error {
	if err := q.DelayQueue.Send(ctx, msgs, level, delay); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent = append(q.sent, msgs...)
	return nil
}

// since returns the messages sent after the first n.
func (q *recordingQueue) since(n int) []core.TimeoutMsg {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]core.TimeoutMsg(nil), q.sent[n:]...)
}

func (q *recordingQueue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.sent)
}

// chainFixture is a fixture whose engine runs over store and a recording queue.
func chainFixture(t *testing.T, st *stacktest.Stack, wrap func(core.Store) core.Store) (*fixture, *recordingQueue) {
	t.Helper()
	q := &recordingQueue{DelayQueue: st.Queue}
	f := &fixture{st: st, clock: stacktest.NewClock(time.Now()), reg: prometheus.NewRegistry(),
		seats: &flakySeats{SeatStore: st.Seats}, queue: &flakyQueue{DelayQueue: q}}
	eng, err := core.NewEngine(core.Config{HoldTTL: holdTTL, PurchaseLimit: 6, Delay: core.DefaultDelayPolicy()},
		core.Deps{Store: wrap(st.DB), Seats: f.seats, Queue: f.queue, Clock: f.clock, Metrics: core.NewMetrics(f.reg)})
	if err != nil {
		t.Fatal(err)
	}
	f.eng = eng
	f.rec = f.reconciler(t, "test-"+stacktest.RandHex(3), f.reg)
	f.show = st.NewShow(t, 10, 10)
	return f, q
}

// deliver hands msg to the timeout handler, turning a panic into an error
// as the queues' consumers do.
func (f *fixture) deliver(msg core.TimeoutMsg) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f.eng.HandleTimeout(context.Background(), msg)
}

func (f *fixture) order(t *testing.T, orderNo string) core.Order {
	t.Helper()
	o, err := f.st.DB.Order(context.Background(), orderNo)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestFaultCrashBetweenHopClaimAndSend(t *testing.T) {
	tests := []struct {
		name   string
		panics bool
		// resend is what notices the unsent hop: a redelivery of the
		// message whose handler died, or the reconcile sweep.
		bySweep bool
	}{
		{"panic after claim, redelivery resends", true, false},
		{"claim reply lost, redelivery resends", false, false},
		{"panic after claim, sweep resends", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
				crash := &crashAfterClaim{panics: tt.panics}
				f, q := chainFixture(t, st, func(s core.Store) core.Store { crash.Store = s; return crash })
				o := f.place(t, 1, "A-1", "A-2")
				first := q.since(0)
				if len(first) != 1 {
					t.Fatalf("placement sent %d messages, want 1", len(first))
				}
				msg := first[0]

				f.clock.Advance(msg.DueAt.Sub(f.clock.Now()) + 100*time.Millisecond)
				crash.armed.Store(true)
				if err := f.deliver(msg); err == nil {
					t.Fatal("the handler that crashed after its claim returned no error")
				}
				if got := f.order(t, o.OrderNo); got.TimeoutHop != msg.Hop+1 || got.TimeoutSend != core.HopSending || q.count() != 1 {
					t.Fatalf("after the crash: hop %d send state %d, %d messages; want hop %d claimed and unsent",
						got.TimeoutHop, got.TimeoutSend, q.count(), msg.Hop+1)
				}

				// Within the claimer's send lease nobody else sends: it may
				// still be sending.
				if tt.bySweep {
					wantCounts(t, f.sweep(t), nil)
				} else if err := f.deliver(msg); err == nil {
					t.Error("a redelivery within the send lease was acked; want it back later")
				}
				if q.count() != 1 {
					t.Fatalf("%d messages sent within the lease, want 1", q.count())
				}
				f.clock.Advance(core.TimeoutSendLease)
				if tt.bySweep {
					wantCounts(t, f.sweep(t), map[string][2]int{reconcile.CheckUnsentTimeout: {1, 1}})
					f.wantRepaired(t, o.OrderNo, reconcile.CheckUnsentTimeout)
				} else if err := f.deliver(msg); err != nil {
					t.Fatalf("redelivery after the lease: %v", err)
				}
				resent := q.since(1)
				if len(resent) != 1 || resent[0].Hop != msg.Hop+1 {
					t.Fatalf("resent %+v, want hop %d once", resent, msg.Hop+1)
				}
				if got := f.order(t, o.OrderNo); got.TimeoutSend != core.HopSent {
					t.Errorf("resent hop's send state %d, want confirmed", got.TimeoutSend)
				}

				// The chain goes on from the resent hop: each message
				// delivered at its due time, the order ends by its timeout.
				late := f.runChain(t, o.OrderNo, q, 1)
				if got := f.order(t, o.OrderNo); got.Status != core.StatusCancelled || got.CancelReason != core.ReasonTimeout {
					t.Fatalf("order %s by %s, want cancelled by its timeout", got.Status, got.CancelReason)
				}
				t.Logf("%s: cancelled %v after expire_time, %d messages sent", tt.name, late, q.count())
				if late < 0 || late > core.DefaultSlack {
					t.Errorf("cancel lateness %v, want within [0, %v]", late, core.DefaultSlack)
				}
				before := f.snapshot(t)
				for _, m := range q.since(0) {
					if err := f.deliver(m); err != nil {
						t.Errorf("redelivering hop %d: %v", m.Hop, err)
					}
				}
				if after := f.snapshot(t); after != before || q.count() != len(q.since(0)) {
					t.Errorf("redelivering every message changed the state:\n%s\n%s", before, after)
				}
				wantCounts(t, f.run(t), nil)
				f.checkInvariants(t)
			})
		})
	}
}

// runChain delivers every message from the n-th on at its due time, until
// the order is no longer pending, and returns how late its cancel came.
func (f *fixture) runChain(t *testing.T, orderNo string, q *recordingQueue, n int) time.Duration {
	t.Helper()
	for hops := 0; ; hops++ {
		o := f.order(t, orderNo)
		if o.Status != core.StatusPending {
			return o.ClosedAt.Sub(o.ExpireAt)
		}
		next := q.since(n)
		if len(next) == 0 || hops > 20 {
			t.Fatalf("chain of %s stopped pending after %d hops, %d messages", orderNo, hops, q.count())
		}
		n++
		if d := next[0].DueAt.Sub(f.clock.Now()); d > 0 {
			f.clock.Advance(d)
		}
		if err := f.deliver(next[0]); err != nil {
			t.Fatalf("hop %d: %v", next[0].Hop, err)
		}
	}
}

// sweep runs the fast sweep now.
func (f *fixture) sweep(t *testing.T) reconcile.Run {
	t.Helper()
	run, err := f.rec.RunOnce(context.Background(), reconcile.TriggerSweep, false)
	if err != nil || !run.OK() {
		t.Fatalf("sweep: %+v %v", run, err)
	}
	return run
}

func TestFaultQueueIgnoresDelay(t *testing.T) {
	const (
		sweepEvery = 30 * time.Second
		// maxDeliveries stops the test of a chain that loops.
		maxDeliveries = 200
	)
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f, q := chainFixture(t, st, func(s core.Store) core.Store { return s })
		o := f.place(t, 1, "A-1")
		delivered, sweeps := 0, 0
		// The broker delivers every message the moment it is sent; the
		// sweep runs every sweepEvery on the test clock.
		for f.order(t, o.OrderNo).Status == core.StatusPending {
			for _, m := range q.since(delivered) {
				if delivered++; delivered > maxDeliveries {
					t.Fatalf("tight loop: %d deliveries at %v, order still pending", delivered, f.clock.Now().Sub(o.CreatedAt))
				}
				if err := f.deliver(m); err != nil {
					t.Fatalf("hop %d: %v", m.Hop, err)
				}
			}
			if f.order(t, o.OrderNo).Status != core.StatusPending {
				break
			}
			f.clock.Advance(sweepEvery)
			f.sweep(t)
			if sweeps++; sweeps > int(2*holdTTL/sweepEvery) {
				t.Fatalf("order still pending after %d sweeps", sweeps)
			}
		}
		got := f.order(t, o.OrderNo)
		early := counterValue(t, f.reg, "seatflow_timeout_early_deliveries_total")
		late := got.ClosedAt.Sub(got.ExpireAt)
		t.Logf("broker ignoring delays: %d messages sent for a %v hold, %d delivered, %v early, cancel %v after expiry by %s/%s",
			q.count(), holdTTL, delivered, early, late, got.CancelReason, got.CancelActor)
		// Placement (10 m) and one hop per deferred due time (5 m): the
		// plan's hops, not a loop.
		if q.count() > 3 {
			t.Errorf("%d messages sent, want at most the plan's 3", q.count())
		}
		if early < 1 || int(early) != delivered {
			t.Errorf("seatflow_timeout_early_deliveries_total = %v, want every one of the %d deliveries", early, delivered)
		}
		if got.Status != core.StatusCancelled || late < 0 || late > sweepEvery {
			t.Errorf("order %s %v after expiry, want cancelled within one sweep (%v)", got.Status, late, sweepEvery)
		}
		evs, err := st.DB.Events(context.Background(), o.OrderNo)
		if err != nil {
			t.Fatal(err)
		}
		deferred := 0
		for _, ev := range evs {
			if ev.Kind == core.EventTimeoutFired && ev.Detail["outcome"] == core.OutcomeDeferred {
				deferred++
			}
		}
		if deferred != delivered {
			t.Errorf("%d deferred timeout_fired events, want %d", deferred, delivered)
		}
		f.checkInvariants(t)
	})
}

// counterValue is the value of the unlabelled counter name in reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

func TestFaultRearmSendFails(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f, q := chainFixture(t, st, func(s core.Store) core.Store { return s })
		o := f.place(t, 1, "A-1")
		msg := q.since(0)[0]
		f.clock.Advance(msg.DueAt.Sub(f.clock.Now()))
		f.queue.failSend.Store(true) // the broker is down when the hop re-arms
		if err := f.deliver(msg); err == nil {
			t.Fatal("a re-arm whose send failed was acked")
		}
		got := f.order(t, o.OrderNo)
		if got.TimeoutHop != msg.Hop+1 || got.TimeoutSend != core.HopSending || got.TimeoutResendAt.After(f.clock.Now()) {
			t.Fatalf("after the failed send: hop %d state %d resend at %v; want hop %d open to resend now",
				got.TimeoutHop, got.TimeoutSend, got.TimeoutResendAt, msg.Hop+1)
		}
		// The send was given up: the queue's next redelivery sends the hop
		// at once, without waiting for a send lease.
		f.queue.failSend.Store(false)
		if err := f.deliver(msg); err != nil {
			t.Fatalf("redelivery: %v", err)
		}
		if resent := q.since(1); len(resent) != 1 || resent[0].Hop != msg.Hop+1 {
			t.Fatalf("resent %+v, want hop %d once", resent, msg.Hop+1)
		}
		late := f.runChain(t, o.OrderNo, q, 1)
		if got := f.order(t, o.OrderNo); got.CancelReason != core.ReasonTimeout || late < 0 || late > core.DefaultSlack {
			t.Errorf("order %s by %s %v after expiry, want cancelled by its timeout within %v", got.Status, got.CancelReason, late, core.DefaultSlack)
		}
		wantCounts(t, f.run(t), nil)
		f.checkInvariants(t)
	})
}
