package till_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/store"
	"seatflow/core/till"
)

const tolerance = 100 // cents a count may miss by without a case

// rig is a counter, a refund desk and a till over one stack.
type rig struct {
	st      *stacktest.Stack
	eng     *core.Engine
	counter *core.Counter
	refunds *core.Refunds
	till    *till.Till
	show    core.Show
	seats   []string // the show's seats not sold or held
}

func newRig(t testing.TB, st *stacktest.Stack, rows, cols int) *rig {
	t.Helper()
	eng := st.Engine(t, core.Config{PurchaseLimit: 6}, stacktest.NewClock(time.Now()))
	refunds, err := core.NewRefunds(eng, st.DB, 0)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := till.New(st.DB, core.SystemClock{}, tolerance, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{st: st, eng: eng, counter: core.NewCounter(eng, st.DB), refunds: refunds, till: tl, show: st.NewShow(t, rows, cols)}
	for row := range rows {
		for col := range cols {
			r.seats = append(r.seats, fmt.Sprintf("%c-%d", 'A'+row, col+1))
		}
	}
	return r
}

// hold holds the next free seat at the counter.
func (r *rig) hold(t testing.TB) core.Order {
	t.Helper()
	seat := r.seats[0]
	r.seats = r.seats[1:]
	o, err := r.counter.Hold(context.Background(), core.CounterHold{ShowID: r.show.ID, SeatIDs: []string{seat}})
	if err != nil {
		t.Fatalf("hold %s: %v", seat, err)
	}
	return o
}

// shiftModel is what the test saw happen to one shift's cash.
type shiftModel struct {
	clerk       string
	float, cash int64 // cash: in less out
	sales       int
}

// paidOrder is a counter sale the test may refund.
type paidOrder struct {
	o      core.Order
	tender core.Tender
}

// runRandom drives n random counter operations across 5 clerks: opening
// and closing shifts (with right and wrong counts), sales in cash and card
// with and without an open shift, refunds by the seller or another clerk.
// Every closed shift's expected cash must equal its float plus the cash
// the test saw move, and the ledger rows summed one by one.
func runRandom(t testing.TB, r *rig, seed uint64, n int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	clerks := []string{"ana", "ben", "chen", "dora", "eli"}
	open := map[string]int64{} // clerk → open shift id
	models := map[int64]*shiftModel{}
	var paid []paidOrder
	closed, cases, refused := 0, 0, 0
	closeShift := func(clerk string) {
		id := open[clerk]
		m := models[id]
		want := m.float + m.cash
		delta := []int64{0, 0, tolerance, -tolerance, tolerance + 1, -tolerance - 1, rng.Int64N(10000) - 5000}[rng.IntN(7)]
		s, _, err := r.till.Close(ctx, till.CloseRequest{Clerk: clerk, CountedCents: max(0, want+delta)})
		if err != nil {
			t.Fatalf("seed %d: close %s: %v", seed, clerk, err)
		}
		delta = max(0, want+delta) - want
		if s.ID != id || s.ExpectedCents != want || s.DifferenceCents != delta {
			t.Fatalf("seed %d: shift %d of %s closed as %+v, want id %d expected %d difference %d",
				seed, s.ID, clerk, s, id, want, delta)
		}
		if (s.CaseID != 0) != (delta > tolerance || delta < -tolerance) {
			t.Fatalf("seed %d: shift %d difference %d (tolerance %d) opened case %d", seed, id, delta, tolerance, s.CaseID)
		}
		if s.CaseID != 0 {
			c, err := r.st.DB.DiscrepancyCase(ctx, s.CaseID)
			if err != nil || c.Kind != till.DiscrepancyTillDifference || c.TxnID != till.CaseTxnID(id) ||
				c.AmountCents != max(delta, -delta) || c.State != core.CaseOpen {
				t.Fatalf("seed %d: case %d of shift %d: %+v %v", seed, s.CaseID, id, c, err)
			}
			cases++
		}
		delete(open, clerk)
		closed++
	}
	for i := 0; i < n; i++ {
		clerk := clerks[rng.IntN(len(clerks))]
		id, isOpen := open[clerk]
		switch op := rng.IntN(20); {
		case op == 0 && isOpen:
			closeShift(clerk)
		case op <= 1 && !isOpen:
			float := rng.Int64N(50000)
			s, err := r.till.Open(ctx, till.OpenRequest{Clerk: clerk, Currency: r.show.Currency, FloatCents: float})
			if err != nil {
				t.Fatalf("seed %d: open %s: %v", seed, clerk, err)
			}
			open[clerk], models[s.ID] = s.ID, &shiftModel{clerk: clerk, float: float}
		case op < 14 || len(paid) == 0:
			if len(r.seats) == 0 {
				continue
			}
			o := r.hold(t)
			tender := []core.Tender{core.TenderCash, core.TenderCard}[rng.IntN(2)]
			res, _, err := r.counter.TakePayment(ctx, core.CounterPayment{OrderNo: o.OrderNo, Tender: tender, Clerk: clerk})
			if !isOpen {
				if !errors.Is(err, core.ErrNoOpenShift) {
					t.Fatalf("seed %d: sale by %s with no open shift: %v, want no_open_shift", seed, clerk, err)
				}
				refused++
				if _, err := r.eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: o.OrderNo, Reason: core.ReasonStaff, Actor: "staff:" + clerk}); err != nil {
					t.Fatal(err)
				}
				r.seats = append(r.seats, o.SeatIDs...)
				continue
			}
			if err != nil || res != core.PaymentApplied {
				t.Fatalf("seed %d: sale by %s: %v %v", seed, clerk, res, err)
			}
			models[id].sales++
			if tender == core.TenderCash {
				models[id].cash += o.AmountCents
			}
			paid = append(paid, paidOrder{o: o, tender: tender})
		default:
			k := rng.IntN(len(paid))
			p := paid[k]
			_, err := r.refunds.Refund(ctx, core.RefundRequest{OrderNo: p.o.OrderNo, Reason: "customer", Actor: "staff:" + clerk})
			switch {
			case !isOpen && p.tender == core.TenderCash:
				if !errors.Is(err, core.ErrNoOpenShift) {
					t.Fatalf("seed %d: cash refund by %s with no open shift: %v, want no_open_shift", seed, clerk, err)
				}
				refused++
				continue
			case err != nil:
				t.Fatalf("seed %d: refund by %s: %v", seed, clerk, err)
			case p.tender == core.TenderCash:
				models[id].cash -= p.o.AmountCents
			}
			paid = append(paid[:k], paid[k+1:]...)
			r.seats = append(r.seats, p.o.SeatIDs...)
		}
	}
	for _, clerk := range clerks {
		if _, ok := open[clerk]; ok {
			closeShift(clerk)
		}
	}
	checkLedger(t, r, seed, models)
	t.Logf("seed %d: %d operations, %d shifts closed, %d cases, %d refused for want of a shift", seed, n, closed, cases, refused)
}

