package checkin_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/checkin"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// fixture is a stack with a show, an engine to sell its seats and a desk.
type fixture struct {
	st      *stacktest.Stack
	eng     *core.Engine
	refunds *core.Refunds
	clock   *stacktest.Clock
	show    core.Show
	desk    *checkin.Desk
	reg     *prometheus.Registry
	users   int64
}

func newFixture(t *testing.T, st *stacktest.Stack) *fixture {
	t.Helper()
	clock := stacktest.NewClock(time.Now())
	eng := st.Engine(t, core.Config{PurchaseLimit: 6}, clock)
	refunds, err := core.NewRefunds(eng, st.DB, 0)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	return &fixture{st: st, eng: eng, refunds: refunds, clock: clock, show: st.NewShow(t, 5, 5),
		desk: checkin.New(st.DB, clock, reg), reg: reg}
}

func (f *fixture) place(t *testing.T, seats ...string) core.Order {
	t.Helper()
	f.users++ // one buyer per order: no purchase limit in the way
	o, err := f.eng.Place(context.Background(), core.PlaceRequest{UserID: f.users, ShowID: f.show.ID, SeatIDs: seats})
	if err != nil {
		t.Fatalf("place %v: %v", seats, err)
	}
	return o
}

func (f *fixture) paid(t *testing.T, seats ...string) core.Order {
	t.Helper()
	o := f.place(t, seats...)
	res, err := f.eng.HandlePayment(context.Background(), core.Payment{OrderNo: o.OrderNo, TxnID: "T-" + o.OrderNo, AmountCents: o.AmountCents})
	if err != nil || res != core.PaymentApplied {
		t.Fatalf("pay %s: %v %v", o.OrderNo, res, err)
	}
	return o
}

// refusal is err's check-in refusal, or nil.
func refusal(err error) *checkin.Refusal {
	var ce *core.Error
	if errors.As(err, &ce) {
		r, _ := ce.Detail.(*checkin.Refusal)
		return r
	}
	return nil
}

