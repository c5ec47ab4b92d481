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

// TestRefundBetweenPaymentAndMarkSold: a refund that commits and releases
// its seats after the payment committed and before the payment marked the
// seats sold leaves those seats free in the seat store as in the DB, and
// the others sold.
func TestRefundBetweenPaymentAndMarkSold(t *testing.T) {
	cases := []struct {
		name     string
		refund   []string // the seats refunded; none: the whole order
		wantSold map[string]bool
	}{
		{"partial refund", []string{"A-1"}, map[string]bool{"A-1": false, "A-2": true}},
		{"whole refund", nil, map[string]bool{"A-1": false, "A-2": false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
				hook := &sellHook{Interface: st.Seats}
				st.Seats = hook
				f := newRefundFixture(t, st, 0, core.Config{})
				o := f.place(t, 1, "A-1", "A-2")
				hook.before = func() {
					if _, err := f.refunds.Refund(context.Background(), core.RefundRequest{OrderNo: o.OrderNo,
						Reason: "race", Actor: "staff:a", SeatIDs: c.refund}); err != nil {
						t.Errorf("refund between the payment and its seat store step: %v", err)
					}
				}
				if res, err := f.pay(t, o, "T-"+o.OrderNo); err != nil || res != core.PaymentApplied {
					t.Fatalf("pay: %v %v", res, err)
				}
				if hook.before != nil {
					t.Fatal("the refund never ran between the payment and its seat store step")
				}
				got := f.seatStates(t, "A-1", "A-2")
				for seat, sold := range c.wantSold {
					if (got[seat] == core.SeatSold) != sold {
						t.Fatalf("seat store after the refund met the payment: %v, want sold %v", got, c.wantSold)
					}
				}
			})
		})
	}
}