// checkLedger sums every payment and refund row of the show by shift, one
// row at a time, and compares each closed shift's expected cash with it.
func checkLedger(t testing.TB, r *rig, seed uint64, models map[int64]*shiftModel) {
	ctx := context.Background()
	var orders []string
	if err := r.st.DB.X().Select(&orders, r.st.DB.X().Rebind(`SELECT order_no FROM order_info WHERE show_id = ?`), r.show.ID); err != nil {
		t.Fatal(err)
	}
	cash := map[int64]int64{}
	for _, no := range orders {
		pays, err := r.st.DB.OrderPayments(ctx, no)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pays {
			if p.ShiftID == 0 {
				t.Fatalf("seed %d: counter payment %s belongs to no shift", seed, p.TxnID)
			}
			if p.Tender == core.TenderCash {
				cash[p.ShiftID] += p.AmountCents
			}
		}
		refs, err := r.st.DB.OrderRefunds(ctx, no)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range refs {
			if f.Tender == core.TenderCash && f.State == core.RefundDone {
				cash[f.ShiftID] -= f.AmountCents
			}
		}
	}
	for id, m := range models {
		s, err := r.st.DB.Shift(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Open() || s.ExpectedCents != s.FloatCents+cash[id] || s.ExpectedCents != m.float+m.cash {
			t.Errorf("seed %d: shift %d of %s: expected %d, float %d + ledger cash %d, test saw %d + %d",
				seed, id, m.clerk, s.ExpectedCents, s.FloatCents, cash[id], m.float, m.cash)
		}
	}
}

// TestShiftsRandom: 1,000 random counter sales and refunds across 5 clerks
// on the embedded and the real stack.
func TestShiftsRandom(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		seed := rand.Uint64()
		runRandom(t, newRig(t, st, 30, 40), seed, 1000)
	})
}

