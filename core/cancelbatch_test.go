package core_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// TestGroupCommitCancels queues 21 cancels of 20 pending orders (one of
// them asked twice) behind writers held busy, so they are written in one
// batch: each order is cancelled exactly once, its seat is free in the DB
// and the seat store, and the batch is one transaction. An order that does
// not exist in the batch sends it back to one by one, and the others are
// cancelled all the same.
func TestGroupCommitCancels(t *testing.T) {
	for _, tc := range []struct {
		name    string
		missing bool
	}{{name: "one batch"}, {name: "a missing order in the batch", missing: true}} {
		t.Run(tc.name, func(t *testing.T) {
			stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
				ctx := context.Background()
				show := st.NewShow(t, 4, 20)
				direct := st.Engine(t, core.Config{HoldTTL: time.Minute}, nil)
				place := func(user int64, seat string) string {
					o, err := direct.Place(ctx, core.PlaceRequest{UserID: user, ShowID: show.ID, SeatIDs: []string{seat}})
					if err != nil {
						t.Fatal(err)
					}
					return o.OrderNo
				}
				var plugs, orders []string
				for i := range core.CancelWriters {
					plugs = append(plugs, place(900+int64(i), fmt.Sprintf("D-%d", i+1)))
				}
				for i := range 20 {
					orders = append(orders, place(int64(i+1), fmt.Sprintf("A-%d", i+1)))
				}

				gs := &gatedStore{Store: st.DB, gate: make(chan struct{}), holdN: core.CancelWriters}
				metrics := core.NewMetrics(nil)
				eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, Delay: core.DefaultDelayPolicy()},
					core.Deps{Store: gs, Seats: st.Seats, Queue: st.Queue, Metrics: metrics})
				if err != nil {
					t.Fatal(err)
				}
				staff := func(no string) core.CancelRequest {
					return core.CancelRequest{OrderNo: no, Reason: core.ReasonStaff, Actor: "staff:test"}
				}
				deadline := time.Now().Add(10 * time.Second)
				var wg sync.WaitGroup
				for i, no := range plugs { // one at a time, each keeps a writer busy
					wg.Go(func() {
						if _, err := eng.CancelAndRelease(ctx, staff(no)); err != nil {
							t.Errorf("plug cancel: %v", err)
						}
					})
					for gs.heldNow() <= i {
						if time.Now().After(deadline) {
							t.Fatalf("plug cancel %d never reached the store", i)
						}
						time.Sleep(time.Millisecond)
					}
				}
				reqs := []string{orders[0]} // asked twice
				reqs = append(reqs, orders...)
				if tc.missing {
					reqs = append(reqs, "SF-NO-SUCH-ORDER")
				}
				results := make([]core.CancelResult, len(reqs))
				errs := make([]error, len(reqs))
				for i, no := range reqs {
					wg.Go(func() { results[i], errs[i] = eng.CancelAndRelease(ctx, staff(no)) })
				}
				for core.CancelQueueLen(eng) < len(reqs) {
					if time.Now().After(deadline) {
						t.Fatalf("%d of %d cancels queued", core.CancelQueueLen(eng), len(reqs))
					}
					time.Sleep(time.Millisecond)
				}
				close(gs.gate)
				wg.Wait()

				wins := map[string]int{}
				for i, no := range reqs {
					switch {
					case no == "SF-NO-SUCH-ORDER":
						if !errors.Is(errs[i], core.ErrOrderNotFound) {
							t.Errorf("cancel of a missing order: %v, want order_not_found", errs[i])
						}
					case errs[i] != nil:
						t.Errorf("cancel %s: %v", no, errs[i])
					case results[i].Won:
						wins[no]++
					}
				}
				for i, no := range orders {
					if wins[no] != 1 {
						t.Errorf("order %s won %d cancels, want exactly 1", no, wins[no])
					}
					o, _, err := eng.Order(ctx, no)
					if err != nil {
						t.Fatal(err)
					}
					if o.Status != core.StatusCancelled {
						t.Errorf("order %s is %v, want cancelled", no, o.Status)
					}
					if state := seatState(t, st, show.ID, fmt.Sprintf("A-%d", i+1)); state != core.SeatAvailable {
						t.Errorf("seat of cancelled order %s is %v in the seat store", no, state)
					}
				}
				if taken, err := st.DB.TakenSeats(ctx, show.ID); err != nil || len(taken) != 0 {
					t.Errorf("seats still taken in the DB: %+v (%v)", taken, err)
				}

				fallbacks := testutil.ToFloat64(metrics.GroupCommitFallbacks.WithLabelValues(core.WriterCancel))
				var m dto.Metric
				if err := metrics.GroupCommitBatch.WithLabelValues(core.WriterCancel).(prometheus.Histogram).Write(&m); err != nil {
					t.Fatal(err)
				}
				if tc.missing {
					if fallbacks != 1 {
						t.Errorf("%v cancel batches written one by one, want 1", fallbacks)
					}
					return
				}
				// The plugs alone, then one transaction for all 21.
				if fallbacks != 0 || m.Histogram.GetSampleCount() != uint64(len(plugs))+1 ||
					m.Histogram.GetSampleSum() != float64(len(plugs)+len(reqs)) {
					t.Errorf("cancel batches: %d transactions of %v cancels in all, %v fallbacks; want %d of %d, none",
						m.Histogram.GetSampleCount(), m.Histogram.GetSampleSum(), fallbacks, len(plugs)+1, len(plugs)+len(reqs))
				}
			})
		})
	}
}
