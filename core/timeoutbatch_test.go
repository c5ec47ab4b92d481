package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
)

// sendLog is a stack's delay queue keeping every Send: the timeouts each
// message carried. It hides the DB queue's SendTx, so on the embedded
// stack too the engine sends its first timeouts after the commit.
type sendLog struct {
	core.DelayQueue
	mu    sync.Mutex
	sends [][]core.TimeoutMsg
	fail  bool // every Send fails (the broker is down): the messages are lost
}

func (q *sendLog) Send(ctx context.Context, msgs []core.TimeoutMsg, level int, delay time.Duration) error {
	q.mu.Lock()
	fail := q.fail
	q.mu.Unlock()
	if fail {
		return errors.New("injected: broker down, message lost")
	}
	if err := q.DelayQueue.Send(ctx, msgs, level, delay); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sends = append(q.sends, slices.Clone(msgs))
	return nil
}

func (q *sendLog) since(n int) [][]core.TimeoutMsg {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.sends[n:])
}

func (q *sendLog) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.sends)
}

// poisonStore fails every read of one order, as a row the engine cannot
// decode would.
type poisonStore struct {
	core.Store
	mu     sync.Mutex
	poison string
}

func (s *poisonStore) Order(ctx context.Context, orderNo string) (core.Order, error) {
	s.mu.Lock()
	poison := s.poison
	s.mu.Unlock()
	if orderNo == poison {
		return core.Order{}, fmt.Errorf("injected: order %s cannot be read", orderNo)
	}
	return s.Store.Order(ctx, orderNo)
}

// orderNos are the order numbers of msgs, sorted.
func orderNos(msgs []core.TimeoutMsg) []string {
	var nos []string
	for _, m := range msgs {
		nos = append(nos, m.OrderNo)
	}
	slices.Sort(nos)
	return nos
}

