package core_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
)

// The demo plan's prices (store.DemoSeats, base 5000): rows A-D 7500,
// E-G 6250, H-J 5000.
const (
	priceA = 7500
	priceE = 6250
	priceH = 5000
)

// refundMoney returns the cents of the order's done refund rows.
func (f *refundFixture) refundMoney(t *testing.T, orderNo string) int64 {
	t.Helper()
	var n int64
	for _, r := range f.refundRows(t, orderNo) {
		if r.State == core.RefundDone {
			n += r.AmountCents
		}
	}
	return n
}

func TestRefundSeats(t *testing.T) {
	type step struct {
		seats   []string // none: the whole order
		err     error    // the refusal wanted
		pending bool     // a request only
		approve bool     // another person approves the last request
		cents   int64    // the refund row's amount, when it succeeds
	}
	cases := []struct {
		name      string
		threshold int64
		seats     []string
		steps     []step
		status    core.OrderStatus
		kept      []string
	}{
		{"one seat of three", 0, []string{"A-1", "E-1", "H-1"},
			[]step{{seats: []string{"E-1"}, cents: priceE}},
			core.StatusPaid, []string{"A-1", "H-1"}},
		{"two seats, named out of order", 0, []string{"A-2", "E-2", "H-2"},
			[]step{{seats: []string{"H-2", "A-2"}, cents: priceA + priceH}},
			core.StatusPaid, []string{"E-2"}},
		{"a repeat refunds nothing", 0, []string{"A-3", "H-3"},
			[]step{{seats: []string{"H-3"}, cents: priceH}, {seats: []string{"H-3"}, err: core.ErrSeatsNotInOrder}},
			core.StatusPaid, []string{"A-3"}},
		{"a seat of another order", 0, []string{"A-4", "H-4"},
			[]step{{seats: []string{"H-4", "J-9"}, err: core.ErrSeatsNotInOrder}},
			core.StatusPaid, []string{"A-4", "H-4"}},
		{"a seat named twice", 0, []string{"A-5", "H-5"},
			[]step{{seats: []string{"H-5", "H-5"}, err: core.ErrInvalid}},
			core.StatusPaid, []string{"A-5", "H-5"}},
		{"seat by seat to the end: the last one ends the order", 0, []string{"A-6", "E-6", "H-6"},
			[]step{{seats: []string{"A-6"}, cents: priceA}, {seats: []string{"E-6"}, cents: priceE},
				{seats: []string{"H-6"}, cents: priceH}, {seats: []string{"H-6"}, err: core.ErrAlreadyRefunded}},
			core.StatusRefunded, nil},
		{"every seat at once is the whole refund", 0, []string{"A-7", "H-7"},
			[]step{{seats: []string{"A-7", "H-7"}, cents: priceA + priceH}},
			core.StatusRefunded, nil},
		{"a whole refund after a partial one refunds the rest", 0, []string{"A-8", "E-8", "H-8"},
			[]step{{seats: []string{"E-8"}, cents: priceE}, {cents: priceA + priceH}},
			core.StatusRefunded, nil},
		{"the threshold counts the partial amount: below it, one step", priceA, []string{"A-9", "E-9", "H-9"},
			[]step{{seats: []string{"H-9"}, cents: priceH}},
			core.StatusPaid, []string{"A-9", "E-9"}},
		{"above it, a request; the approval refunds its seats only", priceH, []string{"A-10", "E-10", "H-10"},
			[]step{{seats: []string{"A-10"}, pending: true, cents: priceA},
				{seats: []string{"H-10"}, err: core.ErrRefundPending}, {approve: true, cents: priceA}},
			core.StatusPaid, []string{"E-10", "H-10"}},
	}
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		// One show for every case (each its own seats), as the invariant
		// check reads every show of the stack.
		shared := newRefundFixture(t, st, 0, core.Config{PurchaseLimit: 10})
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				refunds, err := core.NewRefunds(shared.eng, st.DB, c.threshold)
				if err != nil {
					t.Fatal(err)
				}
				f := &refundFixture{fixture: shared.fixture, refunds: refunds}
				user := int64(100 + i)
				o := f.paid(t, user, c.seats...)
				var (
					refunded int64
					request  int64
				)
				for j, s := range c.steps {
					if s.approve {
						out, err := f.refunds.Approve(ctx, request, "staff:ops", nil)
						if err != nil || out.Refund.AmountCents != s.cents {
							t.Fatalf("step %d: approve: %+v %v", j, out, err)
						}
						refunded += s.cents
						continue
					}
					out, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "partial",
						Actor: "staff:clerk", SeatIDs: s.seats})
					if s.err != nil {
						if !errors.Is(err, s.err) {
							t.Fatalf("step %d: %v, want %v", j, err, s.err)
						}
						continue
					}
					if err != nil || out.Pending != s.pending || out.Refund.AmountCents != s.cents {
						t.Fatalf("step %d: %+v %v, want pending=%v and %d cents", j, out, err, s.pending, s.cents)
					}
					if s.pending {
						request = out.Refund.ID
						continue
					}
					refunded += s.cents
				}
				got, _, err := f.eng.Order(ctx, o.OrderNo)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != c.status {
					t.Errorf("status %v, want %v", got.Status, c.status)
				}
				if c.status == core.StatusPaid {
					// The order keeps the seats left and their money, to the cent.
					if !slices.Equal(got.SeatIDs, c.kept) || got.AmountCents != o.AmountCents-refunded {
						t.Errorf("order keeps %v for %d cents, want %v for %d", got.SeatIDs, got.AmountCents,
							c.kept, o.AmountCents-refunded)
					}
					f.wantSeats(t, core.SeatSold, c.kept...)
					f.wantCounter(t, user, len(c.kept))
				}
				if m := f.refundMoney(t, o.OrderNo); m != refunded {
					t.Errorf("refund rows give back %d cents, want %d", m, refunded)
				}
				var free []string
				for _, s := range c.seats {
					if !slices.Contains(c.kept, s) {
						free = append(free, s)
					}
				}
				f.wantSeats(t, core.SeatAvailable, free...)
				f.checkSeatsMatchDB(t)
				f.invariants(t)
				// A refunded seat is on sale again.
				if len(free) > 0 {
					f.paid(t, user+1000, free[0])
				}
			})
		}
	})
}

