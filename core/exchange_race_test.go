package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// TestExchangeRaces runs exchanges at the same instant as all that can meet
// them on one order: on a pending order its payment, its expiry and a whole
// refund; on a paid order a second exchange of another seat, a partial
// refund of the seat being exchanged, a whole refund and a second payment.
// Every round the money adds up (what the order keeps plus what was given
// back is what was paid, exchange differences included) and seat by seat,
// the old seats and the new, the seat store says what the DB says.
func TestExchangeRaces(t *testing.T) {
	type op func(f *exchangeFixture, o core.Order, to []string) error
	exchange := func(k int) op {
		return func(f *exchangeFixture, o core.Order, to []string) error {
			// Through the API: a dearer seat is vouched for, a cheaper one
			// refunded (no approval threshold).
			_, err := f.exchanges.Exchange(context.Background(), core.ExchangeRequest{OrderNo: o.OrderNo,
				From: []string{o.SeatIDs[k]}, To: []string{to[k]}, Reason: "race", Reference: "ch-race", Actor: "api:race"})
			return err
		}
	}
	partial := func(f *exchangeFixture, o core.Order, _ []string) error {
		_, err := f.refunds.Refund(context.Background(), core.RefundRequest{OrderNo: o.OrderNo, Reason: "race",
			Actor: "staff:a", SeatIDs: []string{o.SeatIDs[0]}})
		return err
	}
	whole := func(f *exchangeFixture, o core.Order, _ []string) error {
		_, err := f.refunds.Refund(context.Background(), core.RefundRequest{OrderNo: o.OrderNo, Reason: "race", Actor: "staff:b"})
		return err
	}
	payment := func(txn string) op {
		return func(f *exchangeFixture, o core.Order, _ []string) error {
			_, err := f.eng.HandlePayment(context.Background(), core.Payment{OrderNo: o.OrderNo, TxnID: txn + o.OrderNo,
				AmountCents: o.AmountCents})
			if errors.Is(err, core.ErrAmountMismatch) {
				return nil // the first money of a changed order: recorded as a discrepancy
			}
			return err
		}
	}
	expiry := func(f *exchangeFixture, o core.Order, _ []string) error {
		return f.eng.HandleTimeout(context.Background(), core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1})
	}
	races := []struct {
		name string
		paid bool
		ops  []op
	}{
		{"pending: payment, expiry, exchange, whole refund", false,
			[]op{payment("pay-"), expiry, exchange(0), whole}},
		{"paid: two exchanges, a partial and a whole refund, a second payment", true,
			[]op{exchange(0), exchange(1), partial, whole, payment("second-")}},
	}
	lost := []error{core.ErrOrderNotPaid, core.ErrAlreadyRefunded, core.ErrSeatsNotInOrder}
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		rounds := 200 // real races on MariaDB row locks
		if st.Name == "embedded" {
			rounds = 50 // one SQLite writer at a time
		}
		if testing.Short() {
			rounds = 20
		}
		f := newExchangeFixture(t, st, 0, core.Config{HoldTTL: time.Minute, PurchaseLimit: 10000})
		user := int64(9000)
		for _, race := range races {
			t.Run(race.name, func(t *testing.T) {
				outcomes := map[string]int{}
				for i := range rounds {
					user++
					// Seats of rows A-I (three prices), new seats in row J.
					var seats []string
					for k := range 3 {
						seats = append(seats, fmt.Sprintf("%s-%d", core.RowName(1+(i%3)*3+k), 1+i%10))
					}
					to := []string{fmt.Sprintf("J-%d", 1+i%10), fmt.Sprintf("J-%d", 1+(i+5)%10)}
					o := f.place(t, user, seats...)
					if race.paid {
						if res, err := f.pay(t, o, "T-"+o.OrderNo); err != nil || res != core.PaymentApplied {
							t.Fatalf("round %d: pay: %v %v", i, res, err)
						}
					} else {
						f.clock.Advance(2 * time.Minute) // expired: the timeout will try to cancel
					}
					errs := make([]error, len(race.ops))
					var wg sync.WaitGroup
					start := make(chan struct{})
					for k, op := range race.ops {
						wg.Go(func() {
							<-start
							errs[k] = op(f, o, to)
						})
					}
					close(start)
					wg.Wait()
					for k, err := range errs {
						if err != nil && !slices.ContainsFunc(lost, func(l error) bool { return errors.Is(err, l) }) {
							t.Fatalf("round %d: op %d: %v", i, k, err)
						}
					}
					got := f.order(t, o.OrderNo)
					outcomes[fmt.Sprintf("%v/%d seats/%d exchanged", got.Status, len(got.SeatIDs),
						len(f.events(t, o.OrderNo, core.EventSeatsExchanged)))]++
					f.checkExchangeRound(t, i, o, got, to)
					if got.Status == core.StatusPaid {
						if err := whole(f, got, nil); err != nil {
							t.Fatalf("round %d: closing refund: %v", i, err)
						}
						f.checkExchangeRound(t, i, o, f.order(t, o.OrderNo), to)
					}
				}
				t.Logf("%s, %d rounds: %v", st.Name, rounds, outcomes)
				f.invariants(t)
			})
		}
	})
}

// checkExchangeRound checks order placed (as placed, its new seats to) now
// that it stands as got: the money adds up, a paid order's amount is its
// seats' prices, and every seat it had or may have taken is sold exactly
// when the order holds it, in the seat store as in the DB.
func (f *exchangeFixture) checkExchangeRound(t *testing.T, round int, placed, got core.Order, to []string) {
	t.Helper()
	took, refunded := f.exchangeMoney(t, placed.OrderNo), f.refundMoney(t, placed.OrderNo)
	paid := placed.AmountCents + took
	var held []string
	switch got.Status {
	case core.StatusCancelled:
		if refunded != 0 || took != 0 {
			t.Fatalf("round %d: a cancelled order took %d and gave back %d cents", round, took, refunded)
		}
	case core.StatusPaid:
		held = got.SeatIDs
		var price int64
		for _, s := range held {
			price += planPrice(s)
		}
		if got.AmountCents+refunded != paid || got.AmountCents != price {
			t.Fatalf("round %d: paid order holds %v for %d cents (their price %d), gave back %d, of %d paid", round,
				held, got.AmountCents, price, refunded, paid)
		}
	case core.StatusRefunded:
		if refunded != paid {
			t.Fatalf("round %d: refunded order gave back %d cents of %d paid", round, refunded, paid)
		}
	default:
		t.Fatalf("round %d: order still %v", round, got.Status)
	}
	all := slices.Concat(placed.SeatIDs, to)
	states := f.seatStates(t, all...)
	for _, s := range all {
		want := core.SeatAvailable
		if slices.Contains(held, s) {
			want = core.SeatSold
		}
		if states[s] != want {
			t.Fatalf("round %d: seat %s is %v in the seat store, want %v (order %v, holds %v)", round, s, states[s],
				want, got.Status, held)
		}
	}
	f.checkSeatsMatchDB(t)
	if t.Failed() {
		t.FailNow()
	}
}
