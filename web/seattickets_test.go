package web

import (
	"strings"
	"testing"
	"time"

	"seatflow/core"
)

// seatCardHTML is the article of seat's card on page, or "".
func seatCardHTML(page, seat string) string {
	at := strings.Index(page, `id="seat-ticket-`+seat+`"`)
	if at < 0 {
		return ""
	}
	start := strings.LastIndex(page[:at], "<article")
	end := strings.Index(page[at:], "</article>")
	return page[start : at+end]
}

// TestSeatCardsCarryOnlyTheSeatCode: on the ticket page each seat with a
// ticket has a card with its code as text and as QR code, and nothing on
// it admits the whole order: neither the order's code (as text or QR)
// nor its number. A seat without a ticket (refunded away) has no card.
func TestSeatCardsCarryOnlyTheSeatCode(t *testing.T) {
	o := core.Order{OrderNo: "SF20260101120000abcdef012345", Code: "K7M2Q9XA", Status: core.StatusPaid,
		SeatIDs: []string{"A-1", "A-2", "A-3"}}
	seats := []core.Seat{{SeatID: "A-1", RowLabel: "A", Number: 1}, {SeatID: "A-2", RowLabel: "A", Number: 2},
		{SeatID: "A-3", RowLabel: "A", Number: 3}}
	codes := map[string]string{"A-1": "AB12CD34EF", "A-3": "ZX98WV76TS"}
	cards, err := SeatCards(seats, []core.SeatTicket{{SeatID: "A-3", Code: codes["A-3"]}, {SeatID: "A-1", Code: codes["A-1"]}})
	if err != nil {
		t.Fatal(err)
	}
	orderQR, err := QRCode(o.Code)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{TicketA6, TicketReceipt} {
		for _, lang := range []Lang{LangEN, LangZH} {
			page := render(t, TicketPage(Page{Lang: lang, Loc: time.UTC}, TicketData{Order: o, Seats: seats,
				Show: core.Show{Name: "Gala", Currency: "EUR"}, Format: format, QR: orderQR, Cards: cards}))
			if !strings.Contains(page, `id="ticket-code">`+o.Code+"<") {
				t.Fatalf("%s %s: the order's ticket lacks its code", format, lang)
			}
			for _, s := range seats {
				card := seatCardHTML(page, s.SeatID)
				code, ok := codes[s.SeatID]
				if !ok {
					if card != "" {
						t.Errorf("%s %s: seat %s has no ticket but a card: %.300s", format, lang, s.SeatID, card)
					}
					continue
				}
				qr, err := QRCode(code)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case card == "":
					t.Errorf("%s %s: no card for seat %s", format, lang, s.SeatID)
				case !strings.Contains(card, ">"+code+"<") || !strings.Contains(card, qr):
					t.Errorf("%s %s: seat %s's card lacks its code %s as text or QR: %.300s", format, lang, s.SeatID, code, card)
				case strings.Contains(card, o.Code) || strings.Contains(card, orderQR) || strings.Contains(card, o.OrderNo):
					t.Errorf("%s %s: seat %s's card carries the order's code or number, which admit the whole order", format, lang, s.SeatID)
				}
			}
		}
	}
}
