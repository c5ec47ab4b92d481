package core_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// TestThreeWayRace fires the payment callback, the timeout and the customer
// cancel at the same instant for one order, many times: exactly one wins each
// time, a losing payment becomes a discrepancy, and the seats agree with the DB.
func TestThreeWayRace(t *testing.T) {
	stacks := map[string]func(testing.TB) *stacktest.Stack{"embedded": stacktest.Embedded, "real": stacktest.Real}
	for name, mk := range stacks {
		t.Run(name, func(t *testing.T) {
			rounds := 200
			if testing.Short() {
				rounds = 20
			}
			st := mk(t)
			f := newFixture(t, st, core.Config{HoldTTL: time.Minute, PurchaseLimit: 1000})
			ctx := context.Background()
			wins := map[string]int{}
			for i := range rounds {
				seat := fmt.Sprintf("%s-%d", string(rune('A'+i%10)), 1+(i/10)%10)
				o := f.place(t, int64(1000+i), seat)
				f.clock.Advance(2 * time.Minute) // expired: the timeout will try to cancel

				var (
					wg       sync.WaitGroup
					start    = make(chan struct{})
					payRes   core.PaymentResult
					errs     [3]error
					cancelOK core.Order
				)
				wg.Add(3)
				go func() {
					defer wg.Done()
					<-start
					payRes, errs[0] = f.eng.HandlePayment(ctx, core.Payment{OrderNo: o.OrderNo, TxnID: "race-" + o.OrderNo, AmountCents: o.AmountCents})
				}()
				go func() {
					defer wg.Done()
					<-start
					errs[1] = f.eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1})
				}()
				go func() {
					defer wg.Done()
					<-start
					cancelOK, errs[2] = f.eng.Cancel(ctx, o.OrderNo, o.UserID)
				}()
				close(start)
				wg.Wait()
				if errs[0] != nil || errs[1] != nil {
					t.Fatalf("round %d: pay err %v, timeout err %v", i, errs[0], errs[1])
				}
				final := f.status(t, o.OrderNo)
				cancels := len(f.events(t, o.OrderNo, core.EventCancelled))
				discs := len(f.events(t, o.OrderNo, core.EventDiscrepancy))
				switch final {
				case core.StatusPaid:
					if payRes != core.PaymentApplied || cancels != 0 || discs != 0 || errs[2] == nil {
						t.Fatalf("round %d: paid, but pay=%v cancels=%d discrepancies=%d cancelErr=%v", i, payRes, cancels, discs, errs[2])
					}
					f.wantSeats(t, core.SeatSold, seat)
					wins["payment"]++
				case core.StatusCancelled:
					if payRes != core.PaymentDiscrepancy || cancels != 1 || discs != 1 || errs[2] != nil || cancelOK.Status != core.StatusCancelled {
						t.Fatalf("round %d: cancelled, but pay=%v cancels=%d discrepancies=%d cancel=%v/%v", i, payRes, cancels, discs, cancelOK.Status, errs[2])
					}
					f.wantSeats(t, core.SeatAvailable, seat)
					o2, _, _ := f.eng.Order(ctx, o.OrderNo)
					wins[o2.CancelReason]++
				default:
					t.Fatalf("round %d: order still %v", i, final)
				}
				// Every attempt left its mark: the winner's event, and an
				// end_attempt or a discrepancy for each of the two losers.
				winners, losers := len(f.events(t, o.OrderNo, core.EventPaid))+cancels,
					len(f.events(t, o.OrderNo, core.EventEndAttempt))+discs
				if winners != 1 || losers != 2 {
					t.Fatalf("round %d: %d winner and %d loser events, want 1 and 2", i, winners, losers)
				}
				if i%10 == 9 {
					f.checkSeatsMatchDB(t)
				}
				f.freeSeat(t, o)
			}
			t.Logf("%s: %d rounds, winners %v", name, rounds, wins)
		})
	}
}

// freeSeat lets the race run many rounds on one small show: it deletes the
// order's seat rows and rebuilds the show's seat state from the DB.
func (f *fixture) freeSeat(t *testing.T, o core.Order) {
	t.Helper()
	ctx := context.Background()
	if _, err := f.st.DB.X().ExecContext(ctx, f.st.DB.X().Rebind("DELETE FROM order_seat WHERE order_no = ?"), o.OrderNo); err != nil {
		t.Fatal(err)
	}
	if err := f.eng.RebuildSeats(ctx, f.show.ID); err != nil {
		t.Fatal(err)
	}
}
