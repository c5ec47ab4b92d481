package core_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// TestGroupCommitCommitUnknown is issue 28 item 3: a batch of 16 orders
// (placements, cancels or payments), or a lone one written in a
// transaction of its own, whose COMMIT goes unanswered, either
// after it landed or without landing (stacktest.CommitFault: on MariaDB
// the batch's connection is cut right after the COMMIT goes out, or as it
// would). Either way every caller gets the answer it gets without the
// fault, with the seat store right at once (no reconcile run): placements
// placed with their seats locked and their timeouts scheduled, cancels won
// with their seats free, payments applied once with their seats sold and
// no duplicate recorded. A batch that landed is read back, not written
// again.
func TestGroupCommitCommitUnknown(t *testing.T) {
	for _, kind := range []string{"place", "cancel", "pay"} {
		for _, lone := range []bool{false, true} {
			for _, landed := range []bool{true, false} {
				name := kind + map[bool]string{false: ", batch", true: ", alone"}[lone] +
					map[bool]string{true: ", commit landed", false: ", commit lost"}[landed]
				t.Run(name, func(t *testing.T) {
					stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
						commitUnknownCase(t, st, kind, lone, landed)
					})
				})
			}
		}
	}
}

// commitUnknownCase runs one case: 16 requests in one batch behind the
// writers held busy by plugs, or one request (lone) and no plugs. A batch
// of cancels or payments has 2 more requests that write nothing (cancels
// of orders cancelled before, repeats of callbacks recorded before): once
// the others' writes show the batch landed, their answers stand too.
func commitUnknownCase(t *testing.T, st *stacktest.Stack, kind string, lone, landed bool) {
	ctx := context.Background()
	n, plugs, extras := 16, 0, 2
	if lone {
		n, extras = 1, 0
	}
	if kind == "place" {
		extras = 0
	}
	show := st.NewShow(t, 4, 20)
	direct := st.Engine(t, core.Config{HoldTTL: time.Minute}, nil)
	place := func(user int64, seat string) core.Order {
		o, err := direct.Place(ctx, core.PlaceRequest{UserID: user, ShowID: show.ID, SeatIDs: []string{seat}})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	seat := func(i int) string { return fmt.Sprintf("A-%d", i+1) }

	cf := st.CommitFault(t)
	gs := &gatedStore{Store: cf, gate: make(chan struct{}), holdN: core.PlaceWriters}
	if lone {
		gs.holdN = -1 // hold nothing
	}
	var armed atomic.Bool
	gs.inTx = func(tx core.Tx) core.Tx {
		// The batch's (or the lone write's) is the first transaction let
		// through that writes events: its COMMIT is the one lost, nothing
		// after it.
		return eventsHookTx{Tx: tx, before: func() error {
			if armed.CompareAndSwap(false, true) {
				return cf.LoseCommit(ctx, tx, landed)
			}
			return nil
		}}
	}
	metrics := core.NewMetrics(nil)
	eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, Delay: core.DefaultDelayPolicy()},
		core.Deps{Store: gs, Seats: st.Seats, Queue: st.Queue, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}

	var (
		orders []core.Order // the batch's, after it
		writer string
	)
	// inBatch runs the n+extras requests, with the plugs first unless lone.
	inBatch := func(queued func() int, plug func(i int), req func(i int)) {
		if lone {
			req(0)
			return
		}
		inOneBatch(t, gs, queued, plugs, plug, n+extras, req)
	}
	var extraOrders []core.Order // cancelled or paid before the batch
	for i := range extras {
		extraOrders = append(extraOrders, place(700+int64(i), fmt.Sprintf("B-%d", i+1)))
	}
	switch kind {
	case "place":
		writer = core.WriterPlace
		reqs := make([]core.PlaceRequest, n)
		for i := range reqs {
			reqs[i] = core.PlaceRequest{UserID: int64(i + 1), ShowID: show.ID, SeatIDs: []string{seat(i)}}
		}
		errs := make([]error, n)
		if lone {
			_, errs[0] = eng.Place(ctx, reqs[0])
		} else {
			plugs = core.PlaceWriters
			errs = placeInOneBatch(t, eng, gs, show.ID, []string{"D-1", "D-2", "D-3", "D-4"}, reqs)
		}
		for i, r := range reqs {
			nos := ordersOf(t, st, show.ID, r.UserID)
			if errs[i] != nil || len(nos) != 1 {
				t.Errorf("placement %d: %v, with %d orders in the DB; want placed, one order", i, errs[i], len(nos))
				continue
			}
			o, err := st.DB.Order(ctx, nos[0])
			if err != nil {
				t.Fatal(err)
			}
			orders = append(orders, o)
		}
	case "cancel":
		writer = core.WriterCancel
		if !lone {
			plugs = core.CancelWriters
		}
		var plugOrders []core.Order
		for i := range plugs {
			plugOrders = append(plugOrders, place(900+int64(i), fmt.Sprintf("D-%d", i+1)))
		}
		for i := range n {
			orders = append(orders, place(int64(i+1), seat(i)))
		}
		staff := func(no string) core.CancelRequest {
			return core.CancelRequest{OrderNo: no, Reason: core.ReasonStaff, Actor: "staff:test"}
		}
		for _, o := range extraOrders {
			if _, err := direct.CancelAndRelease(ctx, core.CancelRequest{OrderNo: o.OrderNo, Reason: core.ReasonCustomer, Actor: "user:700"}); err != nil {
				t.Fatal(err)
			}
		}
		all := append(slices.Clone(orders), extraOrders...)
		results := make([]core.CancelResult, len(all))
		errs := make([]error, len(all))
		inBatch(func() int { return core.CancelQueueLen(eng) },
			func(i int) {
				if _, err := eng.CancelAndRelease(ctx, staff(plugOrders[i].OrderNo)); err != nil {
					t.Errorf("plug cancel: %v", err)
				}
			},
			func(i int) { results[i], errs[i] = eng.CancelAndRelease(ctx, staff(all[i].OrderNo)) })
		for i, o := range all {
			wantWon := i < n
			if r := results[i]; errs[i] != nil || r.Won != wantWon || r.Order.OrderNo != o.OrderNo || r.Order.Status != core.StatusCancelled {
				t.Errorf("cancel of %s: %v, won %v, order %q %v; want won %v, cancelled", o.OrderNo, errs[i], r.Won, r.Order.OrderNo, r.Order.Status, wantWon)
			}
		}
	case "pay":
		writer = core.WriterPay
		if !lone {
			plugs = core.PayWriters
		}
		var plugOrders []core.Order
		for i := range plugs {
			plugOrders = append(plugOrders, place(900+int64(i), fmt.Sprintf("D-%d", i+1)))
		}
		for i := range n {
			orders = append(orders, place(int64(i+1), seat(i)))
		}
		pay := func(o core.Order, txn string) core.Payment {
			return core.Payment{OrderNo: o.OrderNo, TxnID: txn, AmountCents: o.AmountCents}
		}
		var reqs []core.Payment
		for i, o := range orders {
			reqs = append(reqs, pay(o, fmt.Sprintf("T-%d", i)))
		}
		for i, o := range extraOrders {
			p := pay(o, fmt.Sprintf("T-BEFORE-%d", i))
			if res, err := direct.HandlePayment(ctx, p); res != core.PaymentApplied || err != nil {
				t.Fatalf("paying order %s before the batch: %q %v", o.OrderNo, res, err)
			}
			reqs = append(reqs, p)
		}
		results := make([]core.PaymentResult, len(reqs))
		errs := make([]error, len(reqs))
		inBatch(func() int { return core.PayQueueLen(eng) },
			func(i int) {
				if _, err := eng.HandlePayment(ctx, pay(plugOrders[i], "PLUG-"+plugOrders[i].OrderNo)); err != nil {
					t.Errorf("plug payment: %v", err)
				}
			},
			func(i int) { results[i], errs[i] = eng.HandlePayment(ctx, reqs[i]) })
		for i, p := range reqs {
			want := core.PaymentApplied
			if i >= n {
				want = core.PaymentDuplicate
			}
			if errs[i] != nil || results[i] != want {
				t.Errorf("payment %s of %s: %q, %v; want %q", p.TxnID, p.OrderNo, results[i], errs[i], want)
			}
		}
	}
	if !armed.Load() {
		t.Fatal("the fault was never armed: no batch wrote events")
	}

	wantStatus, wantSeat, wantEvent := map[string]core.OrderStatus{"place": core.StatusPending, "cancel": core.StatusCancelled, "pay": core.StatusPaid}[kind],
		map[string]core.SeatState{"place": core.SeatLocked, "cancel": core.SeatAvailable, "pay": core.SeatSold}[kind],
		map[string]string{"place": core.EventPlaced, "cancel": core.EventCancelled, "pay": core.EventPaid}[kind]
	for i, o := range orders {
		got, evs, err := eng.Order(ctx, o.OrderNo)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != wantStatus {
			t.Errorf("order %s is %v, want %v", o.OrderNo, got.Status, wantStatus)
		}
		if state := seatState(t, st, show.ID, seat(i)); state != wantSeat {
			t.Errorf("seat of order %s is %v in the seat store, want %v", o.OrderNo, state, wantSeat)
		}
		count := map[string]int{}
		for _, ev := range evs {
			count[ev.Kind]++
		}
		if count[wantEvent] != 1 || count[core.EventPaymentDuplicate] != 0 {
			t.Errorf("order %s: events %v; want one %s, no duplicate payment", o.OrderNo, count, wantEvent)
		}
		switch kind {
		case "place":
			if count[core.EventTimeoutScheduled] == 0 {
				t.Errorf("order %s placed without its timeout message: %v", o.OrderNo, count)
			}
		case "pay":
			pays, err := st.DB.OrderPayments(ctx, o.OrderNo)
			if err != nil {
				t.Fatal(err)
			}
			if len(pays) != 1 || pays[0].Result != string(core.PaymentApplied) {
				t.Errorf("order %s has payments %+v, want the one applied", o.OrderNo, pays)
			}
		}
	}
	if kind == "pay" {
		cases, err := st.DB.Discrepancies(ctx, store.DiscrepancyOpen, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(cases) != 0 {
			t.Errorf("open cases after the batch: %+v", cases)
		}
	}
	// A batch that landed is settled by reading it back; one that did not
	// is written again, one by one. A lone write is never a fallback.
	batches, jobs, fallbacks := batchFigures(t, metrics, writer)
	wantFallbacks := 0.0
	if !landed && !lone {
		wantFallbacks = 1
	}
	if fallbacks != wantFallbacks || (landed && (batches != uint64(plugs)+1 || jobs != float64(plugs+n+extras))) {
		t.Errorf("%s: %d transactions of %v jobs, %v fallbacks; want %v fallbacks (and, landed, %d of %d)",
			writer, batches, jobs, fallbacks, wantFallbacks, plugs+1, plugs+n+extras)
	}
}

// eventsHookTx runs before ahead of the transaction's first event write:
// the last statements of every batch and of every lone write.
type eventsHookTx struct {
	core.Tx
	before func() error
}

// SQL lets the DB queue's outbox write in the wrapped transaction.
func (h eventsHookTx) SQL() *sqlx.Tx { return h.Tx.(interface{ SQL() *sqlx.Tx }).SQL() }

func (h eventsHookTx) AddEvent(ctx context.Context, ev core.Event) error {
	if err := h.before(); err != nil {
		return err
	}
	return h.Tx.AddEvent(ctx, ev)
}

func (h eventsHookTx) AddEvents(ctx context.Context, evs []core.Event) error {
	if err := h.before(); err != nil {
		return err
	}
	return h.Tx.AddEvents(ctx, evs)
}
