package reconcile

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/testenv"
)

// blockingCheck counts its runs and holds each until release is closed or
// the run's context ends.
type blockingCheck struct {
	runs    atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (*blockingCheck) Name() string { return "blocking" }

func (c *blockingCheck) Run(ctx context.Context, _ *Env, _ bool) (Result, error) {
	c.runs.Add(1)
	c.entered <- struct{}{}
	select {
	case <-c.release:
		return Result{}, nil
	case <-ctx.Done():
		return Result{}, context.Cause(ctx)
	}
}

// instance is one reconciler on st (another SeatFlow instance) running only check.
func instance(t *testing.T, st *stacktest.Stack, owner string, check Check, opts Options) *Reconciler {
	t.Helper()
	eng := st.Engine(t, core.Config{}, nil)
	opts.Owner = owner
	r, err := New(Deps{Engine: eng, DB: st.DB, Seats: st.Seats}, opts)
	if err != nil {
		t.Fatal(err)
	}
	r.full = []Check{check}
	return r
}

// TestTwoReconcilersAtOnce: two instances start a run at the same moment;
// exactly one runs the checks, the other gets ErrBusy naming the holder.
func TestTwoReconcilersAtOnce(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		check := &blockingCheck{entered: make(chan struct{}, 2), release: make(chan struct{})}
		recs := []*Reconciler{instance(t, st, "node-a", check, Options{}), instance(t, st, "node-b", check, Options{})}
		type outcome struct {
			run Run
			err error
		}
		start := make(chan struct{})
		results := make(chan outcome, len(recs))
		for _, r := range recs {
			go func() {
				<-start
				run, err := r.RunOnce(context.Background(), TriggerSchedule, false)
				results <- outcome{run, err}
			}()
		}
		close(start)
		<-check.entered // one of them is inside the checks, holding the lease
		// The other comes back while the first is still running.
		var first outcome
		select {
		case first = <-results:
		case <-check.entered:
			t.Fatal("both instances are running the checks at once")
		case <-time.After(10 * time.Second):
			t.Fatal("the second instance neither ran nor returned")
		}
		if !errors.Is(first.err, ErrBusy) || core.ErrorKind(first.err) != core.KindConflict {
			t.Fatalf("second instance: run %+v, err %v; want ErrBusy", first.run, first.err)
		}
		if !strings.Contains(first.err.Error(), "held by node-") {
			t.Errorf("ErrBusy does not name the holder: %v", first.err)
		}
		close(check.release)
		if second := <-results; second.err != nil || second.run.Status != StatusOK {
			t.Fatalf("first instance: run %+v, err %v", second.run, second.err)
		}
		if n := check.runs.Load(); n != 1 {
			t.Fatalf("the checks ran %d times, want once", n)
		}
		// The lease was given back: the next run starts at once.
		if _, err := recs[1].RunOnce(context.Background(), TriggerManual, false); err != nil {
			t.Errorf("run after the first finished: %v", err)
		}
	})
}

// TestLeaseLostStopsRun: a holder that can no longer renew its lease stops
// its own run, which is recorded as aborted.
func TestLeaseLostStopsRun(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		check := &blockingCheck{entered: make(chan struct{}, 1), release: make(chan struct{})}
		r := instance(t, st, "node-a", check, Options{LeaseTTL: 300 * time.Millisecond})
		go func() {
			<-check.entered
			// Another instance takes over (as after a long pause of this one).
			if _, err := st.DB.X().ExecContext(context.Background(),
				`UPDATE reconcile_lease SET token = 'someone-else' WHERE name = 'reconcile'`); err != nil {
				t.Error(err)
			}
		}()
		run, err := r.RunOnce(context.Background(), TriggerManual, false)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != StatusAborted || !strings.Contains(run.Error, ErrLeaseLost.Error()) {
			t.Errorf("run after losing the lease: status %s, error %q; want aborted, lease lost", run.Status, run.Error)
		}
		stored, err := r.Runs(context.Background(), 1)
		if err != nil || len(stored) != 1 || stored[0].Status != StatusAborted {
			t.Errorf("stored run = %+v %v", stored, err)
		}
	})
}

// TestLeaseRenewedDuringLongRun: a run longer than the lease TTL keeps its
// lease by renewing it, and nobody else gets in meanwhile.
func TestLeaseRenewedDuringLongRun(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		const ttl = 300 * time.Millisecond
		check := &blockingCheck{entered: make(chan struct{}, 2), release: make(chan struct{})}
		a := instance(t, st, "node-a", check, Options{LeaseTTL: ttl})
		b := instance(t, st, "node-b", check, Options{LeaseTTL: ttl})
		done := make(chan Run)
		go func() {
			run, err := a.RunOnce(context.Background(), TriggerManual, false)
			if err != nil {
				t.Error(err)
			}
			done <- run
		}()
		<-check.entered
		// Renewals come every TTL/3: ten of them carry the run over three
		// TTLs. After each, the other instance is still kept out.
		_, until, err := st.DB.LeaseHolder(context.Background(), leaseName)
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			testenv.WaitFor(t, 10*time.Second, "the running instance to renew its lease", func() bool {
				owner, next, err := st.DB.LeaseHolder(context.Background(), leaseName)
				if err != nil || owner != "node-a" {
					t.Fatalf("lease holder %q, %v; want node-a", owner, err)
				}
				renewed := next.After(until)
				until = next
				return renewed
			})
			if _, err := b.RunOnce(context.Background(), TriggerManual, false); !errors.Is(err, ErrBusy) {
				t.Fatalf("second instance during a renewed lease: %v, want ErrBusy", err)
			}
		}
		close(check.release)
		if run := <-done; run.Status != StatusOK {
			t.Errorf("long run: %+v", run)
		}
	})
}
