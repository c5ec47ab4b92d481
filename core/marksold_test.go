package core_test

import (
	"context"
	"testing"

	"seatflow/core"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
)

// sellHook runs before once, at the start of the first MarkSold: between
// a payment's commit and its seat store step.
type sellHook struct {
	seats.Interface
	before func()
}

func (h *sellHook) MarkSold(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) error {
	if f := h.before; f != nil {
		h.before = nil
		f()
	}
	return h.Interface.MarkSold(ctx, showID, userID, orderNo, seatIDs)
}

// TestRefundBetweenPaymentAndMarkSold: a partial refund that commits and
// releases its seat after the payment committed and before the payment
// marked the seats sold leaves that seat free in the seat store as in the
// DB, and the other sold.
func TestRefundBetweenPaymentAndMarkSold(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		hook := &sellHook{Interface: st.Seats}
		st.Seats = hook
		f := newRefundFixture(t, st, 0, core.Config{})
		o := f.place(t, 1, "A-1", "A-2")
		hook.before = func() {
			if _, err := f.refunds.Refund(context.Background(), core.RefundRequest{OrderNo: o.OrderNo, Reason: "race",
				Actor: "staff:a", SeatIDs: []string{"A-1"}}); err != nil {
				t.Errorf("partial refund between the payment and its seat store step: %v", err)
			}
		}
		if res, err := f.pay(t, o, "T-"+o.OrderNo); err != nil || res != core.PaymentApplied {
			t.Fatalf("pay: %v %v", res, err)
		}
		if hook.before != nil {
			t.Fatal("the refund never ran between the payment and its seat store step")
		}
		got := f.seatStates(t, "A-1", "A-2")
		if got["A-1"] != core.SeatAvailable || got["A-2"] != core.SeatSold {
			t.Errorf("seat store after the refund of A-1 met the payment: %v, want A-1 available, A-2 sold", got)
		}
	})
}
