package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
)

// refundFixture is an engine fixture with the refund workflow on it.
type refundFixture struct {
	*fixture
	refunds *core.Refunds
}

func newRefundFixture(t *testing.T, st *stacktest.Stack, approvalCents int64, cfg core.Config) *refundFixture {
	t.Helper()
	f := newFixture(t, st, cfg)
	r, err := core.NewRefunds(f.eng, st.DB, approvalCents)
	if err != nil {
		t.Fatal(err)
	}
	return &refundFixture{fixture: f, refunds: r}
}

// paid places and pays an order.
func (f *refundFixture) paid(t *testing.T, user int64, seats ...string) core.Order {
	t.Helper()
	o := f.place(t, user, seats...)
	if res, err := f.pay(t, o, "T-"+o.OrderNo); err != nil || res != core.PaymentApplied {
		t.Fatalf("pay %s: %v %v", o.OrderNo, res, err)
	}
	return o
}

// refundRows returns the order's refund rows.
func (f *refundFixture) refundRows(t *testing.T, orderNo string) []core.Refund {
	t.Helper()
	rs, err := f.st.DB.OrderRefunds(context.Background(), orderNo)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// invariants checks DESIGN.md's invariants over the whole stack's shows.
func (f *refundFixture) invariants(t *testing.T) {
	t.Helper()
	f.checkInvariants(t)
}

func TestRefund(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newRefundFixture(t, st, 0, core.Config{PurchaseLimit: 2})
		ops := core.RefundRequest{Reason: "customer asked", Reference: "RF-1", Actor: "staff:olga"}

		o := f.paid(t, 1, "A-1", "A-2")
		req := ops
		req.OrderNo = o.OrderNo
		out, err := f.refunds.Refund(ctx, req)
		if err != nil || out.Pending || out.Order.Status != core.StatusRefunded || out.Refund.State != core.RefundDone {
			t.Fatalf("refund: %+v %v", out, err)
		}
		if got := f.status(t, o.OrderNo); got != core.StatusRefunded {
			t.Errorf("status %v, want refunded", got)
		}
		f.wantSeats(t, core.SeatAvailable, "A-1", "A-2")
		f.checkSeatsMatchDB(t)
		rows := f.refundRows(t, o.OrderNo)
		if len(rows) != 1 || rows[0].AmountCents != o.AmountCents || rows[0].Reason != "customer asked" ||
			rows[0].Reference != "RF-1" || rows[0].ApprovedBy != "staff:olga" || rows[0].State != core.RefundDone {
			t.Errorf("refund rows %+v", rows)
		}
		if n := len(f.events(t, o.OrderNo, core.EventRefunded)); n != 1 {
			t.Errorf("%d refunded events, want 1", n)
		}
		if n := len(f.events(t, o.OrderNo, core.EventSeatsReleased)); n != 1 {
			t.Errorf("%d seats_released events, want 1", n)
		}
		// The purchase limit (2) was given back: the buyer may buy two again.
		f.paid(t, 1, "A-1", "B-2")
		f.invariants(t)

		// A payment arriving after the refund is money to give back, and
		// does not revive the order or sell its seats.
		res, err := f.pay(t, o, "late-"+o.OrderNo)
		if err != nil || res != core.PaymentDiscrepancy {
			t.Fatalf("payment after refund: %v %v", res, err)
		}
		ds := f.events(t, o.OrderNo, core.EventDiscrepancy)
		if len(ds) != 1 || ds[0].Detail["kind"] != core.DiscrepancyPaidAfterRefund {
			t.Errorf("discrepancy events %+v, want one %s", ds, core.DiscrepancyPaidAfterRefund)
		}
		if got := f.status(t, o.OrderNo); got != core.StatusRefunded {
			t.Errorf("status after a late payment %v, want refunded", got)
		}
		// The customer cannot cancel a refunded order.
		if _, err := f.eng.Cancel(ctx, o.OrderNo, 1); !errors.Is(err, core.ErrOrderNotPending) {
			t.Errorf("customer cancel of a refunded order: %v, want order_not_pending", err)
		}
		f.invariants(t)
	})
}