// TestAdmit covers every answer of a scan on both stacks: each case sets up
// an order, scans it once (before, when set, runs first) and names the
// answer it must get.
func TestAdmit(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		scan := func(r checkin.Request) (checkin.Admission, error) {
			if r.Gate == "" {
				r.Gate = "north"
			}
			r.Actor = "staff:door1"
			return f.desk.Admit(ctx, r)
		}
		cases := []struct {
			name  string
			setup func(t *testing.T) checkin.Request
			// result, reason: the answer; seats and count: an admission's.
			result, reason string
			seats          []string
			count          int
		}{
			{name: "paid order by code admits every seat", setup: func(t *testing.T) checkin.Request {
				o := f.paid(t, "A-1", "A-2")
				return checkin.Request{Code: strings.ToLower(o.Code)}
			}, result: checkin.ResultAdmitted, seats: []string{"A-1", "A-2"}, count: 2},
			{name: "by order number", setup: func(t *testing.T) checkin.Request {
				return checkin.Request{OrderNo: f.paid(t, "A-3").OrderNo}
			}, result: checkin.ResultAdmitted, seats: []string{"A-3"}, count: 1},
			{name: "part of the order, then the rest", setup: func(t *testing.T) checkin.Request {
				o := f.paid(t, "B-1", "B-2", "B-3")
				if _, err := scan(checkin.Request{Code: o.Code, SeatIDs: []string{"B-2"}}); err != nil {
					t.Fatal(err)
				}
				return checkin.Request{Code: o.Code}
			}, result: checkin.ResultAdmitted, seats: []string{"B-1", "B-3"}, count: 3},
			{name: "the show the gate admits to", setup: func(t *testing.T) checkin.Request {
				return checkin.Request{Code: f.paid(t, "A-4").Code, ShowID: f.show.ID}
			}, result: checkin.ResultAdmitted, seats: []string{"A-4"}, count: 1},
			{name: "second scan", setup: func(t *testing.T) checkin.Request {
				o := f.paid(t, "C-1")
				if _, err := scan(checkin.Request{Code: o.Code, Gate: "south"}); err != nil {
					t.Fatal(err)
				}
				return checkin.Request{Code: o.Code}
			}, result: checkin.ResultAlreadyCheckedIn},
			{name: "unknown code", setup: func(t *testing.T) checkin.Request {
				return checkin.Request{Code: "ZZZZZZZZ"}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonUnknownCode},
			{name: "not a code at all", setup: func(t *testing.T) checkin.Request {
				return checkin.Request{Code: "http://x/?"}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonUnknownCode},
			{name: "unknown order number", setup: func(t *testing.T) checkin.Request {
				return checkin.Request{OrderNo: "SF-none"}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonUnknownCode},
			{name: "unpaid", setup: func(t *testing.T) checkin.Request {
				return checkin.Request{Code: f.place(t, "D-1").Code}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonUnpaid},
			{name: "cancelled", setup: func(t *testing.T) checkin.Request {
				o := f.place(t, "D-2")
				if _, err := f.eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: o.OrderNo, Reason: "customer", Actor: "user:1"}); err != nil {
					t.Fatal(err)
				}
				return checkin.Request{Code: o.Code}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonCancelled},
			{name: "refunded", setup: func(t *testing.T) checkin.Request {
				o := f.paid(t, "D-3")
				if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "asked", Actor: "staff:olga"}); err != nil {
					t.Fatal(err)
				}
				return checkin.Request{Code: o.Code}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonRefunded},
			{name: "refunded after its admission", setup: func(t *testing.T) checkin.Request {
				o := f.paid(t, "D-4")
				if _, err := scan(checkin.Request{Code: o.Code}); err != nil {
					t.Fatal(err)
				}
				if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "asked", Actor: "staff:olga"}); err != nil {
					t.Fatal(err)
				}
				return checkin.Request{Code: o.Code}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonRefunded},
			{name: "another show", setup: func(t *testing.T) checkin.Request {
				return checkin.Request{Code: f.paid(t, "E-1").Code, ShowID: f.show.ID + 1}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonAnotherShow},
			{name: "a seat not of the order", setup: func(t *testing.T) checkin.Request {
				return checkin.Request{Code: f.paid(t, "E-2").Code, SeatIDs: []string{"E-3"}}
			}, result: checkin.ResultNotValid, reason: checkin.ReasonNotInOrder},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				a, err := scan(tc.setup(t))
				switch tc.result {
				case checkin.ResultAdmitted:
					if err != nil || fmt.Sprint(a.Seats) != fmt.Sprint(tc.seats) || a.AdmittedCount != tc.count {
						t.Fatalf("got %+v %v, want seats %v count %d", a, err, tc.seats, tc.count)
					}
				case checkin.ResultAlreadyCheckedIn:
					r := refusal(err)
					if !errors.Is(err, checkin.ErrAlreadyCheckedIn) || r == nil || r.First == nil ||
						r.First.Gate != "south" || r.First.By != "staff:door1" || !r.First.At.Equal(f.clock.Now()) {
						t.Fatalf("got %v %+v, want already_checked_in first at south by staff:door1", err, r)
					}
				case checkin.ResultNotValid:
					if r := refusal(err); !errors.Is(err, checkin.ErrNotValid) || r == nil || r.Reason != tc.reason {
						t.Fatalf("got %v %+v, want not_valid %s", err, r, tc.reason)
					}
				}
			})
		}
		for result, want := range map[string]float64{checkin.ResultAdmitted: 7, checkin.ResultAlreadyCheckedIn: 1, checkin.ResultNotValid: 9} {
			if got := counter(t, f.reg, result); got != want {
				t.Errorf("seatflow_checkins_total{result=%q} = %v, want %v", result, got, want)
			}
		}
	})
}