// FuzzShifts runs shorter random days on the embedded stack.
func FuzzShifts(f *testing.F) {
	f.Add(uint64(1))
	f.Add(uint64(32))
	f.Fuzz(func(t *testing.T, seed uint64) {
		runRandom(t, newRig(t, stacktest.Embedded(t), 10, 20), seed, 150)
	})
}

// closingStore closes the clerk's shift right after the counter checked
// it, before the payment's transaction: the payment must still be refused.
type closingStore struct {
	*store.DB
	till  *till.Till
	clerk string
}

func (c closingStore) OpenShiftOf(ctx context.Context, clerk string) (core.ShiftRef, bool, error) {
	s, ok, err := c.DB.OpenShiftOf(ctx, clerk)
	if ok && clerk == c.clerk {
		if _, _, err := c.till.Close(ctx, till.CloseRequest{Clerk: clerk}); err != nil {
			return s, ok, err
		}
	}
	return s, ok, err
}

// TestShiftRules: the refusals and the rules around a shift.
func TestShiftRules(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		r := newRig(t, st, 5, 5)
		if _, err := r.till.Open(ctx, till.OpenRequest{Clerk: "ana", Currency: r.show.Currency, FloatCents: 1000}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			req  till.OpenRequest
			want string
		}{
			{"second open shift", till.OpenRequest{Clerk: "ana", Currency: r.show.Currency}, till.ErrShiftOpen.Code},
			{"bad currency", till.OpenRequest{Clerk: "ben", Currency: "XYZ"}, "invalid"},
			{"negative float", till.OpenRequest{Clerk: "ben", Currency: "EUR", FloatCents: -1}, "invalid"},
			{"no clerk", till.OpenRequest{Currency: "EUR"}, "invalid"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := r.till.Open(ctx, tc.req)
				var ce *core.Error
				if !errors.As(err, &ce) || ce.Code != tc.want && !(tc.want == "invalid" && ce.Kind == core.KindInvalid) {
					t.Fatalf("open %+v: %v, want %s", tc.req, err, tc.want)
				}
			})
		}
		if _, _, err := r.till.Close(ctx, till.CloseRequest{Clerk: "ben"}); !errors.Is(err, core.ErrNoOpenShift) {
			t.Errorf("close with no open shift: %v", err)
		}
		// Another currency's show: the till cannot mix them.
		if _, err := r.till.Open(ctx, till.OpenRequest{Clerk: "ben", Currency: "JPY"}); err != nil {
			t.Fatal(err)
		}
		o := r.hold(t)
		if _, _, err := r.counter.TakePayment(ctx, core.CounterPayment{OrderNo: o.OrderNo, Tender: core.TenderCash, Clerk: "ben"}); !errors.Is(err, core.ErrShiftCurrency) {
			t.Errorf("sale of a %s show into a JPY till: %v", r.show.Currency, err)
		}
		// The shift closes between the check and the payment: refused, nothing written.
		racing := core.NewCounter(r.eng, closingStore{DB: st.DB, till: r.till, clerk: "ana"})
		if _, _, err := racing.TakePayment(ctx, core.CounterPayment{OrderNo: o.OrderNo, Tender: core.TenderCash, Clerk: "ana"}); !errors.Is(err, core.ErrNoOpenShift) {
			t.Errorf("payment after the shift closed: %v, want no_open_shift", err)
		}
		if pays, err := st.DB.OrderPayments(ctx, o.OrderNo); err != nil || len(pays) != 0 {
			t.Errorf("payments written after the shift closed: %+v %v", pays, err)
		}
	})
}
