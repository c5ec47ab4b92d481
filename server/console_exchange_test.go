package server

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
)

// Exchanges from the console: a clerk ticks seats of a paid order and
// types new ones; a dearer seat's difference goes into the clerk's till in
// the tender chosen, a cheaper one's is refunded; every refusal is a
// message on the order page, and the exchange is audited.
func TestConsoleExchange(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	box := env.login(access.RoleBoxOffice)
	o := env.place(31, "C-1", "C-2") // 2 × 5000
	env.pay(o)
	other := env.place(32, "B-1")
	env.pay(other)
	path := "/console/orders/" + o.OrderNo + "/exchange"
	if page := box.do("GET", "/console/orders/"+o.OrderNo, nil, nil).Body.String(); !strings.Contains(page, `id="exchange-form"`) {
		t.Fatal("a paid order's page offers no exchange")
	}
	steps := []struct {
		name   string
		form   url.Values
		status int
		want   string // in the Location on 303, else in the page
		seats  []string
		amount int64
	}{
		{"nothing ticked", url.Values{"to": {"A-1"}, "reason": {"upgrade"}}, 422, "Check the seats", []string{"C-1", "C-2"}, 10000},
		{"a seat sold to another order", url.Values{"from": {"C-1"}, "to": {"B-1"}, "reason": {"upgrade"}}, 409,
			"A new seat is not available", []string{"C-1", "C-2"}, 10000},
		{"dearer, paid by card", url.Values{"from": {"C-1"}, "to": {"A-1"}, "tender": {"card"}, "reference": {"SLIP-9"}, "reason": {"upgrade"}}, 303,
			"?outcome=" + "seats_exchanged", []string{"A-1", "C-2"}, 12500},
		{"cheaper, refunded", url.Values{"from": {"A-1"}, "to": {"C-3"}, "reason": {"back down"}}, 303,
			"?outcome=seats_exchanged", []string{"C-2", "C-3"}, 10000},
		{"a seat no longer in the order", url.Values{"from": {"C-1"}, "to": {"C-4"}, "reason": {"again"}}, 409,
			"no longer in this order", []string{"C-2", "C-3"}, 10000},
	}
	for _, st := range steps {
		rec := box.post(path, st.form)
		if rec.Code != st.status {
			t.Fatalf("%s: status %d, want %d: %.400s", st.name, rec.Code, st.status, rec.Body)
		}
		if st.status == http.StatusSeeOther {
			if loc := rec.Header().Get("Location"); !strings.HasSuffix(loc, st.want) {
				t.Fatalf("%s: Location %q, want …%s", st.name, loc, st.want)
			}
		} else if !strings.Contains(rec.Body.String(), st.want) {
			t.Fatalf("%s: page lacks %q", st.name, st.want)
		}
		got, _, err := env.engine.Order(ctx, o.OrderNo)
		if err != nil || !slices.Equal(got.SeatIDs, st.seats) || got.AmountCents != st.amount {
			t.Fatalf("%s: order holds %v for %d (%v), want %v for %d", st.name, got.SeatIDs, got.AmountCents, err, st.seats, st.amount)
		}
	}
	ps, err := env.db.OrderPayments(ctx, o.OrderNo)
	if err != nil {
		t.Fatal(err)
	}
	var took []core.Payment
	for _, p := range ps {
		if p.Result == core.PaymentExchange {
			took = append(took, p)
		}
	}
	if len(took) != 1 || took[0].AmountCents != 2500 || took[0].Method != core.PaymentMethodCounter ||
		took[0].Tender != core.TenderCard || took[0].ShiftID == 0 || took[0].Reference != "SLIP-9" {
		t.Errorf("exchange payments %+v, want one of 2500 by card into the clerk's shift", took)
	}
	rs, err := env.db.OrderRefunds(ctx, o.OrderNo)
	if err != nil || len(rs) != 1 || rs[0].AmountCents != 2500 || rs[0].State != core.RefundDone {
		t.Errorf("refund rows %+v %v, want the 2500 given back", rs, err)
	}
	page := box.do("GET", "/console/orders/"+o.OrderNo+"?outcome=seats_exchanged", nil, nil).Body.String()
	for _, want := range []string{"Seats exchanged: the new seats are sold", "Seats exchanged", "seat exchange difference"} {
		if !strings.Contains(page, want) {
			t.Errorf("order page lacks %q", want)
		}
	}
	if n := env.auditCount(core.AuditSeatExchange); n != 2 {
		t.Errorf("seat_exchange audited %d times, want 2", n)
	}
	holds, err := env.stack.Seats.Holds(ctx, env.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	sold := map[string]bool{}
	for _, h := range holds {
		sold[h.SeatID] = h.State == core.SeatSold
	}
	for seat, want := range map[string]bool{"C-1": false, "A-1": false, "C-2": true, "C-3": true, "B-1": true} {
		if sold[seat] != want {
			t.Errorf("seat %s sold=%v in the seat store, want %v", seat, sold[seat], want)
		}
	}
}