// TestRefundSeatsReleaseFailure: a partial refund commits although its
// seat-store step fails; the seat stays sold to the order (still paid for
// its other seats) until reconcile's refunded_sold check frees it after
// the grace period, leaving the seats kept sold.
func TestRefundSeatsReleaseFailure(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newRefundFixture(t, st, 0, core.Config{})
		o := f.paid(t, 1, "A-1", "A-2")
		refunds := f.refundsReleaseFailing(t, st)
		if _, err := refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "r", Actor: "api",
			SeatIDs: []string{"A-1"}}); err != nil {
			t.Fatalf("partial refund with a failing seat store: %v", err)
		}
		f.wantSeats(t, core.SeatSold, "A-1", "A-2")
		if n := len(f.events(t, o.OrderNo, core.EventSeatReleaseFailed)); n != 1 {
			t.Errorf("%d seat_release_failed events, want 1", n)
		}
		if err := reconcile.CheckInvariants(ctx, st.DB, st.Seats, f.clock.Now()); err == nil {
			t.Fatal("invariants hold with a refunded seat still sold")
		}
		run := f.refundedSoldCheck(t, st)
		if c := run(); c.Found != 0 {
			t.Errorf("refunded_sold within the grace period: %+v, want nothing touched", c)
		}
		f.clock.Advance(3 * time.Minute)
		if c := run(); c.Found != 1 || c.Fixed != 1 {
			t.Errorf("refunded_sold after the grace period: %+v, want 1 found, 1 fixed", c)
		}
		f.wantSeats(t, core.SeatAvailable, "A-1")
		f.wantSeats(t, core.SeatSold, "A-2")
		f.invariants(t)
	})
}
