package reconcile_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
	"seatflow/core/testenv"
)

// TestDeadHolderLeaseLapses: an instance that took the lease and died
// blocks runs only until the lease expires.
func TestDeadHolderLeaseLapses(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		ctx := context.Background()
		const ttl = 300 * time.Millisecond
		if ok, err := st.DB.AcquireLease(ctx, "reconcile", "dead-node", "its-token", ttl); err != nil || !ok {
			t.Fatalf("take the lease as the dying instance: %v %v", ok, err)
		}
		_, err := f.rec.RunOnce(ctx, reconcile.TriggerManual, false)
		if !errors.Is(err, reconcile.ErrBusy) || !strings.Contains(err.Error(), "dead-node") {
			t.Fatalf("run while the dead instance's lease lasts: %v, want ErrBusy naming dead-node", err)
		}
		testenv.WaitFor(t, 20*ttl, "the dead instance's lease to lapse", func() bool {
			_, err := f.rec.RunOnce(ctx, reconcile.TriggerManual, false)
			if err != nil && !errors.Is(err, reconcile.ErrBusy) {
				t.Fatalf("run after the lease: %v", err)
			}
			return err == nil
		})
	})
}

// TestScheduler: a full run at start and every Every, sweeps every
// SweepEvery; the sweep alone ends an expired order; the scheduler's
// goroutine ends with its context.
func TestScheduler(t *testing.T) {
	st := stacktest.Embedded(t)
	f := newFixture(t, st)
	f.queue.failSend.Store(true)
	o := f.place(t, 1, "A-1")
	f.clock.Advance(holdTTL)
	rec, err := reconcile.New(reconcile.Deps{Engine: f.eng, DB: st.DB, Seats: st.Seats, Clock: f.clock},
		reconcile.Options{Every: 300 * time.Millisecond, SweepEvery: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := rec.Start(ctx)
	var runs []reconcile.Run
	count := map[string]int{}
	// Wait for a full run after the one at start and several sweeps.
	testenv.WaitFor(t, 30*time.Second, "two scheduled runs and five sweeps", func() bool {
		if runs, err = rec.Runs(context.Background(), 500); err != nil {
			t.Fatal(err)
		}
		clear(count)
		for _, r := range runs {
			count[r.Trigger]++
		}
		return count[reconcile.TriggerSchedule] >= 2 && count[reconcile.TriggerSweep] >= 5
	})
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the scheduler did not stop")
	}
	if first := runs[len(runs)-1]; first.Trigger != reconcile.TriggerSchedule {
		t.Errorf("the first run was a %s, want the full run at start", first.Trigger)
	}
	// The runs were read while the scheduler ran, so the newest may still
	// have been running, its checks not yet recorded: judge finished sweeps.
	for _, r := range runs {
		if r.Trigger == reconcile.TriggerSweep && r.Status != reconcile.StatusRunning && len(r.Checks) != 2 {
			t.Errorf("a sweep ran %d checks, want expired_pending and unsent_timeout", len(r.Checks))
		}
	}
	if got, _ := st.DB.Order(context.Background(), o.OrderNo); got.Status != core.StatusCancelled {
		t.Errorf("expired order is %s after the scheduler ran", got.Status)
	}
}

// TestExpiryPathByTrigger: the fast sweep cancels an expired order as its
// own actor, so the order row and the expiry-lag histogram (path="sweep")
// tell it from a full run of any trigger (path="reconcile").
func TestExpiryPathByTrigger(t *testing.T) {
	tests := []struct{ trigger, actor, path string }{
		{reconcile.TriggerSweep, core.ActorSweep, core.PathSweep},
		{reconcile.TriggerSchedule, reconcile.Actor, core.PathReconcile},
		{reconcile.TriggerManual, reconcile.Actor, core.PathReconcile},
		{reconcile.TriggerCLI, reconcile.Actor, core.PathReconcile},
	}
	for _, tt := range tests {
		t.Run(tt.trigger, func(t *testing.T) {
			stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
				f := newFixture(t, st)
				f.queue.failSend.Store(true) // the timeout message is lost
				o := f.place(t, 1, "A-1")
				f.clock.Advance(holdTTL + 3*time.Second)
				run, err := f.rec.RunOnce(context.Background(), tt.trigger, false)
				if err != nil {
					t.Fatal(err)
				}
				wantCounts(t, run, map[string][2]int{reconcile.CheckExpiredPending: {1, 1}})
				got, err := st.DB.Order(context.Background(), o.OrderNo)
				if err != nil {
					t.Fatal(err)
				}
				if got.CancelReason != core.ReasonReconcile || got.CancelActor != tt.actor {
					t.Errorf("cancelled with reason %q by %q, want %q by %q", got.CancelReason, got.CancelActor, core.ReasonReconcile, tt.actor)
				}
				if lag := lagCounts(t, f.reg); !maps.Equal(lag, map[string]uint64{tt.path: 1}) {
					t.Errorf("seatflow_expiry_lag_seconds observations by path = %v, want 1 at %s", lag, tt.path)
				}
			})
		})
	}
}

