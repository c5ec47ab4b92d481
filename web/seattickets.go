package web

import "seatflow/core"

// SeatCard is one seat's own ticket on the ticket page: the seat, its code
// and a QR code of that code. It carries nothing of the order (neither its
// code nor its number): those admit every seat of the order, a card must
// admit its seat only.
type SeatCard struct {
	Seat core.Seat
	Code string
	QR   string // an SVG of Code (QRCode)
}

// SeatCards are the cards of the seats (in their order) that have a ticket;
// a seat without one has left its order and gets no card.
func SeatCards(seats []core.Seat, tickets []core.SeatTicket) ([]SeatCard, error) {
	codes := make(map[string]string, len(tickets))
	for _, t := range tickets {
		codes[t.SeatID] = t.Code
	}
	var cards []SeatCard
	for _, s := range seats {
		code, ok := codes[s.SeatID]
		if !ok {
			continue
		}
		qr, err := QRCode(code)
		if err != nil {
			return nil, err
		}
		cards = append(cards, SeatCard{Seat: s, Code: code, QR: qr})
	}
	return cards, nil
}
