package server

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/web"
)

// A counter sale from the console: hold two seats (one blocked) with a
// customer, take card, print the ticket; every refusal is a message on the
// page and writes nothing.
func TestConsoleCounterSale(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	box := env.login(access.RoleBoxOffice)
	showPath := "/console/shows/" + strconv.FormatInt(env.show.ID, 10)
	if err := env.engine.BlockSeats(ctx, core.BlockRequest{ShowID: env.show.ID, SeatIDs: []string{"C-4"}, Reason: core.BlockHouse}); err != nil {
		t.Fatal(err)
	}
	if page := box.do("GET", showPath, nil, nil); page.Code != 200 || !strings.Contains(page.Body.String(), `id="counter-form"`) {
		t.Fatalf("seat map: %d, counter form missing", page.Code)
	}

	rec := box.post(showPath+"/counter", url.Values{"seat_ids": {"C-3, C-4"}, "name": {"Ada Lovelace"}, "email": {"ada@example.org"}})
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasSuffix(loc, "?outcome="+web.OutcomeHeld) {
		t.Fatalf("hold: %d %q: %.300s", rec.Code, loc, rec.Body)
	}
	no := strings.TrimSuffix(strings.TrimPrefix(loc, "/console/orders/"), "?outcome="+web.OutcomeHeld)
	o, err := env.db.Order(ctx, no)
	if err != nil {
		t.Fatal(err)
	}
	if o.UserID != core.BoxOfficeUserID || o.Status != core.StatusPending || strings.Join(o.SeatIDs, ",") != "C-3,C-4" ||
		o.Customer.Email != "ada@example.org" {
		t.Fatalf("counter order %+v", o)
	}
	page := box.do("GET", loc, nil, nil).Body.String()
	for _, want := range []string{`id="pay-form"`, "Ada Lovelace · ada@example.org", "box office (no account)", "Seats held."} {
		if !strings.Contains(page, want) {
			t.Errorf("order page lacks %q", want)
		}
	}

	orders := func() int { return env.auditCount(core.AuditCounterHold) }
	before := orders()
	refusals := []struct {
		name   string
		path   string
		form   url.Values
		status int
		want   string
	}{
		{"no seats", showPath + "/counter", url.Values{"seat_ids": {" , "}}, 422, "Pick at least one seat on the map."},
		{"seat taken", showPath + "/counter", url.Values{"seat_ids": {"C-2 C-3"}, "name": {"Bob"}}, 409, "No longer available: C-3."},
		{"bad email", showPath + "/counter", url.Values{"seat_ids": {"C-2"}, "email": {"not-an-email"}}, 422, "email"},
		{"unknown seat", showPath + "/counter", url.Values{"seat_ids": {"Z-99"}}, 422, "unknown seats"},
		{"bad tender", "/console/orders/" + no + "/pay", url.Values{"tender": {"cheque"}}, 422, "tender must be cash or card"},
		{"reference too long", "/console/orders/" + no + "/pay", url.Values{"tender": {"card"}, "reference": {strings.Repeat("9", core.MaxCounterReferenceLen+1)}}, 422, "reference may have at most"},
	}
	for _, r := range refusals {
		rec := box.post(r.path, r.form)
		if rec.Code != r.status || !strings.Contains(rec.Body.String(), r.want) {
			t.Errorf("%s: status %d, want %d with %q: %.300s", r.name, rec.Code, r.status, r.want, rec.Body)
		}
	}
	if got := orders(); got != before {
		t.Errorf("refused holds were audited: %d → %d", before, got)
	}
	if taken := box.post(showPath+"/counter", url.Values{"seat_ids": {"C-2 C-3"}, "name": {"Bob"}}).Body.String(); !strings.Contains(taken, `value="C-2 C-3"`) ||
		!strings.Contains(taken, `value="Bob"`) {
		t.Errorf("a refused hold forgot what was entered")
	}
	if pays, _ := env.db.OrderPayments(ctx, no); len(pays) != 0 {
		t.Fatalf("refused payments wrote %+v", pays)
	}
	if rec := box.do("GET", "/console/orders/"+no+"/ticket", nil, nil); rec.Code != http.StatusConflict {
		t.Errorf("ticket of a pending order: %d, want 409", rec.Code)
	}

	rec = box.post("/console/orders/"+no+"/pay", url.Values{"tender": {"card"}, "reference": {"SLIP-77"}})
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !strings.HasSuffix(loc, "?outcome="+web.OutcomePaid) {
		t.Fatalf("take payment: %d %q: %.300s", rec.Code, loc, rec.Body)
	}
	if o, _ = env.db.Order(ctx, no); o.Status != core.StatusPaid {
		t.Fatalf("after the payment the order is %v", o.Status)
	}
	pays, err := env.db.OrderPayments(ctx, no)
	if err != nil || len(pays) != 1 || pays[0].Method != core.PaymentMethodCounter || pays[0].Tender != core.TenderCard ||
		pays[0].Reference != "SLIP-77" || pays[0].Actor != "staff:"+env.staff[access.RoleBoxOffice].Username || pays[0].TxnID != o.PaidTxnID {
		t.Fatalf("payments %+v %v", pays, err)
	}
	holds, err := env.stack.Seats.Holds(ctx, env.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	sold := 0
	for _, h := range holds {
		if h.OrderNo == no && h.State == core.SeatSold {
			sold++
		}
	}
	if sold != 2 {
		t.Errorf("%d seats sold in the seat store, want 2: %+v", sold, holds)
	}
	if rec := box.post("/console/orders/"+no+"/pay", url.Values{"tender": {"cash"}}); rec.Code != http.StatusConflict ||
		!strings.Contains(rec.Body.String(), "The hold has ended") {
		t.Errorf("paying a paid order: %d: %.300s", rec.Code, rec.Body)
	}
	if got := env.auditCount(core.AuditCounterPayment); got != 1 {
		t.Errorf("counter payments audited: %d, want 1", got)
	}

	for _, f := range []string{web.TicketA6, web.TicketReceipt} {
		rec := box.do("GET", "/console/orders/"+o.Code+"/ticket?format="+f, nil, nil)
		body := rec.Body.String()
		if rec.Code != 200 || !strings.Contains(body, `class="ticket ticket-`+f+`"`) || !strings.Contains(body, "<svg") ||
			!strings.Contains(body, `id="ticket-code">`+o.Code+"<") || !strings.Contains(body, "Row C · Seat 4") ||
			!strings.Contains(body, "at the counter · card") {
			t.Errorf("ticket %s: %d: %.600s", f, rec.Code, body)
		}
	}
}

// TestCounterPaysOnlyCounterHolds: the box office takes money only for
// seats held at the counter; an online order waits for its buyer's payment
// and is never marked paid in cash, so a clerk cannot pocket the money of a
// sale the provider never saw. Nothing is written.
func TestCounterPaysOnlyCounterHolds(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	box := env.login(access.RoleBoxOffice)
	online := env.place(51, "A-1")
	if page := box.do("GET", "/console/orders/"+online.OrderNo, nil, nil).Body.String(); strings.Contains(page, `id="pay-form"`) {
		t.Errorf("an online order's page offers the counter payment form")
	}
	before := env.auditCount(core.AuditCounterPayment)
	rec := box.post("/console/orders/"+online.OrderNo+"/pay", url.Values{"tender": {"cash"}})
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "was placed online") {
		t.Errorf("paying an online order at the counter: status %d: %.300s", rec.Code, rec.Body)
	}
	if o, err := env.db.Order(ctx, online.OrderNo); err != nil || o.Status != core.StatusPending {
		t.Errorf("online order after the refusal: %v %v, want pending", o.Status, err)
	}
	if pays, err := env.db.OrderPayments(ctx, online.OrderNo); err != nil || len(pays) != 0 {
		t.Errorf("payments %+v %v, want none", pays, err)
	}
	if got := env.auditCount(core.AuditCounterPayment); got != before {
		t.Errorf("the refusal was audited as a payment: %d → %d", before, got)
	}
}
