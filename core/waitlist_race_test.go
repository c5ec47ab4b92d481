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

// TestWaitlistOfferRaces fires an offer's payment, its timeout and a staff
// cancel at the same instant, round after round, with a second entry
// waiting behind: exactly one wins; a payment that loses is a discrepancy;
// an offer that ends unpaid hands its seat to the next entry, one that is
// paid keeps it sold; and the seats agree with the DB seat by seat.
func TestWaitlistOfferRaces(t *testing.T) {
	stacks := map[string]func(testing.TB) *stacktest.Stack{"embedded": stacktest.Embedded, "real": stacktest.Real}
	for name, mk := range stacks {
		t.Run(name, func(t *testing.T) {
			rounds := 50
			if name == "real" {
				rounds = 200
			}
			if testing.Short() {
				rounds = 20
			}
			f := newWaitFixture(t, mk(t), core.Config{HoldTTL: time.Minute}, nil)
			ctx := context.Background()
			wins := map[string]int{}
			for i := range rounds {
				seat := fmt.Sprintf("%s-%d", string(rune('A'+i%10)), 1+(i/10)%10)
				held := f.place(t, int64(1000+i), seat)
				first, next := f.join(t, int64(3000+2*i), 1, false), f.join(t, int64(3001+2*i), 1, false)
				f.expire(t, held)
				o := f.offered(t, first, seat)
				f.clock.Advance(f.ttl + time.Second) // expired: the timeout will try to end it
				var (
					wg     sync.WaitGroup
					start  = make(chan struct{})
					payRes core.PaymentResult
					errs   [3]error
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
					_, errs[2] = f.eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: o.OrderNo, Reason: core.ReasonStaff, Actor: "staff:olga"})
				}()
				close(start)
				wg.Wait()
				if errs[0] != nil || errs[1] != nil || errs[2] != nil {
					t.Fatalf("round %d: %v", i, errs)
				}
				discs := len(f.events(t, o.OrderNo, core.EventDiscrepancy))
				switch final := f.status(t, o.OrderNo); final {
				case core.StatusPaid:
					if payRes != core.PaymentApplied || discs != 0 {
						t.Fatalf("round %d: paid, but pay=%v discrepancies=%d", i, payRes, discs)
					}
					f.wantState(t, first, core.WaitAccepted)
					f.wantState(t, next, core.WaitWaiting)
					f.wantSeats(t, core.SeatSold, seat)
					wins["payment"]++
				case core.StatusCancelled:
					if payRes != core.PaymentDiscrepancy || discs != 1 {
						t.Fatalf("round %d: cancelled, but pay=%v discrepancies=%d", i, payRes, discs)
					}
					f.wantState(t, first, core.WaitExpired)
					f.offered(t, next, seat)
					o2, _, _ := f.eng.Order(ctx, o.OrderNo)
					wins[o2.CancelReason]++
				default:
					t.Fatalf("round %d: offer still %v", i, final)
				}

				for _, v := range []core.WaitEntryView{first, next} { // the next round's entries first in line
					if _, err := f.eng.WithdrawWaitEntry(ctx, v.Entry.Token, "user:test"); err != nil {
						t.Fatal(err)
					}
				}
				if f.status(t, o.OrderNo) == core.StatusPaid { // its seat back on sale for a later round
					if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "race over", Reference: "R-" + o.OrderNo, Actor: "staff:olga"}); err != nil {
						t.Fatal(err)
					}
				}
				if i%10 == 9 {
					f.settle(t)
				} else {
					f.endPending(t)
				}
				f.openList(t)
			}
			t.Logf("%s: %d rounds, winners %v", name, rounds, wins)
		})
	}
}
