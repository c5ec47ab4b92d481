package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/web"
)

// counterHold holds the seats picked on the seat map for a counter sale and
// opens the order's page, where the clerk takes the payment. A refused hold
// (a seat taken meanwhile, a bad customer field) comes back on the map with
// the reason and what was entered.
func (cn *console) counterHold(c echo.Context) error {
	d, err := cn.seatMapData(c)
	if err != nil {
		return err
	}
	p := cn.page(c, "shows.title", web.NavShows)
	d.Counter = web.CounterForm{Seats: strings.TrimSpace(c.FormValue("seat_ids")), Name: strings.TrimSpace(c.FormValue("name")),
		Email: strings.TrimSpace(c.FormValue("email")), Phone: strings.TrimSpace(c.FormValue("phone"))}
	ids := seatIDList(d.Counter.Seats)
	if len(ids) == 0 {
		d.Counter.Error = p.T("counter.err_no_seats")
		return render(c, http.StatusUnprocessableEntity, web.SeatMapPage(p, d))
	}
	o, err := cn.counter.Hold(c.Request().Context(), core.CounterHold{ShowID: d.Show.ID, SeatIDs: ids,
		Customer: core.Customer{Name: d.Counter.Name, Email: d.Counter.Email, Phone: d.Counter.Phone}})
	if err != nil {
		var ce *core.Error
		if !errors.As(err, &ce) || (ce.Kind != core.KindInvalid && ce.Kind != core.KindConflict) {
			return err
		}
		status, msg := http.StatusConflict, ce.Message
		switch {
		case ce.Kind == core.KindInvalid:
			status = http.StatusUnprocessableEntity
		case errors.Is(err, core.ErrSeatUnavailable):
			msg = p.Tf("counter.err_taken", strings.Join(ce.Seats, ", "))
		}
		// Fresh states: the seats that were taken show as taken.
		fresh, ferr := cn.seatMapData(c)
		if ferr != nil {
			return ferr
		}
		fresh.Counter, fresh.Counter.Error = d.Counter, msg
		return render(c, status, web.SeatMapPage(p, fresh))
	}
	cn.audit(c, core.AuditEntry{Action: core.AuditCounterHold, Target: "order:" + o.OrderNo, Detail: map[string]any{
		"show_id": o.ShowID, "seat_ids": o.SeatIDs, "amount_cents": o.AmountCents, "currency": d.Show.Currency, "code": o.Code}})
	return c.Redirect(http.StatusSeeOther, web.URL("/orders/"+o.OrderNo+"?outcome="+web.OutcomeHeld))
}

// seatIDList splits a typed or picked list of seat ids.
func seatIDList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
}

// takePayment records cash or card taken at the counter for a pending
// order. A hold that ended before the money was recorded is a message on
// the form; one that ended while it was being recorded leaves a
// discrepancy, which the page says.
func (cn *console) takePayment(c echo.Context) error {
	d, err := cn.orderData(c)
	if err != nil {
		return err
	}
	d.PayTender, d.PayReference = c.FormValue("tender"), strings.TrimSpace(c.FormValue("reference"))
	s := sessionOf(c)
	res, _, err := cn.counter.TakePayment(c.Request().Context(), core.CounterPayment{OrderNo: d.Order.OrderNo,
		Tender: core.Tender(d.PayTender), Reference: d.PayReference, Clerk: s.staff.Username})
	if err != nil {
		p := cn.page(c, "order.title", web.NavHolds)
		var ce *core.Error
		switch {
		case errors.Is(err, core.ErrHoldEnded):
			d.PayError = p.T("counter.err_ended")
			return render(c, http.StatusConflict, web.OrderPage(p, d))
		case errors.Is(err, core.ErrOnlineOrder):
			d.PayError = p.T("counter.err_online")
			return render(c, http.StatusConflict, web.OrderPage(p, d))
		case errors.Is(err, core.ErrNoOpenShift):
			d.PayError = p.T("counter.err_no_shift")
			return render(c, http.StatusConflict, web.OrderPage(p, d))
		case errors.Is(err, core.ErrShiftCurrency):
			d.PayError = p.T("counter.err_shift_currency")
			return render(c, http.StatusConflict, web.OrderPage(p, d))
		case errors.As(err, &ce) && ce.Kind == core.KindInvalid:
			d.PayError = ce.Message
			return render(c, http.StatusUnprocessableEntity, web.OrderPage(p, d))
		}
		return err
	}
	cn.audit(c, core.AuditEntry{Action: core.AuditCounterPayment, Target: "order:" + d.Order.OrderNo, Detail: map[string]any{
		"tender": d.PayTender, "reference": d.PayReference, "amount_cents": d.Order.AmountCents, "currency": d.Show.Currency, "result": string(res)}})
	outcome := web.OutcomePaid
	if res != core.PaymentApplied {
		outcome = web.OutcomePaidLate
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/orders/"+d.Order.OrderNo+"?outcome="+outcome))
}

// ticket is a paid order's printable ticket, as an A6 card or an 80 mm
// receipt.
func (cn *console) ticket(c echo.Context) error {
	ctx := c.Request().Context()
	no, err := cn.Engine.OrderNo(ctx, c.Param("no"))
	if err != nil {
		return err
	}
	o, err := cn.Engine.Store().Order(ctx, no)
	if err != nil {
		return err
	}
	if o.Status != core.StatusPaid {
		return core.ErrNoTicket
	}
	show, err := cn.Engine.Store().Show(ctx, o.ShowID)
	if err != nil {
		return err
	}
	plan, err := cn.Engine.Store().Seats(ctx, o.ShowID)
	if err != nil {
		return err
	}
	d := web.TicketData{Order: o, Show: show, Format: web.TicketA6}
	if c.QueryParam("format") == web.TicketReceipt {
		d.Format = web.TicketReceipt
	}
	mine := make(map[string]bool, len(o.SeatIDs))
	for _, id := range o.SeatIDs {
		mine[id] = true
	}
	for _, s := range plan {
		if mine[s.SeatID] {
			d.Seats = append(d.Seats, s)
		}
	}
	pays, err := cn.counter.Store().OrderPayments(ctx, no)
	if err != nil {
		return err
	}
	for i := range pays {
		if pays[i].TxnID == o.PaidTxnID {
			d.Payment = &pays[i]
		}
	}
	if d.QR, err = web.QRCode(o.Code); err != nil {
		return err
	}
	return render(c, http.StatusOK, web.TicketPage(cn.page(c, "ticket.title", web.NavOrders), d))
}

// counterRoutes mounts the counter sale: hold from the seat map, take the
// payment on the order page, print the ticket.
func (cn *console) counterRoutes(g *echo.Group) {
	sell := cn.requireRole(access.ActCounterSale)
	g.POST("/shows/:id/counter", cn.counterHold, sell)
	g.POST("/orders/:no/pay", cn.takePayment, sell)
	g.GET("/orders/:no/ticket", cn.ticket, cn.requireRole(access.ActView))
}
