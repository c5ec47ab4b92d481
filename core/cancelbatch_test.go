package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// TestGroupCommitCancels queues cancels behind writers held busy, so they
// are written in one batch, and checks that each does exactly what it does
// alone, in one transaction:
//   - 21 cancels of 20 pending orders (one asked twice), written cancel by
//     cancel: each order is cancelled exactly once, its seat free in the DB
//     and the seat store; an order that does not exist in the batch sends
//     it back to one by one, and the others are cancelled all the same;
//   - a common batch (16 staff cancels, 2 timeouts of holds not yet
//     expired, 2 cancels of orders cancelled before) is written in five
//     statements: the 16 are cancelled, the others change nothing; with the
//     connection killed before the seats are deleted, the batch is written
//     one by one with the same outcome.
func TestGroupCommitCancels(t *testing.T) {
	for _, tc := range []struct {
		name    string
		missing bool
		common  bool
		kill    bool
	}{
		{name: "one batch"},
		{name: "a missing order in the batch", missing: true},
		{name: "common batch", common: true},
		{name: "common batch, connection killed before the seats are deleted", common: true, kill: true},
	} {
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
				staff := func(no string) core.CancelRequest {
					return core.CancelRequest{OrderNo: no, Reason: core.ReasonStaff, Actor: "staff:test"}
				}
				var reqs []core.CancelRequest
				switch {
				case tc.common:
					for _, no := range orders[18:] {
						if _, err := direct.CancelAndRelease(ctx, core.CancelRequest{OrderNo: no, Reason: core.ReasonCustomer, Actor: "user:1"}); err != nil {
							t.Fatal(err)
						}
					}
					for i, no := range orders {
						r := staff(no)
						if i == 16 || i == 17 { // a timeout of a hold that has a minute to go
							r = core.CancelRequest{OrderNo: no, Reason: core.ReasonTimeout, Actor: core.ActorSystem}
						}
						reqs = append(reqs, r)
					}
				default:
					reqs = append(reqs, staff(orders[0])) // asked twice
					for _, no := range orders {
						reqs = append(reqs, staff(no))
					}
					if tc.missing {
						reqs = append(reqs, staff("SF-NO-SUCH-ORDER"))
					}
				}

				gs := &gatedStore{Store: st.DB, gate: make(chan struct{}), holdN: core.CancelWriters}
				calls := map[string]int{}
				var callsMu sync.Mutex
				gs.inTx = func(tx core.Tx) core.Tx {
					faultAt := ""
					if tc.kill {
						faultAt = "DeleteSeatsOfOrders"
					}
					return countingTx{Tx: tx, mu: &callsMu, calls: calls, faultAt: faultAt, n: 1,
						fault: func() error { return killOpenTransactions(ctx, st) }}
				}
				metrics := core.NewMetrics(nil)
				eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, Delay: core.DefaultDelayPolicy()},
					core.Deps{Store: gs, Seats: st.Seats, Queue: st.Queue, Metrics: metrics})
				if err != nil {
					t.Fatal(err)
				}
				results := make([]core.CancelResult, len(reqs))
				errs := make([]error, len(reqs))
				inOneBatch(t, gs, func() int { return core.CancelQueueLen(eng) },
					len(plugs), func(i int) {
						if _, err := eng.CancelAndRelease(ctx, staff(plugs[i])); err != nil {
							t.Errorf("plug cancel: %v", err)
						}
					},
					len(reqs), func(i int) { results[i], errs[i] = eng.CancelAndRelease(ctx, reqs[i]) })

				wins := map[string]int{}
				for i, r := range reqs {
					switch {
					case r.OrderNo == "SF-NO-SUCH-ORDER":
						if !errors.Is(errs[i], core.ErrOrderNotFound) {
							t.Errorf("cancel of a missing order: %v, want order_not_found", errs[i])
						}
					case errs[i] != nil:
						t.Errorf("cancel %s: %v", r.OrderNo, errs[i])
					case results[i].Won:
						wins[r.OrderNo]++
					}
				}
				for i, no := range orders {
					wantWins, wantStatus, wantSeat := 1, core.StatusCancelled, core.SeatAvailable
					if tc.common && i >= 16 {
						wantWins = 0
						if i < 18 {
							wantStatus, wantSeat = core.StatusPending, core.SeatLocked
						}
					}
					if wins[no] != wantWins {
						t.Errorf("order %s won %d cancels, want %d", no, wins[no], wantWins)
					}
					o, evs, err := eng.Order(ctx, no)
					if err != nil {
						t.Fatal(err)
					}
					if o.Status != wantStatus {
						t.Errorf("order %s is %v, want %v", no, o.Status, wantStatus)
					}
					if wantWins == 1 && (o.CancelReason != core.ReasonStaff || o.CancelActor != "staff:test" || !hasEvent(evs, core.EventCancelled)) {
						t.Errorf("order %s cancelled for %q by %q, events %+v", no, o.CancelReason, o.CancelActor, evs)
					}
					if state := seatState(t, st, show.ID, fmt.Sprintf("A-%d", i+1)); state != wantSeat {
						t.Errorf("seat of order %s is %v in the seat store, want %v", no, state, wantSeat)
					}
				}
				taken, err := st.DB.TakenSeats(ctx, show.ID)
				if err != nil {
					t.Fatal(err)
				}
				if want := map[bool]int{true: 2}[tc.common]; len(taken) != want {
					t.Errorf("%d seats taken in the DB, want %d: %+v", len(taken), want, taken)
				}

				_, _, fallbacks := batchFigures(t, metrics, core.WriterCancel)
				if tc.missing || tc.kill {
					if fallbacks != 1 {
						t.Errorf("%v cancel batches written one by one, want 1", fallbacks)
					}
					return
				}
				wantOneBatch(t, metrics, core.WriterCancel, len(plugs), len(reqs))
				callsMu.Lock()
				defer callsMu.Unlock()
				if tc.common && (calls["OrdersForUpdate"] != 1 || calls["DeleteSeatsOfOrders"] != 1 || calls["OrderForUpdate"] != 0) {
					t.Errorf("common batch: %v; want one OrdersForUpdate and one DeleteSeatsOfOrders, no cancel locking its own order", calls)
				}
				if !tc.common && calls["OrderForUpdate"] != len(reqs) {
					t.Errorf("batch: %v; want each of the %d cancels locking its order", calls, len(reqs))
				}
			})
		})
	}
}

