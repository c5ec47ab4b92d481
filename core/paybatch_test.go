package core_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// countingTx counts the batch writes of the batch's transaction and
// breaks it before the n-th call of method faultAt.
type countingTx struct {
	core.Tx
	mu      *sync.Mutex
	calls   map[string]int
	faultAt string
	n       int
	fault   func() error
}

func (f countingTx) call(method string) error {
	f.mu.Lock()
	f.calls[method]++
	hit := method == f.faultAt && f.calls[method] == f.n
	f.mu.Unlock()
	if hit {
		return f.fault()
	}
	return nil
}

func (f countingTx) OrderForUpdate(ctx context.Context, no string) (core.Order, error) {
	if err := f.call("OrderForUpdate"); err != nil {
		return core.Order{}, err
	}
	return f.Tx.OrderForUpdate(ctx, no)
}

func (f countingTx) OrdersForUpdate(ctx context.Context, nos []string) (map[string]core.Order, error) {
	if err := f.call("OrdersForUpdate"); err != nil {
		return nil, err
	}
	return f.Tx.OrdersForUpdate(ctx, nos)
}

func (f countingTx) InsertPayments(ctx context.Context, ps []core.Payment) error {
	if err := f.call("InsertPayments"); err != nil {
		return err
	}
	return f.Tx.InsertPayments(ctx, ps)
}

func (f countingTx) DeleteSeatsOfOrders(ctx context.Context, nos []string) (map[string][]string, error) {
	if err := f.call("DeleteSeatsOfOrders"); err != nil {
		return nil, err
	}
	return f.Tx.DeleteSeatsOfOrders(ctx, nos)
}

func (f countingTx) AddEvent(ctx context.Context, ev core.Event) error {
	if err := f.call("AddEvent"); err != nil {
		return err
	}
	return f.Tx.AddEvent(ctx, ev)
}

