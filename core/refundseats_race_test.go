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

// TestRefundSeatsRaces runs a partial refund at the same instant as all
// that can meet it on one order: the payment and the expiry of a pending
// order with a whole refund, or on a paid order a second partial refund
// of another seat, a whole refund and a second payment. Every round the
// money adds up (the order's amount plus its done refund rows is what was
// paid) and each seat of the order is exactly where the DB says, in the
// seat store too.
func TestRefundSeatsRaces(t *testing.T) {
	const seatsPerOrder = 3
	type op func(f *refundFixture, o core.Order) error
	partial := func(seat int) op {
		return func(f *refundFixture, o core.Order) error {
			_, err := f.refunds.Refund(context.Background(), core.RefundRequest{OrderNo: o.OrderNo, Reason: "race",
				Actor: "staff:a", SeatIDs: []string{o.SeatIDs[seat]}})
			return err
		}
	}
	whole := func(f *refundFixture, o core.Order) error {
		_, err := f.refunds.Refund(context.Background(), core.RefundRequest{OrderNo: o.OrderNo, Reason: "race", Actor: "staff:b"})
		return err
	}
	payment := func(txn string) op {
		return func(f *refundFixture, o core.Order) error {
			_, err := f.eng.HandlePayment(context.Background(), core.Payment{OrderNo: o.OrderNo, TxnID: txn + o.OrderNo,
				AmountCents: o.AmountCents})
			if errors.Is(err, core.ErrAmountMismatch) {
				return nil // the first money of a partially refunded order: recorded as a discrepancy
			}
			return err
		}
	}
	expiry := func(f *refundFixture, o core.Order) error {
		return f.eng.HandleTimeout(context.Background(), core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1})
	}
	races := []struct {
		name string
		paid bool // the order is paid before the race; else pending and expired
		ops  []op
	}{
		{"pending: payment, expiry, partial and whole refund", false,
			[]op{payment("pay-"), expiry, partial(0), whole}},
		{"paid: two partial refunds, a whole refund, a second payment", true,
			[]op{partial(0), partial(1), whole, payment("second-")}},
	}
	// What a losing refund may be told; anything else fails the round.
	lost := []error{core.ErrOrderNotPaid, core.ErrAlreadyRefunded, core.ErrSeatsNotInOrder}
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		rounds := 200 // real races on MariaDB row locks
		if st.Name == "embedded" {
			rounds = 50 // one SQLite writer at a time
		}
		if testing.Short() {
			rounds = 20
		}
		f := newRefundFixture(t, st, 0, core.Config{HoldTTL: time.Minute, PurchaseLimit: 10000})
		ctx := context.Background()
		user := int64(7000)
		for _, race := range races {
			t.Run(race.name, func(t *testing.T) {
				outcomes := map[string]int{}
				for i := range rounds {
					user++
					seats := make([]string, seatsPerOrder)
					for k := range seats {
						seats[k] = fmt.Sprintf("%s-%d", core.RowName(1+(i%3)*3+k), 1+i%10)
					}
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
							errs[k] = op(f, o)
						})
					}
					close(start)
					wg.Wait()
					for k, err := range errs {
						if err != nil && !slices.ContainsFunc(lost, func(l error) bool { return errors.Is(err, l) }) {
							t.Fatalf("round %d: op %d: %v", i, k, err)
						}
					}
					got, _, err := f.eng.Order(ctx, o.OrderNo)
					if err != nil {
						t.Fatal(err)
					}
					outcomes[fmt.Sprintf("%v/%d seats", got.Status, len(got.SeatIDs))]++
					f.checkRound(t, i, o, got)
					// The round ends with every seat back on sale for the next.
					if got.Status == core.StatusPaid {
						if err := whole(f, got); err != nil {
							t.Fatalf("round %d: closing refund: %v", i, err)
						}
						f.checkRound(t, i, o, f.order(t, o.OrderNo))
					}
				}
				t.Logf("%s, %d rounds: %v", st.Name, rounds, outcomes)
				f.invariants(t)
			})
		}
	})
}

// order reads an order as it stands.
func (f *refundFixture) order(t *testing.T, orderNo string) core.Order {
	t.Helper()
	o, _, err := f.eng.Order(context.Background(), orderNo)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// checkRound checks order placed (as placed) now that it stands as got:
// the money adds up, and seat by seat the seat store says what the DB says.
func (f *refundFixture) checkRound(t *testing.T, round int, placed, got core.Order) {
	t.Helper()
	refunded := f.refundMoney(t, placed.OrderNo)
	var held []string
	switch got.Status {
	case core.StatusCancelled:
		if refunded != 0 {
			t.Fatalf("round %d: a cancelled order has %d cents refunded", round, refunded)
		}
	case core.StatusPaid:
		held = got.SeatIDs
		if got.AmountCents+refunded != placed.AmountCents {
			t.Fatalf("round %d: paid order keeps %d cents and gave back %d, of %d paid", round, got.AmountCents,
				refunded, placed.AmountCents)
		}
	case core.StatusRefunded:
		if refunded != placed.AmountCents {
			t.Fatalf("round %d: refunded order gave back %d cents of %d paid", round, refunded, placed.AmountCents)
		}
		if n := len(f.events(t, placed.OrderNo, core.EventRefunded)); n != 1 {
			t.Fatalf("round %d: %d refunded events, want 1", round, n)
		}
	default:
		t.Fatalf("round %d: order still %v", round, got.Status)
	}
	states := f.seatStates(t, placed.SeatIDs...)
	for _, s := range placed.SeatIDs {
		want := core.SeatAvailable
		if slices.Contains(held, s) {
			want = core.SeatSold
		}
		if states[s] != want {
			t.Fatalf("round %d: seat %s is %v in the seat store, want %v (order %v, keeps %v)", round, s, states[s],
				want, got.Status, held)
		}
	}
	f.checkSeatsMatchDB(t)
	if t.Failed() {
		t.FailNow()
	}
}