// TestTimeoutBatch: a placement batch sends one timeout message naming all
// its orders; delivered, each of its timeouts ends as it would alone (an
// extended order re-arms, a paid and a cancelled one are left alone, a due
// one is cancelled) with the re-arms in one message; delivered twice, it
// changes nothing; a poison order fails alone; a lost message leaves its
// orders to the expiry sweep. On both queues (the embedded stack's DB
// queue through its Send, not the outbox).
func TestTimeoutBatch(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		show := st.NewShow(t, 4, 10)
		clock := stacktest.NewClock(time.Now())
		q := &sendLog{DelayQueue: st.Queue}
		ps := &poisonStore{Store: st.DB}
		gs := &gatedStore{Store: ps, gate: make(chan struct{})}
		const ttl = 15 * time.Minute
		eng, err := core.NewEngine(core.Config{HoldTTL: ttl, Delay: core.DefaultDelayPolicy()},
			core.Deps{Store: gs, Seats: st.Seats, Queue: q, Clock: clock, Metrics: core.NewMetrics(prometheus.NewRegistry())})
		if err != nil {
			t.Fatal(err)
		}

		reqs := make([]core.PlaceRequest, 6)
		for i := range reqs {
			reqs[i] = core.PlaceRequest{UserID: int64(i + 1), ShowID: show.ID, SeatIDs: []string{fmt.Sprintf("B-%d", i+1)}}
		}
		plugSeats := []string{"A-1", "A-2", "A-3", "A-4"}
		for i, err := range placeInOneBatch(t, eng, gs, show.ID, plugSeats, reqs) {
			if err != nil {
				t.Fatalf("place %d: %v", i, err)
			}
		}
		var placed []string
		for _, r := range reqs {
			placed = append(placed, ordersOf(t, st, show.ID, r.UserID)...)
		}
		slices.Sort(placed)
		// The batch's orders are in one message (the plugs', committed
		// beside it, may share it: the sender merges what comes together).
		var batch []core.TimeoutMsg
		for _, m := range q.since(0) {
			ours := slices.DeleteFunc(slices.Clone(m), func(x core.TimeoutMsg) bool { return !slices.Contains(placed, x.OrderNo) })
			if len(ours) == 0 {
				continue
			}
			if batch != nil {
				t.Fatalf("the batch's orders went out in more than one message: %v, then %v", orderNos(batch), orderNos(ours))
			}
			batch = ours
		}
		if got := orderNos(batch); !slices.Equal(got, placed) {
			t.Fatalf("the batch's message names %v, want its 6 orders %v", got, placed)
		}
		for _, m := range batch {
			if m.Hop != 1 || m.DueAt.IsZero() {
				t.Errorf("first timeout %+v, want hop 1 with a due time", m)
			}
		}
		byUser := map[int64]string{}
		for _, r := range reqs {
			byUser[r.UserID] = ordersOf(t, st, show.ID, r.UserID)[0]
		}
		extended, paid, cancelled, due, poison, alsoDue := byUser[1], byUser[2], byUser[3], byUser[4], byUser[5], byUser[6]
		if _, err := eng.Extend(ctx, extended, 10*time.Minute, "staff:test", "batch", nil); err != nil {
			t.Fatal(err)
		}
		po, err := st.DB.Order(ctx, paid)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := eng.HandlePayment(ctx, core.Payment{TxnID: "T" + paid, OrderNo: paid, AmountCents: po.AmountCents}); err != nil || res != core.PaymentApplied {
			t.Fatalf("pay: %v %v", res, err)
		}
		if _, err := eng.Cancel(ctx, cancelled, 3); err != nil {
			t.Fatal(err)
		}
		ps.mu.Lock()
		ps.poison = poison
		ps.mu.Unlock()

		// The first hop comes at its due time, past the hold's expiry.
		clock.Advance(ttl + 2*time.Second)
		before := q.count()
		errs := eng.HandleTimeouts(ctx, batch)
		for i, m := range batch {
			if wantErr := m.OrderNo == poison; (errs[i] != nil) != wantErr {
				t.Errorf("timeout of %s: %v, want an error only for the poison order", m.OrderNo, errs[i])
			}
		}
		want := map[string]struct {
			status core.OrderStatus
			reason string
			hop    int
		}{
			extended:  {core.StatusPending, "", 2},
			paid:      {core.StatusPaid, "", 1},
			cancelled: {core.StatusCancelled, core.ReasonCustomer, 1},
			due:       {core.StatusCancelled, core.ReasonTimeout, 1},
			poison:    {core.StatusPending, "", 1},
			alsoDue:   {core.StatusCancelled, core.ReasonTimeout, 1},
		}
		check := func(when string) {
			t.Helper()
			for no, w := range want {
				o, err := st.DB.Order(ctx, no)
				if err != nil {
					t.Fatal(err)
				}
				if o.Status != w.status || o.CancelReason != w.reason || o.TimeoutHop != w.hop || o.TimeoutSend != core.HopSent {
					t.Errorf("%s: order %s is %v (%q) at hop %d, send %d; want %v (%q) at hop %d, sent",
						when, no, o.Status, o.CancelReason, o.TimeoutHop, o.TimeoutSend, w.status, w.reason, w.hop)
				}
			}
		}
		check("after the batch")
		rearms := q.since(before)
		if len(rearms) != 1 || len(rearms[0]) != 1 || rearms[0][0].OrderNo != extended || rearms[0][0].Hop != 2 {
			t.Errorf("re-arm messages %+v, want one naming the extended order at hop 2", rearms)
		}

		// Delivered again (at least once): nothing changes, nothing is sent.
		before = q.count()
		for i, err := range eng.HandleTimeouts(ctx, batch) {
			if err != nil && batch[i].OrderNo != poison {
				t.Errorf("redelivery of %s: %v", batch[i].OrderNo, err)
			}
		}
		check("after a redelivery")
		if n := q.count() - before; n != 0 {
			t.Errorf("a redelivery sent %d messages", n)
		}

		// The poison order, readable again, ends on its own retry.
		ps.mu.Lock()
		ps.poison = ""
		ps.mu.Unlock()
		for _, m := range batch {
			if m.OrderNo == poison {
				if err := eng.HandleTimeout(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
		}
		want[poison] = want[due]
		check("after the poison order's retry")

		// A batch whose message is lost: the sweep ends its orders once due.
		q.mu.Lock()
		q.fail = true
		q.mu.Unlock()
		var lostNos []string
		for i := range 3 {
			o, err := eng.Place(ctx, core.PlaceRequest{UserID: int64(20 + i), ShowID: show.ID, SeatIDs: []string{fmt.Sprintf("C-%d", i+1)}})
			if err != nil {
				t.Fatal(err)
			}
			lostNos = append(lostNos, o.OrderNo)
		}
		clock.Advance(ttl + 5*time.Second)
		rec, err := reconcile.New(reconcile.Deps{Engine: eng, DB: st.DB, Seats: st.Seats, Clock: clock},
			reconcile.Options{Owner: "test-" + stacktest.RandHex(3), Grace: 2 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if run, err := rec.RunOnce(ctx, reconcile.TriggerManual, false); err != nil || !run.OK() {
			t.Fatalf("reconcile: %+v %v", run, err)
		}
		for _, no := range lostNos {
			if o, err := st.DB.Order(ctx, no); err != nil || o.Status != core.StatusCancelled {
				t.Errorf("order %s of a lost message after the sweep: %v %v, want cancelled", no, o.Status, err)
			}
		}
		if err := reconcile.CheckInvariants(ctx, st.DB, st.Seats, clock.Now()); err != nil {
			t.Fatal(err)
		}
	})
}