func counter(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	n, err := testutil.GatherAndCount(reg, "seatflow_checkins_total")
	if err != nil || n != 4 {
		t.Fatalf("seatflow_checkins_total has %d series (%v), want 4 from the start", n, err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

func TestBadRequests(t *testing.T) {
	f := newFixture(t, stacktest.Embedded(t))
	o := f.paid(t, "A-1")
	for _, r := range []checkin.Request{
		{Gate: "north"},
		{Code: o.Code, OrderNo: o.OrderNo, Gate: "north"},
		{Code: o.Code},
		{Code: o.Code, Gate: strings.Repeat("g", 65)},
		{Code: o.Code, Gate: "no\u200bgate"},
	} {
		if _, err := f.desk.Admit(context.Background(), r); core.ErrorKind(err) != core.KindInvalid {
			t.Errorf("%+v: %v, want invalid", r, err)
		}
	}
}

// TestUndo: staff undo a scan (audited, with the scan undone), the ticket
// then admits once more, and an undo of nothing admitted is refused.
func TestUndo(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		o := f.paid(t, "A-1", "A-2")
		if _, err := f.desk.Admit(ctx, checkin.Request{Code: o.Code, Gate: "north", Actor: "staff:door1"}); err != nil {
			t.Fatal(err)
		}
		staff := &core.StaffAction{Staff: "staff:olga", Role: access.RoleOps, IP: "192.0.2.1"}
		undone, err := f.desk.Undo(ctx, "", o.OrderNo, []string{"A-2"}, staff)
		if err != nil || len(undone) != 1 || undone[0].SeatID != "A-2" || undone[0].Gate != "north" {
			t.Fatalf("undo: %+v %v", undone, err)
		}
		if _, err := f.desk.Undo(ctx, o.Code, "", []string{"A-2"}, staff); !errors.Is(err, checkin.ErrNotCheckedIn) {
			t.Fatalf("second undo: %v, want not_checked_in", err)
		}
		entries, err := st.DB.AuditLog(ctx, store.AuditQuery{Action: checkin.AuditUndo, Limit: 10})
		if err != nil || len(entries) != 1 || entries[0].Staff != "staff:olga" || entries[0].Target != "order:"+o.OrderNo ||
			!strings.Contains(fmt.Sprint(entries[0].Detail["scans"]), "north") {
			t.Fatalf("audit %+v %v, want one checkin_undo row naming the scan", entries, err)
		}
		var admitted []string
		for range 3 {
			a, err := f.desk.Admit(ctx, checkin.Request{Code: o.Code, Gate: "south", Actor: "staff:door2"})
			if err == nil {
				admitted = append(admitted, a.Seats...)
			} else if !errors.Is(err, checkin.ErrAlreadyCheckedIn) {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(admitted) != "[A-2]" {
			t.Fatalf("after the undo, scans admitted %v, want A-2 once", admitted)
		}
	})
}

// TestConcurrentGates fires one ticket from n goroutines through two desks,
// each on a store of its own over one database (two instances), released
// at once: exactly one scan admits; every other is already_checked_in
// naming that scan's gate.
func TestConcurrentGates(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		other, err := store.Open(ctx, st.DSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		desks := []*checkin.Desk{f.desk, checkin.New(other, f.clock, nil)}
		o := f.paid(t, "A-1", "A-2")
		const n = 16
		var (
			wg      sync.WaitGroup
			start   = make(chan struct{})
			results = make([]error, n)
			admits  = make([]checkin.Admission, n)
		)
		for i := range n {
			wg.Go(func() {
				<-start
				admits[i], results[i] = desks[i%2].Admit(ctx, checkin.Request{Code: o.Code,
					Gate: fmt.Sprintf("gate-%d", i), Actor: "staff:door"})
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range results {
			if err == nil {
				if winner >= 0 {
					t.Fatalf("scans %d and %d both admitted", winner, i)
				}
				winner = i
				if fmt.Sprint(admits[i].Seats) != "[A-1 A-2]" {
					t.Errorf("winner admitted %v", admits[i].Seats)
				}
			}
		}
		if winner < 0 {
			t.Fatalf("no scan admitted: %v", results)
		}
		for i, err := range results {
			if i == winner {
				continue
			}
			if r := refusal(err); !errors.Is(err, checkin.ErrAlreadyCheckedIn) || r.First.Gate != fmt.Sprintf("gate-%d", winner) {
				t.Errorf("scan %d: %v %+v, want already_checked_in at gate-%d", i, err, r, winner)
			}
		}
	})
}