// TestGroupCommitCancelOtherSpelling is issue 28 item 2 on MariaDB, whose
// collation ignores case: cancels that name their orders in another case
// (upper-case hex) are written in one batch beside cancels spelled as
// stored. A customer's cancel acts on its order as stored: the answer
// names the order, cancelled, and its seat is free in the seat store. A
// cancel through the engine with the other spelling is "not found", as on
// SQLite, never a win over an empty order.
func TestGroupCommitCancelOtherSpelling(t *testing.T) {
	st := stacktest.Real(t)
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
	var plugs []string
	for i := range core.CancelWriters {
		plugs = append(plugs, place(900+int64(i), fmt.Sprintf("D-%d", i+1)))
	}
	type req struct {
		no, seat string
		user     int64
		customer bool // engine.Cancel, as the API's customer cancel; else CancelAndRelease
		upper    bool // the number in upper case
	}
	var reqs []req
	for i := range 8 {
		r := req{seat: fmt.Sprintf("A-%d", i+1), user: int64(i + 1), customer: i < 6, upper: i%2 == 0}
		r.no = place(r.user, r.seat)
		reqs = append(reqs, r)
	}

	gs := &gatedStore{Store: st.DB, gate: make(chan struct{}), holdN: core.CancelWriters}
	eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, Delay: core.DefaultDelayPolicy()},
		core.Deps{Store: gs, Seats: st.Seats, Queue: st.Queue})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]core.Order, len(reqs))
	errs := make([]error, len(reqs))
	inOneBatch(t, gs, func() int { return core.CancelQueueLen(eng) },
		len(plugs), func(i int) {
			if _, err := eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: plugs[i], Reason: core.ReasonStaff, Actor: "staff:test"}); err != nil {
				t.Errorf("plug cancel: %v", err)
			}
		},
		len(reqs), func(i int) {
			r := reqs[i]
			no := r.no
			if r.upper {
				no = strings.ToUpper(no)
			}
			if r.customer {
				got[i], errs[i] = eng.Cancel(ctx, no, r.user)
				return
			}
			var res core.CancelResult
			res, errs[i] = eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: no, Reason: core.ReasonStaff, Actor: "staff:test"})
			got[i] = res.Order
		})

	for i, r := range reqs {
		wantStatus, wantSeat := core.StatusCancelled, core.SeatAvailable
		switch {
		case r.upper && !r.customer:
			if !errors.Is(errs[i], core.ErrOrderNotFound) {
				t.Errorf("cancel of %s spelled %s: %v, %+v; want order_not_found", r.no, strings.ToUpper(r.no), errs[i], got[i])
			}
			wantStatus, wantSeat = core.StatusPending, core.SeatLocked
		case errs[i] != nil:
			t.Errorf("cancel of %s (upper case %v): %v", r.no, r.upper, errs[i])
		case got[i].OrderNo != r.no || got[i].Status != core.StatusCancelled:
			t.Errorf("cancel of %s (upper case %v) answered order %q, %v; want it cancelled", r.no, r.upper, got[i].OrderNo, got[i].Status)
		}
		o, err := st.DB.Order(ctx, r.no)
		if err != nil {
			t.Fatal(err)
		}
		if o.Status != wantStatus {
			t.Errorf("order %s is %v in the DB, want %v", r.no, o.Status, wantStatus)
		}
		if state := seatState(t, st, show.ID, r.seat); state != wantSeat {
			t.Errorf("seat of order %s is %v in the seat store, want %v", r.no, state, wantSeat)
		}
	}
}