// TestGroupCommitPayments queues callbacks behind payment writers held
// busy, so they are written in one batch, and checks that each does
// exactly what it does alone, in one transaction:
//   - a mixed batch (20 orders paid, one callback sent twice, a second
//     payment of one order, money for a cancelled order and for an unknown
//     one) is written callback by callback: each order is paid once, every
//     other callback is a duplicate or the discrepancy it would be alone;
//   - a common batch (18 orders paid, 2 repeats of callbacks recorded
//     before) is written in five statements: no callback locks its order
//     on its own.
//
// With the batch's connection killed in its middle, the batch is written
// one by one and the outcome is the same.
func TestGroupCommitPayments(t *testing.T) {
	for _, tc := range []struct {
		name   string
		common bool
		kill   string // the Tx method before whose call the connection dies; "": none
	}{
		{name: "mixed batch"},
		{name: "mixed batch, connection killed mid-batch", kill: "AddEvent"},
		{name: "common batch", common: true},
		{name: "common batch, connection killed before the payments insert", common: true, kill: "InsertPayments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
				ctx := context.Background()
				show := st.NewShow(t, 4, 24)
				direct := st.Engine(t, core.Config{HoldTTL: time.Minute}, nil)
				place := func(user int64, seat string) core.Order {
					o, err := direct.Place(ctx, core.PlaceRequest{UserID: user, ShowID: show.ID, SeatIDs: []string{seat}})
					if err != nil {
						t.Fatal(err)
					}
					return o
				}
				pay := func(o core.Order, txn string) core.Payment {
					return core.Payment{OrderNo: o.OrderNo, TxnID: txn, AmountCents: o.AmountCents}
				}
				var plugs, orders []core.Order
				for i := range core.PayWriters {
					plugs = append(plugs, place(900+int64(i), fmt.Sprintf("D-%d", i+1)))
				}
				for i := range 20 {
					orders = append(orders, place(int64(i+1), fmt.Sprintf("A-%d", i+1)))
				}
				cancelled := place(800, "C-1")
				if _, err := direct.CancelAndRelease(ctx, core.CancelRequest{OrderNo: cancelled.OrderNo, Reason: core.ReasonCustomer, Actor: "user:800"}); err != nil {
					t.Fatal(err)
				}
				var reqs []core.Payment
				if tc.common {
					// The last two orders were paid before: their callbacks
					// come again.
					for i, o := range orders[18:] {
						if res, err := direct.HandlePayment(ctx, pay(o, fmt.Sprintf("T-%d", 18+i))); res != core.PaymentApplied || err != nil {
							t.Fatalf("paying order %s before the batch: %q %v", o.OrderNo, res, err)
						}
					}
					for i, o := range orders {
						reqs = append(reqs, pay(o, fmt.Sprintf("T-%d", i)))
					}
				} else {
					for i, o := range orders {
						reqs = append(reqs, pay(o, fmt.Sprintf("T-%d", i)))
					}
					reqs = append(reqs,
						pay(orders[0], "T-0"),         // the same callback again
						pay(orders[1], "T-1-SECOND"),  // a second payment of one order
						pay(cancelled, "T-CANCELLED"), // money for an order cancelled before
						core.Payment{OrderNo: "SF-NO-SUCH-ORDER", TxnID: "T-UNKNOWN", AmountCents: 700})
				}

				gs := &gatedStore{Store: st.DB, gate: make(chan struct{}), holdN: core.PayWriters}
				calls := map[string]int{}
				var callsMu sync.Mutex
				gs.inTx = func(tx core.Tx) core.Tx {
					return countingTx{Tx: tx, mu: &callsMu, calls: calls, faultAt: tc.kill, n: map[string]int{"AddEvent": 10, "InsertPayments": 1}[tc.kill],
						fault: func() error { return killOpenTransactions(ctx, st) }}
				}
				metrics := core.NewMetrics(nil)
				eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, Delay: core.DefaultDelayPolicy()},
					core.Deps{Store: gs, Seats: st.Seats, Queue: st.Queue, Metrics: metrics})
				if err != nil {
					t.Fatal(err)
				}
				results := make([]core.PaymentResult, len(reqs))
				errs := make([]error, len(reqs))
				inOneBatch(t, gs, func() int { return core.PayQueueLen(eng) },
					len(plugs), func(i int) {
						if _, err := eng.HandlePayment(ctx, pay(plugs[i], "PLUG-"+plugs[i].OrderNo)); err != nil {
							t.Errorf("plug payment: %v", err)
						}
					},
					len(reqs), func(i int) { results[i], errs[i] = eng.HandlePayment(ctx, reqs[i]) })

				count := map[string]map[core.PaymentResult]int{}
				for i, p := range reqs {
					if errs[i] != nil {
						t.Errorf("payment %s of %s: %v", p.TxnID, p.OrderNo, errs[i])
						continue
					}
					if count[p.OrderNo] == nil {
						count[p.OrderNo] = map[core.PaymentResult]int{}
					}
					count[p.OrderNo][results[i]]++
				}
				want := func(orderNo string, applied, duplicate, discrepancy int) {
					t.Helper()
					c := count[orderNo]
					if c[core.PaymentApplied] != applied || c[core.PaymentDuplicate] != duplicate || c[core.PaymentDiscrepancy] != discrepancy {
						t.Errorf("order %s: %v, want %d applied, %d duplicate, %d discrepancy", orderNo, c, applied, duplicate, discrepancy)
					}
				}
				wantRows := map[int]int{} // payment rows per order, beyond one
				if tc.common {
					for _, o := range orders[:18] {
						want(o.OrderNo, 1, 0, 0)
					}
					for _, o := range orders[18:] {
						want(o.OrderNo, 0, 1, 0)
					}
				} else {
					want(orders[0].OrderNo, 1, 1, 0)
					want(orders[1].OrderNo, 1, 0, 1)
					for _, o := range orders[2:] {
						want(o.OrderNo, 1, 0, 0)
					}
					want(cancelled.OrderNo, 0, 0, 1)
					want("SF-NO-SUCH-ORDER", 0, 0, 1)
					wantRows[1] = 1
				}

				for i, o := range orders {
					got, evs, err := eng.Order(ctx, o.OrderNo)
					if err != nil {
						t.Fatal(err)
					}
					// Which of order 1's two payments came first is the
					// scheduler's choice.
					if txn := fmt.Sprintf("T-%d", i); got.Status != core.StatusPaid ||
						(got.PaidTxnID != txn && (tc.common || i != 1 || got.PaidTxnID != "T-1-SECOND")) {
						t.Errorf("order %s is %v by %q, want paid by %s", o.OrderNo, got.Status, got.PaidTxnID, txn)
					}
					paidEvents := 0
					for _, ev := range evs {
						if ev.Kind == core.EventPaid {
							paidEvents++
						}
					}
					if paidEvents != 1 {
						t.Errorf("order %s has %d paid events, want 1", o.OrderNo, paidEvents)
					}
					if state := seatState(t, st, show.ID, fmt.Sprintf("A-%d", i+1)); state != core.SeatSold {
						t.Errorf("seat of paid order %s is %v in the seat store", o.OrderNo, state)
					}
					pays, err := st.DB.OrderPayments(ctx, o.OrderNo)
					if err != nil {
						t.Fatal(err)
					}
					if len(pays) != 1+wantRows[i] {
						t.Errorf("order %s has %d payment rows, want %d: %+v", o.OrderNo, len(pays), 1+wantRows[i], pays)
					}
				}
				if got, _, _ := eng.Order(ctx, cancelled.OrderNo); got.Status != core.StatusCancelled {
					t.Errorf("the cancelled order is %v after its payment, want cancelled", got.Status)
				}
				cases, err := st.DB.Discrepancies(ctx, store.DiscrepancyOpen, 100, 0)
				if err != nil {
					t.Fatal(err)
				}
				kinds := map[string]string{}
				for _, d := range cases {
					kinds[d.OrderNo] = d.Kind
				}
				if tc.common && len(cases) != 0 {
					t.Errorf("open cases after a common batch: %v", kinds)
				}
				if !tc.common && (len(cases) != 3 || kinds[orders[1].OrderNo] != core.DiscrepancySecondPayment ||
					kinds[cancelled.OrderNo] != core.DiscrepancyPaidAfterCancel || kinds["SF-NO-SUCH-ORDER"] != core.DiscrepancyUnknownOrder) {
					t.Errorf("open cases: %v, want second_payment, paid_after_cancel and unknown_order", kinds)
				}

				batches, _, fallbacks := batchFigures(t, metrics, core.WriterPay)
				if tc.kill != "" {
					// The plugs alone; the batch rolled back and was written
					// one by one, which the batch sizes do not count.
					if fallbacks != 1 || batches != uint64(len(plugs)) {
						t.Errorf("%v payment batches written one by one, %d batches; want 1 and %d",
							fallbacks, batches, len(plugs))
					}
					return
				}
				wantOneBatch(t, metrics, core.WriterPay, len(plugs), len(reqs))
				// The held plugs' transactions are not wrapped: every call
				// counted is the batch's.
				callsMu.Lock()
				defer callsMu.Unlock()
				if tc.common && (calls["OrdersForUpdate"] != 1 || calls["InsertPayments"] != 1 || calls["OrderForUpdate"] != 0) {
					t.Errorf("common batch: %v; want one OrdersForUpdate and one InsertPayments, no callback locking its own order", calls)
				}
				if !tc.common && calls["OrderForUpdate"] != len(reqs) {
					t.Errorf("mixed batch: %v; want each of the %d callbacks locking its order", calls, len(reqs))
				}
			})
		})
	}
}