func TestRunsAreStored(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		ctx := context.Background()
		f.queue.failSend.Store(true)
		o := f.place(t, 1, "A-1")
		f.clock.Advance(holdTTL)
		first, err := f.rec.RunOnce(ctx, reconcile.TriggerCLI, true)
		if err != nil {
			t.Fatal(err)
		}
		second := f.run(t)
		runs, err := f.rec.Runs(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 || runs[0].ID != second.ID || runs[1].ID != first.ID {
			t.Fatalf("Runs = %+v, want the manual run then the dry cli run", runs)
		}
		got := runs[1]
		if got.Trigger != reconcile.TriggerCLI || !got.DryRun || got.Status != reconcile.StatusOK ||
			!got.StartedAt.Equal(first.StartedAt) || got.FinishedAt.IsZero() || len(got.Checks) != 10 {
			t.Errorf("stored dry run = %+v", got)
		}
		c, ok := runs[0].Check(reconcile.CheckExpiredPending)
		if !ok || c.Found != 1 || c.Fixed != 1 || len(c.Items) != 1 || c.Items[0].OrderNo != o.OrderNo || !c.Items[0].Fixed {
			t.Errorf("stored expired_pending = %+v", c)
		}
		for _, want := range runs {
			if byID, err := f.rec.RunByID(ctx, want.ID); err != nil || !reflect.DeepEqual(byID, want) {
				t.Errorf("RunByID(%d) = %+v, %v; want %+v", want.ID, byID, err, want)
			}
		}
		if _, err := f.rec.RunByID(ctx, second.ID+1); !errors.Is(err, reconcile.ErrRunNotFound) ||
			core.ErrorKind(err) != core.KindNotFound {
			t.Errorf("RunByID of an unknown id: %v, want ErrRunNotFound", err)
		}
		if _, err := f.rec.RunOnce(ctx, "cron", false); core.ErrorKind(err) != core.KindInvalid {
			t.Errorf("RunOnce with an unknown trigger: %v, want invalid", err)
		}
		// The last full run, decoded, past the sweeps after it.
		for range 3 {
			if _, err := f.rec.RunOnce(ctx, reconcile.TriggerSweep, false); err != nil {
				t.Fatal(err)
			}
		}
		if full, ok, err := f.rec.LastFullRun(ctx); err != nil || !ok || !reflect.DeepEqual(full, runs[0]) {
			t.Errorf("LastFullRun = %+v, %v, %v; want %+v", full, ok, err, runs[0])
		}
	})
}

func TestPrintRun(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		run  reconcile.Run
		want []string
	}{
		{"clean", reconcile.Run{ID: 7, Trigger: "cli", Status: "ok", StartedAt: at, FinishedAt: at.Add(42 * time.Millisecond),
			Checks: []reconcile.CheckResult{{Name: "expired_pending", Found: 3, Fixed: 3, DurationMS: 5},
				{Name: "open_discrepancy", Found: 1}}},
			[]string{
				"reconcile run 7 (cli) ok in 42ms",
				"CHECK             FOUND  FIXED  ERRORS  MS",
				"expired_pending   3      3      0       5",
				"open_discrepancy  1      0      0       0",
			}},
		{"errors", reconcile.Run{ID: 8, Trigger: "manual", DryRun: true, Status: "errors", StartedAt: at,
			Checks: []reconcile.CheckResult{{Name: "paid_not_sold", Found: 1, Errors: 2, Error: "seats: unavailable",
				Items: []reconcile.Item{{OrderNo: "SF1", SeatIDs: []string{"A-1"}, Action: "mark_sold", Error: "boom"}}}}},
			[]string{
				"reconcile run 8 (manual, dry run: nothing changed) errors",
				"CHECK          FOUND  FIXED  ERRORS  MS",
				"paid_not_sold  1      0      2       0",
				"paid_not_sold: seats: unavailable",
				"paid_not_sold: mark_sold SF1 [A-1]: boom",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := reconcile.PrintRun(&b, tt.run); err != nil {
				t.Fatal(err)
			}
			if got, want := b.String(), strings.Join(tt.want, "\n")+"\n"; got != want {
				t.Errorf("PrintRun:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	st := stacktest.Embedded(t)
	eng := st.Engine(t, core.Config{}, nil)
	deps := reconcile.Deps{Engine: eng, DB: st.DB, Seats: st.Seats}
	tests := []struct {
		name string
		deps reconcile.Deps
		opts reconcile.Options
	}{
		{"no engine", reconcile.Deps{DB: st.DB, Seats: st.Seats}, reconcile.Options{}},
		{"negative grace", deps, reconcile.Options{Grace: -time.Second}},
		{"negative page", deps, reconcile.Options{PageSize: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := reconcile.New(tt.deps, tt.opts); err == nil {
				t.Error("New accepted it")
			}
		})
	}
}
