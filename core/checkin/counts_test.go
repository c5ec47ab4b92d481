package checkin_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/checkin"
	"seatflow/core/stacktest"
)

// TestCountsAndArrivals: a show's door counts are the seats of its paid
// orders (not a pending order's, nor a refunded one's) and those admitted,
// per gate, busiest first; arrivals fall in slots of ArrivalSlot per gate;
// an undone scan leaves both; another show's admissions count there only.
func TestCountsAndArrivals(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		ctx := context.Background()
		now := f.clock.Now()
		start := now.Truncate(checkin.ArrivalSlot).Add(checkin.ArrivalSlot)
		f.clock.Advance(start.Add(time.Minute).Sub(now))
		a, b, c := f.paid(t, "A-1", "A-2", "A-3"), f.paid(t, "B-1"), f.paid(t, "C-1", "C-2")
		f.place(t, "D-1") // pending: not expected
		refunded := f.paid(t, "E-1")
		if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: refunded.OrderNo, Reason: "test", Actor: "staff:a"}); err != nil {
			t.Fatal(err)
		}
		admit := func(o core.Order, gate string) {
			t.Helper()
			if _, err := f.desk.Admit(ctx, checkin.Request{Code: o.Code, Gate: gate, Actor: "staff:door"}); err != nil {
				t.Fatalf("admit %s at %s: %v", o.OrderNo, gate, err)
			}
		}
		admit(a, "north")
		f.clock.Advance(checkin.ArrivalSlot + time.Minute)
		admit(b, "south")
		admit(c, "north")
		if _, err := f.desk.Undo(ctx, c.Code, "", []string{"C-2"}, &core.StaffAction{Staff: "staff:olga", Role: access.RoleOps}); err != nil {
			t.Fatal(err)
		}
		other := st.NewShow(t, 2, 2)
		o2, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 900, ShowID: other.ID, SeatIDs: []string{"A-1"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.eng.HandlePayment(ctx, core.Payment{OrderNo: o2.OrderNo, TxnID: "T-" + o2.OrderNo, AmountCents: o2.AmountCents}); err != nil {
			t.Fatal(err)
		}
		admit(o2, "south")

		got, err := f.desk.Counts(ctx, f.show.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := checkin.Counts{ShowID: f.show.ID, Expected: 6, Admitted: 5,
			Gates: []checkin.GateCount{{Gate: "north", Admitted: 4}, {Gate: "south", Admitted: 1}}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("counts %+v, want %+v", got, want)
		}
		arrivals, err := f.desk.Arrivals(ctx, f.show.ID)
		if err != nil {
			t.Fatal(err)
		}
		later := start.Add(checkin.ArrivalSlot)
		wantArr := []checkin.Arrival{{Start: start, Gate: "north", Admitted: 3},
			{Start: later, Gate: "north", Admitted: 1}, {Start: later, Gate: "south", Admitted: 1}}
		if len(arrivals) != len(wantArr) {
			t.Fatalf("arrivals %+v, want %+v", arrivals, wantArr)
		}
		for i := range arrivals {
			if !arrivals[i].Start.Equal(wantArr[i].Start) || arrivals[i].Gate != wantArr[i].Gate || arrivals[i].Admitted != wantArr[i].Admitted {
				t.Errorf("arrival %d %+v, want %+v", i, arrivals[i], wantArr[i])
			}
		}
		if _, err := f.desk.Counts(ctx, 0); core.ErrorKind(err) != core.KindInvalid {
			t.Errorf("counts of show 0: %v, want invalid", err)
		}
	})
}
