package reconcile_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
)

// TestReconcileUnderLoad runs the scheduler (full runs and sweeps) while
// workers place, pay, cancel and abandon orders for a few seconds, with no
// fault injected. Reconcile must change no correct state: it repairs
// nothing but the orders left to expire (never before their expiry), every
// order ends as its worker saw it end, and the invariants hold at the end.
func TestReconcileUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		const (
			ttl      = 2 * time.Second
			grace    = time.Second
			duration = 3 * time.Second
			workers  = 8
		)
		ctx := context.Background()
		eng, err := core.NewEngine(core.Config{HoldTTL: ttl, PurchaseLimit: 6, Delay: core.DefaultDelayPolicy()},
			core.Deps{Store: st.DB, Seats: st.Seats, Queue: st.Queue})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := reconcile.New(reconcile.Deps{Engine: eng, DB: st.DB, Seats: st.Seats},
			reconcile.Options{Every: 150 * time.Millisecond, SweepEvery: 40 * time.Millisecond, Grace: grace})
		if err != nil {
			t.Fatal(err)
		}
		show := st.NewShow(t, 20, 20)
		plan, err := st.DB.Seats(ctx, show.ID)
		if err != nil {
			t.Fatal(err)
		}

		var (
			mu      sync.Mutex
			outcome = map[string]string{} // order no → what its worker saw
		)
		record := func(no, what string) {
			mu.Lock()
			defer mu.Unlock()
			outcome[no] = what
		}
		schedCtx, stopSched := context.WithCancel(ctx)
		schedDone := rec.Start(schedCtx)
		loadCtx, stopLoad := context.WithTimeout(ctx, duration)
		defer stopLoad()
		var wg, late sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 42))
				for loadCtx.Err() == nil {
					var seatIDs []string
					for _, i := range rng.Perm(len(plan))[:1+rng.IntN(3)] {
						seatIDs = append(seatIDs, plan[i].SeatID)
					}
					user := int64(1 + rng.IntN(20))
					o, err := eng.Place(ctx, core.PlaceRequest{UserID: user, ShowID: show.ID, SeatIDs: seatIDs})
					if errors.Is(err, core.ErrSeatUnavailable) || errors.Is(err, core.ErrPurchaseLimit) {
						continue
					}
					if err != nil {
						t.Errorf("place: %v", err)
						return
					}
					pay := func() (core.PaymentResult, error) {
						return eng.HandlePayment(ctx, core.Payment{TxnID: "T" + o.OrderNo, OrderNo: o.OrderNo, AmountCents: o.AmountCents})
					}
					switch p := rng.IntN(10); {
					case p < 4:
						res, err := pay()
						if err != nil || res != core.PaymentApplied {
							t.Errorf("pay %s: %v %v", o.OrderNo, res, err)
						}
						record(o.OrderNo, "paid")
					case p < 6:
						if _, err := eng.Cancel(ctx, o.OrderNo, user); err != nil {
							t.Errorf("cancel %s: %v", o.OrderNo, err)
						}
						record(o.OrderNo, "cancelled")
					case p < 8:
						record(o.OrderNo, "abandoned") // reconcile's sweep must end it
					default:
						// Pay around the expiry, racing the sweep.
						record(o.OrderNo, "racing")
						jitter := time.Duration(rng.IntN(80)-40) * time.Millisecond
						late.Go(func() {
							time.Sleep(time.Until(o.ExpireAt) + jitter)
							res, err := pay()
							switch {
							case err != nil:
								t.Errorf("late pay %s: %v", o.OrderNo, err)
							case res == core.PaymentApplied:
								record(o.OrderNo, "paid")
							default:
								record(o.OrderNo, "lost to expiry")
							}
						})
					}
				}
			})
		}
		wg.Wait()
		late.Wait()
		// Every hold ends and sweeps run past the grace period.
		time.Sleep(ttl + grace + 300*time.Millisecond)
		stopSched()
		<-schedDone

		final, err := rec.RunOnce(ctx, reconcile.TriggerManual, false)
		if err != nil || !final.OK() {
			t.Fatalf("final run: %+v %v", final, err)
		}
		runs, err := rec.Runs(ctx, 500)
		if err != nil {
			t.Fatal(err)
		}
		fixed := map[string]int{}
		aborted := 0
		for _, r := range runs {
			if r.Status == reconcile.StatusAborted && r.ID != final.ID {
				aborted++ // the run in progress when the scheduler stopped
			} else if r.Status != reconcile.StatusOK {
				t.Errorf("run %d (%s): %s %s %+v", r.ID, r.Trigger, r.Status, r.Error, r.Checks)
			}
			for _, c := range r.Checks {
				fixed[c.Name] += c.Fixed
			}
		}
		if aborted > 1 {
			t.Errorf("%d runs aborted; only the one running at shutdown may be", aborted)
		}
		for _, name := range []string{reconcile.CheckPaidNotSold, reconcile.CheckOrphanOrderSeat,
			reconcile.CheckStaleRedisLock, reconcile.CheckLimitDrift} {
			if fixed[name] != 0 {
				t.Errorf("%s repaired %d things with no fault injected", name, fixed[name])
			}
		}

		mu.Lock()
		defer mu.Unlock()
		counts := map[string]int{}
		for no, what := range outcome {
			counts[what]++
			o, err := st.DB.Order(ctx, no)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"paid": "paid", "cancelled": "cancelled", "abandoned": "cancelled",
				"lost to expiry": "cancelled"}[what]
			got := o.Status.String()
			if o.Status == core.StatusCancelled {
				got += "/" + o.CancelReason
				want += map[string]string{"cancelled": "/customer", "abandoned": "/reconcile", "lost to expiry": "/reconcile"}[what]
			}
			if got != want {
				t.Errorf("order %s (%s): %s, want %s", no, what, got, want)
			}
			if o.CancelReason == core.ReasonReconcile && o.ClosedAt.Before(o.ExpireAt) {
				t.Errorf("order %s cancelled by reconcile at %v, before its expiry %v", no, o.ClosedAt, o.ExpireAt)
			}
		}
		t.Logf("%d orders %v; %d runs, fixed %v", len(outcome), counts, len(runs), fixed)
		if counts["paid"] == 0 || counts["abandoned"] == 0 || fixed[reconcile.CheckExpiredPending] == 0 {
			t.Errorf("the load did not exercise payments and expiries: %v, fixed %v", counts, fixed)
		}
		if err := reconcile.CheckInvariants(ctx, st.DB, st.Seats, final.StartedAt); err != nil {
			t.Error(err)
		}
	})
}
