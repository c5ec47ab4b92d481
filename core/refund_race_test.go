package core_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// TestRefundRaces runs a refund at the same instant as each thing that can
// meet it on a paid order, many rounds each: a second payment callback, a
// second refund, the customer's cancel. Each round has exactly one refund,
// the losers are refused or recorded (never silently lost), and the seats
// agree with the database seat by seat.
func TestRefundRaces(t *testing.T) {
	type result struct {
		refund  error
		other   error
		payment core.PaymentResult // when other is a payment
	}
	races := []struct {
		name  string
		other func(f *refundFixture, o core.Order) (core.PaymentResult, error)
		check func(t *testing.T, f *refundFixture, o core.Order, r result)
	}{
		{"second payment", func(f *refundFixture, o core.Order) (core.PaymentResult, error) {
			return f.eng.HandlePayment(context.Background(), core.Payment{OrderNo: o.OrderNo, TxnID: "second-" + o.OrderNo, AmountCents: o.AmountCents})
		}, func(t *testing.T, f *refundFixture, o core.Order, r result) {
			// The order is paid either way when the payment lands, so the
			// refund wins every time; the payment is money to give back,
			// recorded as second_payment or paid_after_refund.
			if r.refund != nil || r.other != nil || r.payment != core.PaymentDiscrepancy {
				t.Fatalf("refund %v, payment %v %v", r.refund, r.payment, r.other)
			}
			ds := f.events(t, o.OrderNo, core.EventDiscrepancy)
			if len(ds) != 1 || (ds[0].Detail["kind"] != core.DiscrepancySecondPayment && ds[0].Detail["kind"] != core.DiscrepancyPaidAfterRefund) {
				t.Fatalf("discrepancy events %+v", ds)
			}
		}},
		{"second refund", func(f *refundFixture, o core.Order) (core.PaymentResult, error) {
			_, err := f.refunds.Refund(context.Background(), core.RefundRequest{OrderNo: o.OrderNo, Reason: "twice", Actor: "staff:b"})
			return "", err
		}, func(t *testing.T, f *refundFixture, o core.Order, r result) {
			if (r.refund == nil) == (r.other == nil) {
				t.Fatalf("two refunds: %v and %v, want exactly one winner", r.refund, r.other)
			}
			loser := r.refund
			if loser == nil {
				loser = r.other
			}
			if !errors.Is(loser, core.ErrAlreadyRefunded) {
				t.Fatalf("losing refund: %v, want already_refunded", loser)
			}
		}},
		{"customer cancel", func(f *refundFixture, o core.Order) (core.PaymentResult, error) {
			_, err := f.eng.Cancel(context.Background(), o.OrderNo, o.UserID)
			return "", err
		}, func(t *testing.T, f *refundFixture, o core.Order, r result) {
			if r.refund != nil || !errors.Is(r.other, core.ErrOrderNotPending) {
				t.Fatalf("refund %v, cancel %v: want the refund, and order_not_pending for the cancel", r.refund, r.other)
			}
			if n := len(f.events(t, o.OrderNo, core.EventCancelled)); n != 0 {
				t.Fatalf("%d cancelled events on a paid order", n)
			}
		}},
	}
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		// 200 rounds where the races are real (MariaDB row locks); SQLite
		// runs one writer at a time, so fewer rounds cover it.
		rounds := 200
		if st.Name == "embedded" {
			rounds = 50
		}
		if testing.Short() {
			rounds = 20
		}
		f := newRefundFixture(t, st, 0, core.Config{HoldTTL: time.Minute, PurchaseLimit: 10000})
		user := int64(5000)
		for _, race := range races {
			t.Run(race.name, func(t *testing.T) {
				for i := range rounds {
					user++
					seat := fmt.Sprintf("%s-%d", string(rune('A'+i%10)), 1+(i/10)%10)
					o := f.paid(t, user, seat)
					var (
						wg    sync.WaitGroup
						start = make(chan struct{})
						r     result
					)
					wg.Add(2)
					go func() {
						defer wg.Done()
						<-start
						_, r.refund = f.refunds.Refund(context.Background(), core.RefundRequest{
							OrderNo: o.OrderNo, Reason: "race", Actor: "staff:a"})
					}()
					go func() {
						defer wg.Done()
						<-start
						r.payment, r.other = race.other(f, o)
					}()
					close(start)
					wg.Wait()
					race.check(t, f, o, r)

					// One refund, whoever ran it: one row, one event, the
					// order refunded, its seat back on sale.
					if got := f.status(t, o.OrderNo); got != core.StatusRefunded {
						t.Fatalf("round %d: status %v, want refunded", i, got)
					}
					if rows := f.refundRows(t, o.OrderNo); len(rows) != 1 || rows[0].State != core.RefundDone {
						t.Fatalf("round %d: refund rows %+v, want one done", i, rows)
					}
					if n := len(f.events(t, o.OrderNo, core.EventRefunded)); n != 1 {
						t.Fatalf("round %d: %d refunded events, want 1", i, n)
					}
					f.wantSeats(t, core.SeatAvailable, seat)
					if i%20 == 19 {
						f.checkSeatsMatchDB(t)
						f.invariants(t)
					}
				}
			})
		}
	})
}
