package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/till"
)

// openShift opens clerk's till shift, as every counter sale needs.
func openShift(t *testing.T, st *stacktest.Stack, clerk string) {
	t.Helper()
	tl, err := till.New(st.DB, core.SystemClock{}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tl.Open(context.Background(), till.OpenRequest{Clerk: clerk, Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
}

// TestCounterSale: a clerk holds seats (blocked ones too, past the purchase
// limit) through Place and takes money through HandlePayment; the payment
// row and the timeline say how and by whom.
func TestCounterSale(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st, core.Config{PurchaseLimit: 2})
		ctx := context.Background()
		counter := core.NewCounter(f.eng, st.DB)
		openShift(t, st, "clerk1")
		if err := f.eng.BlockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: []string{"A-2"}, Reason: core.BlockHouse}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: f.show.ID, SeatIDs: []string{"A-2"}}); !errors.Is(err, core.ErrSeatUnavailable) {
			t.Fatalf("public place of a blocked seat: %v, want seat_unavailable", err)
		}
		o, err := counter.Hold(ctx, core.CounterHold{ShowID: f.show.ID, SeatIDs: []string{"A-1", "A-2", "A-3"},
			Customer: core.Customer{Name: "Ada Lovelace", Email: "ada@example.org"}})
		if err != nil {
			t.Fatalf("counter hold of 3 seats (one blocked) over a limit of 2: %v", err)
		}
		if o.UserID != core.BoxOfficeUserID || o.Customer.Name != "Ada Lovelace" {
			t.Errorf("counter order user %d customer %+v", o.UserID, o.Customer)
		}
		f.wantSeats(t, core.SeatLocked, "A-1", "A-2", "A-3")
		if _, err := counter.Hold(ctx, core.CounterHold{ShowID: f.show.ID, SeatIDs: []string{"B-1", "B-2", "B-3"}}); err != nil {
			t.Fatalf("a second counter sale is not limited by the first: %v", err)
		}
		if _, err := f.eng.Cancel(ctx, o.OrderNo, core.BoxOfficeUserID); !errors.Is(err, core.ErrOrderNotFound) {
			t.Errorf("customer cancel of a counter order: %v, want order_not_found", err)
		}

		res, paid, err := counter.TakePayment(ctx, core.CounterPayment{OrderNo: o.OrderNo, Tender: core.TenderCash,
			Reference: " till 2 ", Clerk: "clerk1"})
		if err != nil || res != core.PaymentApplied {
			t.Fatalf("take cash: %v %v", res, err)
		}
		if paid.Status != core.StatusPaid || !strings.HasPrefix(paid.PaidTxnID, "counter-"+o.Code+"-") {
			t.Errorf("after payment: status %v txn %q", paid.Status, paid.PaidTxnID)
		}
		f.wantSeats(t, core.SeatSold, "A-1", "A-2", "A-3")
		pays, err := counter.Store().OrderPayments(ctx, o.OrderNo)
		if err != nil {
			t.Fatal(err)
		}
		want := core.Payment{TxnID: paid.PaidTxnID, OrderNo: o.OrderNo, AmountCents: o.AmountCents,
			Method: core.PaymentMethodCounter, Tender: core.TenderCash, Reference: "till 2", Actor: "staff:clerk1",
			Result: string(core.PaymentApplied)}
		if len(pays) != 1 {
			t.Fatalf("payments: %+v", pays)
		}
		got := pays[0]
		got.PaidAt, got.ReceivedAt = want.PaidAt, want.ReceivedAt
		if got.ShiftID == 0 {
			t.Errorf("the counter payment belongs to no till shift")
		}
		got.ShiftID = 0
		if got != want {
			t.Errorf("payment row\n got %+v\nwant %+v", got, want)
		}
		ev := f.events(t, o.OrderNo, core.EventPaid)
		if len(ev) != 1 || ev[0].Detail["method"] != core.PaymentMethodCounter || ev[0].Detail["tender"] != "cash" ||
			ev[0].Detail["actor"] != "staff:clerk1" {
			t.Errorf("paid events: %+v", ev)
		}
		f.invariants(t)
	})
}

// TestCounterPaymentRefused: a bad payment, or one for an order that is no
// longer pending, writes nothing.
func TestCounterPaymentRefused(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st, core.Config{})
		ctx := context.Background()
		counter := core.NewCounter(f.eng, st.DB)
		openShift(t, st, "c")
		pending, err := counter.Hold(ctx, core.CounterHold{ShowID: f.show.ID, SeatIDs: []string{"C-1"}})
		if err != nil {
			t.Fatal(err)
		}
		cancelled, err := counter.Hold(ctx, core.CounterHold{ShowID: f.show.ID, SeatIDs: []string{"C-2"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: cancelled.OrderNo, Reason: core.ReasonStaff, Actor: "staff:x"}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			p    core.CounterPayment
			want error
		}{
			{"unknown tender", core.CounterPayment{OrderNo: pending.OrderNo, Tender: "cheque", Clerk: "c"}, nil},
			{"no clerk", core.CounterPayment{OrderNo: pending.OrderNo, Tender: core.TenderCard}, nil},
			{"reference too long", core.CounterPayment{OrderNo: pending.OrderNo, Tender: core.TenderCard, Clerk: "c",
				Reference: strings.Repeat("x", core.MaxCounterReferenceLen+1)}, nil},
			{"unknown order", core.CounterPayment{OrderNo: "nope", Tender: core.TenderCash, Clerk: "c"}, core.ErrOrderNotFound},
			{"hold ended", core.CounterPayment{OrderNo: cancelled.OrderNo, Tender: core.TenderCash, Clerk: "c"}, core.ErrHoldEnded},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, _, err := counter.TakePayment(ctx, tc.p)
				switch {
				case tc.want == nil && core.ErrorKind(err) != core.KindInvalid:
					t.Fatalf("err %v, want invalid", err)
				case tc.want != nil && !errors.Is(err, tc.want):
					t.Fatalf("err %v, want %v", err, tc.want)
				}
			})
		}
		for _, no := range []string{pending.OrderNo, cancelled.OrderNo} {
			if pays, err := counter.Store().OrderPayments(ctx, no); err != nil || len(pays) != 0 {
				t.Errorf("%s: payments %+v %v, want none", no, pays, err)
			}
		}
		if got := f.status(t, pending.OrderNo); got != core.StatusPending {
			t.Errorf("refused payments left the order %v", got)
		}
	})
}