func TestRefundRefusals(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newRefundFixture(t, st, 0, core.Config{})
		pending := f.place(t, 1, "A-1")
		cancelled := f.place(t, 2, "A-2")
		if _, err := f.eng.Cancel(ctx, cancelled.OrderNo, 2); err != nil {
			t.Fatal(err)
		}
		refunded := f.paid(t, 3, "A-3")
		if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: refunded.OrderNo, Reason: "r", Actor: "api"}); err != nil {
			t.Fatal(err)
		}
		paid := f.paid(t, 4, "A-4")
		for _, c := range []struct {
			name string
			req  core.RefundRequest
			want error
		}{
			{"pending", core.RefundRequest{OrderNo: pending.OrderNo, Reason: "r", Actor: "api"}, core.ErrOrderNotPaid},
			{"cancelled", core.RefundRequest{OrderNo: cancelled.OrderNo, Reason: "r", Actor: "api"}, core.ErrOrderNotPaid},
			{"refunded", core.RefundRequest{OrderNo: refunded.OrderNo, Reason: "r", Actor: "api"}, core.ErrAlreadyRefunded},
			{"unknown", core.RefundRequest{OrderNo: "SF-nope", Reason: "r", Actor: "api"}, core.ErrOrderNotFound},
			{"no reason", core.RefundRequest{OrderNo: paid.OrderNo, Reason: "  ", Actor: "api"}, core.ErrInvalid},
			{"long reason", core.RefundRequest{OrderNo: paid.OrderNo, Reason: string(make([]byte, 501)), Actor: "api"}, core.ErrInvalid},
			{"no actor", core.RefundRequest{OrderNo: paid.OrderNo, Reason: "r"}, core.ErrInvalid},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := f.refunds.Refund(ctx, c.req)
				if !errors.Is(err, c.want) {
					t.Fatalf("err %v, want %v", err, c.want)
				}
			})
		}
		// Nothing was written by a refusal.
		for _, o := range []core.Order{pending, cancelled, paid} {
			if rs := f.refundRows(t, o.OrderNo); len(rs) != 0 {
				t.Errorf("order %s has refund rows %+v after refusals", o.OrderNo, rs)
			}
		}
		if rs := f.refundRows(t, refunded.OrderNo); len(rs) != 1 {
			t.Errorf("refunded order has %d refund rows, want 1", len(rs))
		}
		if got := f.status(t, paid.OrderNo); got != core.StatusPaid {
			t.Errorf("paid order is %v after refused refunds", got)
		}
		f.invariants(t)
	})
}

func TestRefundApproval(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		// Seats cost 5000+ cents: every order is above the threshold.
		f := newRefundFixture(t, st, 1000, core.Config{})
		clerk := func(o core.Order) core.RefundRequest {
			return core.RefundRequest{OrderNo: o.OrderNo, Reason: "changed plans", Actor: "staff:bo"}
		}

		// Request → approve.
		o := f.paid(t, 1, "A-1")
		out, err := f.refunds.Refund(ctx, clerk(o))
		if err != nil || !out.Pending || out.Refund.State != core.RefundRequested || out.Order.Status != core.StatusPaid {
			t.Fatalf("request: %+v %v", out, err)
		}
		if got := f.status(t, o.OrderNo); got != core.StatusPaid {
			t.Fatalf("status after a request %v, want paid", got)
		}
		f.wantSeats(t, core.SeatSold, "A-1")
		if _, err := f.refunds.Refund(ctx, clerk(o)); !errors.Is(err, core.ErrRefundPending) {
			t.Errorf("second request: %v, want refund_pending", err)
		}
		listed, err := st.DB.RefundsByState(ctx, core.RefundRequested, 100)
		if err != nil || len(listed) != 1 || listed[0].ID != out.Refund.ID {
			t.Errorf("requested list %+v %v", listed, err)
		}
		done, err := f.refunds.Approve(ctx, out.Refund.ID, "staff:olga", nil)
		if err != nil || done.Order.Status != core.StatusRefunded || done.Refund.ApprovedBy != "staff:olga" ||
			done.Refund.RequestedBy != "staff:bo" {
			t.Fatalf("approve: %+v %v", done, err)
		}
		f.wantSeats(t, core.SeatAvailable, "A-1")
		if _, err := f.refunds.Approve(ctx, out.Refund.ID, "staff:olga", nil); !errors.Is(err, core.ErrRefundDecided) {
			t.Errorf("second approval: %v, want refund_decided", err)
		}
		if _, err := f.refunds.Reject(ctx, out.Refund.ID, "staff:olga", "no", nil); !errors.Is(err, core.ErrRefundDecided) {
			t.Errorf("rejecting an approved request: %v, want refund_decided", err)
		}

		// Request → reject: the order stays paid, its seats sold.
		o2 := f.paid(t, 2, "A-2")
		out2, err := f.refunds.Refund(ctx, clerk(o2))
		if err != nil || !out2.Pending {
			t.Fatalf("request: %+v %v", out2, err)
		}
		rej, err := f.refunds.Reject(ctx, out2.Refund.ID, "staff:olga", "outside the policy", nil)
		if err != nil || rej.State != core.RefundRejected || rej.Note != "outside the policy" {
			t.Fatalf("reject: %+v %v", rej, err)
		}
		if got := f.status(t, o2.OrderNo); got != core.StatusPaid {
			t.Errorf("status after a rejection %v, want paid", got)
		}
		f.wantSeats(t, core.SeatSold, "A-2")

		// Request, then the threshold is lifted (a restart with a new
		// setting) and the order refunded directly: the request is
		// superseded.
		o3 := f.paid(t, 3, "A-3")
		out3, err := f.refunds.Refund(ctx, clerk(o3))
		if err != nil || !out3.Pending {
			t.Fatalf("request: %+v %v", out3, err)
		}
		oneStep, err := core.NewRefunds(f.eng, st.DB, 0)
		if err != nil {
			t.Fatal(err)
		}
		direct := clerk(o3)
		direct.Actor = "staff:olga"
		if out, err := oneStep.Refund(ctx, direct); err != nil || out.Pending {
			t.Fatalf("direct refund: %+v %v", out, err)
		}
		rows := f.refundRows(t, o3.OrderNo)
		if len(rows) != 2 || rows[0].State != core.RefundSuperseded || rows[1].State != core.RefundDone {
			t.Errorf("rows after a direct refund over a request: %+v", rows)
		}
		if _, err := f.refunds.Approve(ctx, out3.Refund.ID, "staff:olga", nil); !errors.Is(err, core.ErrRefundDecided) {
			t.Errorf("approving a superseded request: %v, want refund_decided", err)
		}

		// At or below the threshold the clerk refunds in one step.
		low := newRefundFixture(t, st, 1_000_000, core.Config{})
		o4 := low.paid(t, 4, "A-4")
		if out, err := low.refunds.Refund(ctx, clerk(o4)); err != nil || out.Pending || out.Order.Status != core.StatusRefunded {
			t.Fatalf("clerk refund below the threshold: %+v %v", out, err)
		}
		f.invariants(t)
	})
}

