package web

import (
	"strings"

	go_qr "github.com/piglig/go-qr"

	"seatflow/core"
)

// CounterForm is the seat map's counter-sale form: the seats picked (ids
// separated by commas or spaces, kept in step with the map by console.js)
// and the optional customer.
type CounterForm struct {
	Seats, Name, Email, Phone string
	Error                     string // why the hold was refused, in words
	// Best is the best-N request beside the map; Preview, in words, the
	// seats it chose (then in Seats too), or BestError why it chose none.
	Best               BestForm
	Preview, BestError string
}

// BestForm is the counter's best-N request. Apart is the together box
// unticked, so the zero form asks for seats together.
type BestForm struct {
	Count, Category string
	Apart           bool
	// Seats are the seats the preview chose: a hold of exactly these that
	// finds one taken gets a fresh preview instead of a bare refusal.
	Seats string
}

// Ticket formats: an A6 card or an 80 mm receipt roll.
const (
	TicketA6      = "a6"
	TicketReceipt = "receipt"
)

// TicketData is one paid order's printable ticket.
type TicketData struct {
	Order   core.Order
	Show    core.Show
	Seats   []core.Seat   // the order's seats from the plan, in seat order
	Payment *core.Payment // the payment that paid it, if recorded
	Format  string        // TicketA6 or TicketReceipt
	QR      string        // an SVG of the order code (QRCode)
	Cards   []SeatCard    // each seat's own ticket (seattickets.go)
}

// QRCode is an SVG QR code of text, at error correction level M (a
// printed ticket survives a crease) with the standard 4-module quiet zone.
func QRCode(text string) (string, error) {
	q, err := go_qr.EncodeText(text, go_qr.Medium)
	if err != nil {
		return "", err
	}
	svg, err := q.ToSVGBytes(go_qr.NewQrCodeImgConfig(8, 4))
	if err != nil {
		return "", err
	}
	return string(svg), nil
}

// customerLine is an order's customer on one line.
func customerLine(c core.Customer) string {
	var parts []string
	for _, v := range []string{c.Name, c.Email, c.Phone} {
		if v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, " · ")
}

// CounterPayable says whether the box office may take money for o: a
// pending order held at the counter (an online order is paid online).
func CounterPayable(o core.Order) bool {
	return o.Status == core.StatusPending && o.UserID == core.BoxOfficeUserID
}
