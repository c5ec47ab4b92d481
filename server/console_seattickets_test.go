package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/web"
)

// TestConsoleSeatTickets: the printable ticket of a paid order has, after
// the order's ticket, one card per seat still in the order carrying that
// seat's code as text and QR code and nothing of the order's code; the
// order page lists the seat codes; the door admits a seat by its code.
func TestConsoleSeatTickets(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	o := env.place(1, "A-1", "A-2", "A-3")
	env.pay(o)
	before, err := env.db.SeatTickets(ctx, o.OrderNo)
	if err != nil || len(before) != 3 {
		t.Fatalf("seat tickets %+v %v", before, err)
	}
	refunds, err := core.NewRefunds(env.engine, env.db, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, SeatIDs: []string{"A-3"}, Reason: "asked", Actor: "staff:olga"}); err != nil {
		t.Fatal(err)
	}
	box := env.login(access.RoleBoxOffice)
	orderQR, err := web.QRCode(o.Code)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{web.TicketA6, web.TicketReceipt} {
		page := box.do("GET", "/console/orders/"+o.OrderNo+"/ticket?format="+f, nil, nil).Body.String()
		for _, tk := range before {
			card := seatCard(page, tk.SeatID)
			qr, err := web.QRCode(tk.Code)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tk.SeatID == "A-3":
				if card != "" || strings.Contains(page, tk.Code) {
					t.Errorf("%s: the refunded seat A-3 still has its ticket: %.300s", f, card)
				}
			case card == "" || !strings.Contains(card, ">"+tk.Code+"<") || !strings.Contains(card, qr):
				t.Errorf("%s: seat %s's card lacks its code %s as text or QR: %.300s", f, tk.SeatID, tk.Code, card)
			case strings.Contains(card, o.Code) || strings.Contains(card, orderQR) || strings.Contains(card, o.OrderNo):
				t.Errorf("%s: seat %s's card carries the order's code or number", f, tk.SeatID)
			}
		}
	}
	page := box.do("GET", "/console/orders/"+o.OrderNo, nil, nil).Body.String()
	if !strings.Contains(page, `id="seat-tickets"`) || !strings.Contains(page, before[0].Code) ||
		!strings.Contains(page, before[1].Code) || strings.Contains(page, before[2].Code) {
		t.Errorf("order page: want A-1's and A-2's codes listed, not the refunded A-3's: %.3000s", mainOf(page))
	}
	door := env.login(access.RoleDoor)
	csrf := hiddenCSRF.FindStringSubmatch(door.do("GET", "/console/door", nil, nil).Body.String())[1]
	for _, step := range []struct{ code, want string }{
		{before[1].Code, `data-seats="A-2"`},
		{before[1].Code, "First scanned at"},
		{before[2].Code, "No ticket has this code."},
		{o.Code, `data-seats="A-1"`},
	} {
		rec := door.do("POST", "/console/door", url.Values{"_csrf": {csrf}, "gate": {"north"}, "code": {step.code}}, nil)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), step.want) {
			t.Errorf("scan %s: %d, want %q in %.2000s", step.code, rec.Code, step.want, mainOf(rec.Body.String()))
		}
	}
}

// seatCard is the article of seat's card on a ticket page, or "".
func seatCard(page, seat string) string {
	at := strings.Index(page, `id="seat-ticket-`+seat+`"`)
	if at < 0 {
		return ""
	}
	start := strings.LastIndex(page[:at], "<article")
	end := strings.Index(page[at:], "</article>")
	return page[start : at+end]
}
