package core

import "context"

// Seat tickets (issue 31): every seat of an order (order_seat row) has its
// own ticket code, drawn when the row is inserted and deleted with it, so
// a seat that leaves its order (partial refund, refund, cancel) takes its
// code along and its printed ticket stops admitting. A seat code admits
// that seat only; the order code admits all the order's seats as before.
//
// A seat code is SeatCodeLen characters of CodeAlphabet, two more than an
// order code: the length alone tells the door which kind it holds, so no
// seat code can ever be read as an order code (the two live in different
// unique indexes, which could not stop one equalling the other), and the
// 50 bits make a code harder to find by trying them all against an
// offline list's hash.
const SeatCodeLen = 10

// SeatTicket is one seat of an order and its own ticket code.
type SeatTicket struct {
	SeatID string `json:"seat_id"`
	Code   string `json:"code"`
}

// SeatTicketStore reads seat tickets (core/store/seatcodes.go).
type SeatTicketStore interface {
	// SeatTickets are the order's seats that have a row (none once it is
	// refunded or cancelled), in seat order, each with its code.
	SeatTickets(ctx context.Context, orderNo string) ([]SeatTicket, error)
}

// NewSeatCode draws a random seat code.
func NewSeatCode() string { return randomCode(SeatCodeLen) }

// NormalizeTicketCode is NormalizeCode for anything a ticket's QR may
// carry: ok only for a whole order code (CodeLen) or seat code
// (SeatCodeLen); seat says which.
func NormalizeTicketCode(s string) (code string, seat, ok bool) {
	code, ok = normalizeCode(s, SeatCodeLen)
	switch {
	case !ok:
		return "", false, false
	case len(code) == SeatCodeLen:
		return code, true, true
	case len(code) == CodeLen:
		return code, false, true
	}
	return "", false, false
}
