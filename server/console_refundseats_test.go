package server

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
)

// Seats refunded from the order page: box office ticks seats and refunds
// only those (the threshold counts their amount), a repeat is a message on
// the page, and the last seats, above the threshold, wait for ops.
func TestConsoleRefundSeats(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	box, ops := env.login(access.RoleBoxOffice), env.login(access.RoleOps)
	o := env.place(31, "A-3", "A-4", "C-3") // 7500 + 7500 + 5000
	env.pay(o)
	path := "/console/orders/" + o.OrderNo + "/refund"
	request := func() string {
		rs, err := env.db.OrderRefunds(ctx, o.OrderNo)
		if err != nil || len(rs) == 0 {
			t.Fatalf("refunds of %s: %v %v", o.OrderNo, rs, err)
		}
		return strconv.FormatInt(rs[len(rs)-1].ID, 10)
	}
	page := box.do("GET", "/console/orders/"+o.OrderNo, nil, nil).Body.String()
	for _, want := range []string{`id="refund-seats"`, `name="seat_ids" value="C-3"`, "Seats to refund"} {
		if !strings.Contains(page, want) {
			t.Fatalf("order page lacks %q", want)
		}
	}
	steps := []struct {
		name   string
		who    *browser
		path   func() string
		form   url.Values
		status int
		want   string // in the Location on 303, else in the page
		kept   []string
		state  core.OrderStatus
	}{
		{"one seat, below the threshold", box, func() string { return path },
			url.Values{"reason": {"one cannot come"}, "seat_ids": {"C-3"}}, 303, "?outcome=seats_refunded",
			[]string{"A-3", "A-4"}, core.StatusPaid},
		{"the same seat again", box, func() string { return path },
			url.Values{"reason": {"one cannot come"}, "seat_ids": {"C-3"}}, 409, "no longer in this order",
			[]string{"A-3", "A-4"}, core.StatusPaid},
		{"the rest, above the threshold: a request", box, func() string { return path },
			url.Values{"reason": {"nobody comes"}, "seat_ids": {"A-3", "A-4"}}, 303, "?outcome=refund_requested",
			[]string{"A-3", "A-4"}, core.StatusPaid},
		{"ops approve", ops, func() string { return "/console/refunds/" + request() + "/approve" },
			url.Values{}, 303, "?outcome=refunded", []string{"A-3", "A-4"}, core.StatusRefunded},
	}
	for _, st := range steps {
		rec := st.who.post(st.path(), st.form)
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
		if err != nil || got.Status != st.state || !slices.Equal(got.SeatIDs, st.kept) {
			t.Fatalf("%s: order %v %v %v, want %v %v", st.name, got.Status, got.SeatIDs, err, st.state, st.kept)
		}
	}
	rs, err := env.db.OrderRefunds(ctx, o.OrderNo)
	if err != nil || len(rs) != 2 || rs[0].AmountCents != 5000 || rs[1].AmountCents != 15000 || rs[1].ApprovedBy != "staff:ops-user" {
		t.Errorf("refund rows %+v %v", rs, err)
	}
	if holds, err := env.stack.Seats.Holds(ctx, env.show.ID); err != nil || len(holds) != 0 {
		t.Errorf("holds after the refunds: %v %v", holds, err)
	}
}