// failingReleaseSold fails ReleaseSold: a refund's after-commit step.
type failingReleaseSold struct{ core.SeatStore }

func (failingReleaseSold) ReleaseSold(context.Context, int64, string, []string) (int, error) {
	return 0, errors.New("injected: redis down")
}

// refundsReleaseFailing is refunds through an engine whose seat store's
// ReleaseSold fails, over the fixture's store, queue and clock.
func (f *refundFixture) refundsReleaseFailing(t *testing.T, st *stacktest.Stack) *core.Refunds {
	t.Helper()
	broken, err := core.NewEngine(core.Config{HoldTTL: f.eng.Config().HoldTTL, Delay: core.DefaultDelayPolicy()},
		core.Deps{Store: st.DB, Seats: failingReleaseSold{st.Seats}, Queue: st.Queue, Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	refunds, err := core.NewRefunds(broken, st.DB, 0)
	if err != nil {
		t.Fatal(err)
	}
	return refunds
}

// TestRefundReleaseFailure: the refund commits although its seat-store step
// fails; the seats stay sold to the refunded order until reconcile's
// refunded_sold check frees them (after the grace period), and then the
// invariants hold seat by seat.
func TestRefundReleaseFailure(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newRefundFixture(t, st, 0, core.Config{})
		o := f.paid(t, 1, "A-1", "A-2")

		refunds := f.refundsReleaseFailing(t, st)
		if _, err := refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "r", Actor: "api"}); err != nil {
			t.Fatalf("refund with a failing seat store: %v", err)
		}
		if got := f.status(t, o.OrderNo); got != core.StatusRefunded {
			t.Fatalf("status %v, want refunded (the DB commits first)", got)
		}
		f.wantSeats(t, core.SeatSold, "A-1", "A-2")
		if n := len(f.events(t, o.OrderNo, core.EventSeatReleaseFailed)); n != 1 {
			t.Errorf("%d seat_release_failed events, want 1", n)
		}
		if err := reconcile.CheckInvariants(ctx, st.DB, st.Seats, f.clock.Now()); err == nil {
			t.Fatal("invariants hold with seats sold to a refunded order")
		}

		run := f.refundedSoldCheck(t, st)
		if c := run(); c.Found != 0 {
			t.Errorf("refunded_sold within the grace period: %+v, want nothing touched", c)
		}
		f.wantSeats(t, core.SeatSold, "A-1", "A-2")
		f.clock.Advance(3 * time.Minute)
		if c := run(); c.Found != 1 || c.Fixed != 1 {
			t.Errorf("refunded_sold after the grace period: %+v, want 1 found, 1 fixed", c)
		}
		f.wantSeats(t, core.SeatAvailable, "A-1", "A-2")
		f.invariants(t)
		// The seats can be sold again, and the buyer's limit was given back.
		f.paid(t, 1, "A-1", "A-2", "A-3", "A-4", "A-5", "A-6")
		f.invariants(t)
	})
}

// refundedSoldCheck returns a manual reconcile run (2 min of grace) that
// gives the result of its refunded_sold check.
func (f *refundFixture) refundedSoldCheck(t *testing.T, st *stacktest.Stack) func() reconcile.CheckResult {
	t.Helper()
	rec, err := reconcile.New(reconcile.Deps{Engine: f.eng, DB: st.DB, Seats: st.Seats, Clock: f.clock},
		reconcile.Options{Owner: "test-" + stacktest.RandHex(3), Grace: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return func() reconcile.CheckResult {
		t.Helper()
		r, err := rec.RunOnce(context.Background(), reconcile.TriggerManual, false)
		if err != nil || !r.OK() {
			t.Fatalf("reconcile: %+v %v", r, err)
		}
		for _, c := range r.Checks {
			if c.Name == reconcile.CheckRefundedSold {
				return c
			}
		}
		t.Fatal("no refunded_sold check in the run")
		return reconcile.CheckResult{}
	}
}
