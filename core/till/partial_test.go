package till_test

import (
	"context"
	"errors"
	"testing"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/till"
)

// A partial cash refund at the counter is money out of the refunding
// clerk's open shift, the seats' money only; with no shift open it is
// refused and writes nothing.
func TestPartialCashRefundShift(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		r := newRig(t, st, 2, 2)
		if _, err := r.till.Open(ctx, till.OpenRequest{Clerk: "ana", Currency: r.show.Currency, FloatCents: 10000}); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name, clerk string
			err         error
		}{
			{"no shift open", "ben", core.ErrNoOpenShift},
			{"the clerk's open shift", "ana", nil},
		}
		o, err := r.counter.Hold(ctx, core.CounterHold{ShowID: r.show.ID, SeatIDs: []string{"A-1", "B-1"}})
		if err != nil {
			t.Fatal(err)
		}
		if res, _, err := r.counter.TakePayment(ctx, core.CounterPayment{OrderNo: o.OrderNo, Tender: core.TenderCash, Clerk: "ana"}); err != nil || res != core.PaymentApplied {
			t.Fatalf("sale: %v %v", res, err)
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				out, err := r.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "one seat",
					Actor: "staff:" + c.clerk, SeatIDs: []string{"B-1"}})
				if c.err != nil {
					if !errors.Is(err, c.err) {
						t.Fatalf("refund: %v, want %v", err, c.err)
					}
					if rs, _ := st.DB.OrderRefunds(ctx, o.OrderNo); len(rs) != 0 {
						t.Fatalf("a refused refund wrote %+v", rs)
					}
					return
				}
				shift, _, ok, serr := r.till.Current(ctx, c.clerk)
				if serr != nil || !ok {
					t.Fatalf("open shift of %s: %v %v", c.clerk, ok, serr)
				}
				if err != nil || out.Refund.ShiftID != shift.ID || out.Refund.Tender != core.TenderCash {
					t.Fatalf("refund %+v %v, want cash from shift %d", out.Refund, err, shift.ID)
				}
				// B-row seats cost less than A-row ones: the refund is B-1's price.
				closed, _, err := r.till.Close(ctx, till.CloseRequest{Clerk: c.clerk, CountedCents: 10000 + out.Order.AmountCents})
				if err != nil || closed.ExpectedCents != 10000+o.AmountCents-out.Refund.AmountCents || closed.DifferenceCents != 0 ||
					out.Refund.AmountCents >= out.Order.AmountCents {
					t.Fatalf("close: %+v %v after a refund of %d of %d", closed, err, out.Refund.AmountCents, o.AmountCents)
				}
			})
		}
	})
}
