package core_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// shiftClosesAfter answers the clerk's shift open for its first n reads,
// then closed: the shift closes between a quick sale's check and its
// payment.
type shiftClosesAfter struct {
	core.CounterStore
	n int
}

func (s *shiftClosesAfter) OpenShiftOf(ctx context.Context, clerk string) (core.ShiftRef, bool, error) {
	if s.n == 0 {
		return core.ShiftRef{}, false, nil
	}
	s.n--
	return s.CounterStore.OpenShiftOf(ctx, clerk)
}

// TestQuickSale: N seats by the best-available rules held and paid in one
// step; a refusal before the hold holds nothing, and a hold whose payment
// fails is cancelled at once, its seats back on sale.
func TestQuickSale(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st, core.Config{})
		ctx := context.Background()
		openShift(t, st, "clerk1")
		var all []string
		for r := range 10 {
			for n := 1; n <= 10; n++ {
				all = append(all, fmt.Sprintf("%c-%d", 'A'+r, n))
			}
		}
		taken := func() int {
			n := 0
			for _, s := range f.seatStates(t, all...) {
				if s != core.SeatAvailable {
					n++
				}
			}
			return n
		}
		for _, tc := range []struct {
			name  string
			sale  core.QuickSale
			store func(core.CounterStore) core.CounterStore
			err   error // nil: sold
			kind  core.Kind
		}{
			{name: "three together in cash", sale: core.QuickSale{Count: 3, Together: true, Tender: core.TenderCash, Clerk: "clerk1"}},
			{name: "one by card", sale: core.QuickSale{Count: 1, Tender: core.TenderCard, Reference: "slip 7", Clerk: "clerk1"}},
			{name: "no open shift", sale: core.QuickSale{Count: 2, Tender: core.TenderCash, Clerk: "clerk2"}, err: core.ErrNoOpenShift},
			{name: "unknown tender", sale: core.QuickSale{Count: 2, Tender: "cheque", Clerk: "clerk1"}, kind: core.KindInvalid},
			{name: "no seats asked", sale: core.QuickSale{Count: 0, Tender: core.TenderCash, Clerk: "clerk1"}, kind: core.KindInvalid},
			{name: "the shift closes before the payment", sale: core.QuickSale{Count: 2, Tender: core.TenderCash, Clerk: "clerk1"},
				store: func(s core.CounterStore) core.CounterStore { return &shiftClosesAfter{CounterStore: s, n: 1} }, err: core.ErrNoOpenShift},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var store core.CounterStore = st.DB
				if tc.store != nil {
					store = tc.store(store)
				}
				before := taken()
				tc.sale.ShowID = f.show.ID
				o, res, err := core.NewCounter(f.eng, store).QuickSale(ctx, tc.sale)
				switch {
				case tc.err != nil || tc.kind != 0:
					if tc.err != nil && !errors.Is(err, tc.err) || tc.kind != 0 && core.ErrorKind(err) != tc.kind {
						t.Fatalf("got %v, want %v (kind %v)", err, tc.err, tc.kind)
					}
					if got := taken(); got != before {
						t.Fatalf("%d seats taken after the refusal, %d before: it must leave none held", got, before)
					}
					if o.OrderNo != "" {
						if after, err := st.DB.Order(ctx, o.OrderNo); err != nil || after.Status != core.StatusCancelled {
							t.Fatalf("the unpaid hold %s: %v %v, want cancelled", o.OrderNo, after.Status, err)
						}
					}
					return
				case err != nil || res != core.PaymentApplied || o.Status != core.StatusPaid:
					t.Fatalf("got %+v %v %v, want a paid order", o, res, err)
				}
				if len(o.SeatIDs) != tc.sale.Count || taken() != before+tc.sale.Count {
					t.Fatalf("order seats %v, %d taken (was %d): want %d more", o.SeatIDs, taken(), before, tc.sale.Count)
				}
				f.wantSeats(t, core.SeatSold, o.SeatIDs...)
				if tc.sale.Together && !adjacent(o.SeatIDs) {
					t.Errorf("seats %v are not together", o.SeatIDs)
				}
				pays, err := st.DB.OrderPayments(ctx, o.OrderNo)
				if err != nil || len(pays) != 1 || pays[0].Tender != tc.sale.Tender || pays[0].ShiftID == 0 || pays[0].Actor != "staff:clerk1" {
					t.Fatalf("payments %+v (%v): want one %s payment by clerk1 in the shift", pays, err, tc.sale.Tender)
				}
			})
		}
	})
}

// adjacent reports whether seats are consecutive numbers of one row
// ("A-3", "A-4", …), in any order.
func adjacent(seats []string) bool {
	row, lo, hi := "", 1<<30, -1
	for _, s := range seats {
		r, n, ok := strings.Cut(s, "-")
		k, err := strconv.Atoi(n)
		if !ok || err != nil || (row != "" && r != row) {
			return false
		}
		row, lo, hi = r, min(lo, k), max(hi, k)
	}
	return hi-lo+1 == len(seats)
}
