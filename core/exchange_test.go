package core_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// exchangeFixture is a refund fixture with exchanges on it.
type exchangeFixture struct {
	*refundFixture
	exchanges *core.Exchanges
}

func newExchangeFixture(t *testing.T, st *stacktest.Stack, approvalCents int64, cfg core.Config) *exchangeFixture {
	t.Helper()
	f := newRefundFixture(t, st, approvalCents, cfg)
	return &exchangeFixture{refundFixture: f,
		exchanges: core.NewExchanges(f.eng, f.refunds, core.NewCounter(f.eng, st.DB))}
}

// exchangeMoney returns the cents the order's exchange payments took.
func (f *exchangeFixture) exchangeMoney(t *testing.T, orderNo string) int64 {
	t.Helper()
	ps, err := f.st.DB.OrderPayments(context.Background(), orderNo)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, p := range ps {
		if p.Result == core.PaymentExchange {
			n += p.AmountCents
		}
	}
	return n
}

// planPrice is the demo plan's price of seat id.
func planPrice(id string) int64 {
	switch id[0] {
	case 'A', 'B', 'C', 'D':
		return priceA
	case 'E', 'F', 'G':
		return priceE
	}
	return priceH
}

func TestExchange(t *testing.T) {
	cases := []struct {
		name      string
		threshold int64
		seats     []string // the order's, paid
		other     []string // another order's, paid
		shift     bool     // the clerk has a till open
		req       core.ExchangeRequest
		err       error
		diff      int64
		method    string // the payment row's, when the difference is paid
	}{
		{name: "same price", seats: []string{"A-1", "A-2"},
			req: core.ExchangeRequest{From: []string{"A-2"}, To: []string{"B-2"}, Actor: "api:k1"}},
		{name: "dearer through the API, vouched for", seats: []string{"H-1"},
			req:  core.ExchangeRequest{From: []string{"H-1"}, To: []string{"A-3"}, Actor: "api:k1", Reference: "ch_1"},
			diff: priceA - priceH, method: core.PaymentMethodAPI},
		{name: "dearer through the API, unpaid", seats: []string{"H-2"},
			req: core.ExchangeRequest{From: []string{"H-2"}, To: []string{"A-4"}, Actor: "api:k1"},
			err: core.ErrDifferenceUnpaid},
		{name: "dearer at the counter in cash", seats: []string{"H-3", "H-4"}, shift: true,
			req:  core.ExchangeRequest{From: []string{"H-4", "H-3"}, To: []string{"E-4", "A-5"}, Actor: "staff:clerkx", Tender: core.TenderCash},
			diff: priceA + priceE - 2*priceH, method: core.PaymentMethodCounter},
		{name: "dearer at the counter, no till open", seats: []string{"H-5"},
			req: core.ExchangeRequest{From: []string{"H-5"}, To: []string{"A-6"}, Actor: "staff:clerky", Tender: core.TenderCard},
			err: core.ErrNoOpenShift},
		{name: "same price at the counter needs no till", seats: []string{"C-3"},
			req: core.ExchangeRequest{From: []string{"C-3"}, To: []string{"C-4"}, Actor: "staff:clerkz", Tender: core.TenderCash}},
		{name: "cheaper: the difference refunded", seats: []string{"A-7", "A-8"},
			req:  core.ExchangeRequest{From: []string{"A-7"}, To: []string{"H-7"}, Actor: "api:k1"},
			diff: priceH - priceA},
		{name: "cheaper above the approval threshold", threshold: 1000, seats: []string{"A-9"},
			req: core.ExchangeRequest{From: []string{"A-9"}, To: []string{"H-9"}, Actor: "api:k1"},
			err: core.ErrExchangeNeedsApproval},
		{name: "a new seat sold to another order", seats: []string{"B-1"}, other: []string{"B-3"},
			req: core.ExchangeRequest{From: []string{"B-1"}, To: []string{"B-3"}, Actor: "api:k1"},
			err: core.ErrSeatUnavailable},
		{name: "a seat given up that the order does not hold", seats: []string{"B-4"}, other: []string{"B-5"},
			req: core.ExchangeRequest{From: []string{"B-5"}, To: []string{"B-6"}, Actor: "api:k1"},
			err: core.ErrSeatsNotInOrder},
		{name: "a new seat the order holds already", seats: []string{"B-7", "B-8"},
			req: core.ExchangeRequest{From: []string{"B-7"}, To: []string{"B-8"}, Actor: "api:k1"},
			err: core.ErrInvalid},
		{name: "counts differ", seats: []string{"B-9"},
			req: core.ExchangeRequest{From: []string{"B-9"}, To: []string{"C-9", "C-10"}, Actor: "api:k1"},
			err: core.ErrInvalid},
		{name: "a seat both given up and taken", seats: []string{"C-1"},
			req: core.ExchangeRequest{From: []string{"C-1"}, To: []string{"C-1"}, Actor: "api:k1"},
			err: core.ErrInvalid},
		{name: "an unknown seat", seats: []string{"C-2"},
			req: core.ExchangeRequest{From: []string{"C-2"}, To: []string{"Z-99"}, Actor: "api:k1"},
			err: core.ErrInvalid},
	}
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		// One show for every case (each its own seats), as the invariant
		// check reads every show of the stack.
		shared := newRefundFixture(t, st, 0, core.Config{PurchaseLimit: 10})
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				refunds, err := core.NewRefunds(shared.eng, st.DB, c.threshold)
				if err != nil {
					t.Fatal(err)
				}
				f := &exchangeFixture{refundFixture: &refundFixture{fixture: shared.fixture, refunds: refunds},
					exchanges: core.NewExchanges(shared.eng, refunds, core.NewCounter(shared.eng, st.DB))}
				if c.shift {
					openShift(t, st, "clerkx")
				}
				user := int64(200 + i)
				o := f.paid(t, user, c.seats...)
				if c.other != nil {
					f.paid(t, user+1000, c.other...)
				}
				req := c.req
				req.OrderNo, req.Reason = o.OrderNo, "the customer asked"
				out, err := f.exchanges.Exchange(ctx, req)
				got := f.order(t, o.OrderNo)
				if c.err != nil {
					if !errors.Is(err, c.err) {
						t.Fatalf("exchange: %v, want %v", err, c.err)
					}
					// Nothing changed: the order, its money, every seat named.
					if !slices.Equal(got.SeatIDs, o.SeatIDs) || got.AmountCents != o.AmountCents || got.Status != core.StatusPaid {
						t.Errorf("refused exchange left %v for %d (%v), want %v for %d", got.SeatIDs, got.AmountCents, got.Status,
							o.SeatIDs, o.AmountCents)
					}
					f.wantSeats(t, core.SeatSold, o.SeatIDs...)
					for _, s := range c.req.To {
						if !slices.Contains(o.SeatIDs, s) && !slices.Contains(c.other, s) && s != "Z-99" {
							f.wantSeats(t, core.SeatAvailable, s)
						}
					}
					if m := f.exchangeMoney(t, o.OrderNo) + f.refundMoney(t, o.OrderNo); m != 0 {
						t.Errorf("refused exchange moved %d cents", m)
					}
					f.checkSeatsMatchDB(t)
					f.invariants(t)
					return
				}
				if err != nil {
					t.Fatalf("exchange: %v", err)
				}
				want := slices.Concat(slices.DeleteFunc(slices.Clone(o.SeatIDs), func(s string) bool {
					return slices.Contains(c.req.From, s)
				}), c.req.To)
				slices.SortFunc(want, core.CompareSeatIDs)
				var price int64
				for _, s := range want {
					price += planPrice(s)
				}
				if !slices.Equal(got.SeatIDs, want) || got.AmountCents != price || got.Status != core.StatusPaid ||
					!slices.Equal(out.Order.SeatIDs, want) || out.DifferenceCents != c.diff {
					t.Errorf("after the exchange the order holds %v for %d (%v), told %v and %d; want %v for %d, difference %d",
						got.SeatIDs, got.AmountCents, got.Status, out.Order.SeatIDs, out.DifferenceCents, want, price, c.diff)
				}
				// The difference is money recorded, to the cent, one way.
				paid, refunded := f.exchangeMoney(t, o.OrderNo), f.refundMoney(t, o.OrderNo)
				if paid-refunded != c.diff || (paid != 0 && refunded != 0) {
					t.Errorf("exchange took %d and gave back %d, want a difference of %d", paid, refunded, c.diff)
				}
				if c.method != "" && (out.Payment == nil || out.Payment.Method != c.method) {
					t.Errorf("difference paid as %+v, want method %s", out.Payment, c.method)
				}
				if n := len(f.events(t, o.OrderNo, core.EventSeatsExchanged)); n != 1 {
					t.Errorf("%d seats_exchanged events, want 1", n)
				}
				// Each seat held has its own ticket code; the seats given up
				// took theirs along (their printed tickets stop admitting).
				tickets, err := st.DB.SeatTickets(ctx, o.OrderNo)
				if err != nil {
					t.Fatal(err)
				}
				var ticketSeats []string
				for _, tk := range tickets {
					ticketSeats = append(ticketSeats, tk.SeatID)
					if len(tk.Code) != core.SeatCodeLen {
						t.Errorf("seat %s has ticket code %q", tk.SeatID, tk.Code)
					}
				}
				if !slices.Equal(ticketSeats, want) {
					t.Errorf("tickets of %v, want %v", ticketSeats, want)
				}
				f.wantSeats(t, core.SeatSold, want...)
				f.wantSeats(t, core.SeatAvailable, c.req.From...)
				f.wantCounter(t, user, len(want))
				f.checkSeatsMatchDB(t)
				f.invariants(t)
				// A seat given up is on sale again; a new one is the order's
				// ticket and searchable by its id.
				f.paid(t, user+2000, c.req.From[0])
				found, err := st.DB.SearchOrders(ctx, core.OrderSearch{Q: c.req.To[0], Limit: 50})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(found.Orders, func(r core.Order) bool { return r.OrderNo == o.OrderNo }) {
					t.Errorf("searching %s does not find the order it was exchanged into", c.req.To[0])
				}
			})
		}
	})
}
