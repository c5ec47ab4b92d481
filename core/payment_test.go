package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// TestPaymentNeverSwallowed: money for an unknown order is stored and opens
// an unknown_order case; a txn id reused on another order or amount is
// refused with txn_conflict and opens a case, never taken for a repeat; a
// true repeat stays a duplicate that writes nothing.
func TestPaymentNeverSwallowed(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st, core.Config{})
		ctx := context.Background()
		o1, o2, o3 := f.place(t, 1, "A-1"), f.place(t, 2, "A-2"), f.place(t, 3, "A-3")
		cases := func() map[string]core.Discrepancy {
			t.Helper()
			ds, err := st.DB.Discrepancies(ctx, store.DiscrepancyOpen, 100, 0)
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]core.Discrepancy{}
			for _, d := range ds {
				m[d.TxnID+"/"+d.Kind] = d
			}
			return m
		}
		steps := []struct {
			name    string
			p       core.Payment
			want    core.PaymentResult
			wantErr error
		}{
			{"paid", core.Payment{OrderNo: o1.OrderNo, TxnID: "T1", AmountCents: o1.AmountCents}, core.PaymentApplied, nil},
			{"true repeat", core.Payment{OrderNo: o1.OrderNo, TxnID: "T1", AmountCents: o1.AmountCents}, core.PaymentDuplicate, nil},
			{"unknown order", core.Payment{OrderNo: "SF-RESTORED-AWAY", TxnID: "T2", AmountCents: 700}, core.PaymentDiscrepancy, nil},
			{"unknown order repeated", core.Payment{OrderNo: "SF-RESTORED-AWAY", TxnID: "T2", AmountCents: 700}, core.PaymentDuplicate, nil},
			{"txn id of another order", core.Payment{OrderNo: o2.OrderNo, TxnID: "T1", AmountCents: o2.AmountCents}, "", core.ErrTxnConflict},
			{"txn id with another amount", core.Payment{OrderNo: "SF-RESTORED-AWAY", TxnID: "T2", AmountCents: 701}, "", core.ErrTxnConflict},
			{"conflict repeated", core.Payment{OrderNo: o2.OrderNo, TxnID: "T1", AmountCents: o2.AmountCents}, "", core.ErrTxnConflict},
			{"txn id of a third order", core.Payment{OrderNo: o3.OrderNo, TxnID: "T1", AmountCents: o3.AmountCents}, "", core.ErrTxnConflict},
		}
		for _, s := range steps {
			res, err := f.eng.HandlePayment(ctx, s.p)
			if res != s.want || !errors.Is(err, s.wantErr) {
				t.Fatalf("%s: %q %v, want %q %v", s.name, res, err, s.want, s.wantErr)
			}
		}
		pays, err := st.DB.OrderPayments(ctx, "SF-RESTORED-AWAY")
		if err != nil || len(pays) != 1 || pays[0].AmountCents != 700 || pays[0].Result != core.DiscrepancyUnknownOrder {
			t.Errorf("payments of the unknown order: %+v %v", pays, err)
		}
		got := cases()
		if d, ok := got["T2/"+core.DiscrepancyUnknownOrder]; !ok || d.OrderNo != "SF-RESTORED-AWAY" || d.AmountCents != 700 {
			t.Errorf("unknown_order case: %+v (%v)", d, ok)
		}
		if d, ok := got["T1/"+core.DiscrepancyTxnConflict]; !ok || d.OrderNo != o2.OrderNo || d.Note == "" {
			t.Errorf("txn_conflict case for o2: %+v (%v)", d, ok)
		}
		// The third order's claim is on the T1 case's history; the repeat of
		// o2's claim added nothing.
		if hist, err := st.DB.CaseHistory(ctx, got["T1/"+core.DiscrepancyTxnConflict].ID); err != nil {
			t.Fatal(err)
		} else if len(hist) != 1 || !strings.Contains(hist[0].Note, o3.OrderNo) {
			t.Errorf("history of the T1 conflict case: %+v, want one note naming %s", hist, o3.OrderNo)
		}
		if _, ok := got["T2/"+core.DiscrepancyTxnConflict]; !ok {
			t.Errorf("no txn_conflict case for the reused T2: %v", got)
		}
		if len(got) != 3 {
			t.Errorf("%d cases, want 3: %v", len(got), got)
		}
		if s := f.status(t, o2.OrderNo); s != core.StatusPending {
			t.Errorf("o2 after a conflicting callback: %v, want pending", s)
		}
		// Each of o2's two conflicting callbacks is on its timeline.
		if evs := f.events(t, o2.OrderNo, core.EventDiscrepancy); len(evs) != 2 || evs[1].Detail["other_order_no"] != o1.OrderNo {
			t.Errorf("o2's timeline: %+v", evs)
		}
		f.wantSeats(t, core.SeatSold, "A-1")
		f.wantSeats(t, core.SeatLocked, "A-2")
		f.invariants(t)
	})
}
