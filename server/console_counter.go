package server

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
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
		Email: strings.TrimSpace(c.FormValue("email")), Phone: strings.TrimSpace(c.FormValue("phone")),
		Best: web.BestForm{Count: c.FormValue("best_count"), Category: c.FormValue("best_category"),
			Apart: c.FormValue("best_apart") != "", Seats: c.FormValue("best_seats")}}
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
		fresh.Counter.Best.Seats = ""
		if errors.Is(err, core.ErrSeatUnavailable) && slices.Equal(ids, seatIDList(d.Counter.Best.Seats)) {
			// The previewed seats, one taken since: preview again, so the
			// clerk holds the next best with one more Enter.
			if _, err := cn.previewBest(c.Request().Context(), p, d.Show.ID, &fresh.Counter); err != nil {
				return err
			}
			if fresh.Counter.BestError == "" {
				fresh.Counter.Error = p.Tf("best.err_taken", strings.Join(ce.Seats, ", "))
			}
		}
		return render(c, status, web.SeatMapPage(p, fresh))
	}
	cn.audit(c, core.AuditEntry{Action: core.AuditCounterHold, Target: "order:" + o.OrderNo, Detail: map[string]any{
		"show_id": o.ShowID, "seat_ids": o.SeatIDs, "amount_cents": o.AmountCents, "currency": d.Show.Currency, "code": o.Code}})
	return c.Redirect(http.StatusSeeOther, web.URL("/orders/"+o.OrderNo+"?outcome="+web.OutcomeHeld))
}

// counterBest previews the best N seats at the counter: the engine's choice
// by the show's rules on the seats' state now (core.Engine.PreviewBest),
// locking nothing, put in the sale's seats, which the map then marks
// (console.js); Hold holds exactly those. An htmx request gets the
// counter's forms alone, always 200 (htmx swaps no error answer; the
// refusal is on the form), a plain post the whole page.
func (cn *console) counterBest(c echo.Context) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	p := cn.page(c, "shows.title", web.NavShows)
	f := bestCounterForm(c)
	status, err := cn.previewBest(c.Request().Context(), p, id, &f)
	if err != nil {
		return err
	}
	return cn.renderCounter(c, p, id, f, status)
}

// bestCounterForm reads the counter's best-N form and the sale's customer
// fields that go along with it.
func bestCounterForm(c echo.Context) web.CounterForm {
	return web.CounterForm{Name: strings.TrimSpace(c.FormValue("name")), Email: strings.TrimSpace(c.FormValue("email")),
		Phone: strings.TrimSpace(c.FormValue("phone")),
		Best:  web.BestForm{Count: strings.TrimSpace(c.FormValue("count")), Category: c.FormValue("category"), Apart: c.FormValue("together") == ""}}
}

// renderCounter answers a best-N form with f: an htmx request gets the
// counter's forms alone, always 200 (htmx swaps no error answer; the
// refusal is on the form) and the map stays as it is, so its seats need
// not be read; a plain post gets the whole page with status.
func (cn *console) renderCounter(c echo.Context, p web.Page, showID int64, f web.CounterForm, status int) error {
	ctx := c.Request().Context()
	var d web.SeatMapData
	var err error
	if isHTMX(c) {
		if d.Show, err = cn.Engine.Store().Show(ctx, showID); err != nil {
			return err
		}
		if d.Categories, err = cn.Engine.Store().PriceCategories(ctx, showID); err != nil {
			return err
		}
		d.Counter = f
		return render(c, http.StatusOK, web.CounterSide(p, d))
	}
	if d, err = cn.seatMapData(c); err != nil {
		return err
	}
	d.Counter = f
	return render(c, status, web.SeatMapPage(p, d))
}

// bestCount reads f's count, or says on f that it is out of range.
func bestCount(p web.Page, f *web.CounterForm) (int, bool) {
	n, err := strconv.Atoi(f.Best.Count)
	if err != nil || n < 1 || n > core.MaxBestCount {
		f.BestError = p.Tf("best.err_count", core.MaxBestCount)
		return 0, false
	}
	return n, true
}

// previewBest fills f's seats with the best-available preview of f.Best,
// or f.BestError with why there is none, and answers the status of a page
// saying so; an error it cannot put in words is returned.
func (cn *console) previewBest(ctx context.Context, p web.Page, showID int64, f *web.CounterForm) (int, error) {
	n, ok := bestCount(p, f)
	if !ok {
		return http.StatusUnprocessableEntity, nil
	}
	c, err := cn.Engine.PreviewBest(ctx, core.BestPreview{ShowID: showID, Count: n, Category: f.Best.Category, Together: !f.Best.Apart})
	if err != nil {
		return bestRefusal(p, err, f)
	}
	f.Seats = strings.Join(c.SeatIDs, ", ")
	f.Best.Seats = f.Seats
	f.Preview = p.Tf("best.preview", f.Seats)
	if c.Stranded {
		f.Preview += " " + p.T("best.stranded")
	}
	return http.StatusOK, nil
}

// bestRefusal puts why no best seats were found in f.BestError and
// answers the status of a page saying so; an error it cannot put in words
// is returned.
func bestRefusal(p web.Page, err error, f *web.CounterForm) (int, error) {
	var ce *core.Error
	switch {
	case !errors.As(err, &ce):
		return 0, err
	case errors.Is(err, core.ErrNotEnoughSeats):
		left := []string{p.T("best.err_none")}
		ls, _ := ce.Left.([]core.SeatsLeft)
		for _, l := range ls {
			left = append(left, p.Tf("best.left", cmp.Or(l.Category, "–"), l.Free, l.Together))
		}
		f.BestError = strings.Join(left, " ")
		return http.StatusConflict, nil
	case ce.Kind == core.KindInvalid:
		f.BestError = ce.Message
		return http.StatusUnprocessableEntity, nil
	}
	return 0, err
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
		if key, ok := counterRefusal(err); ok {
			d.PayError = p.T(key)
			return render(c, http.StatusConflict, web.OrderPage(p, d))
		}
		switch {
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

// counterRefusals are the counter payment's refusals a clerk can act on,
// with the catalog key that says so.
var counterRefusals = []struct {
	err error
	key string
}{
	{core.ErrHoldEnded, "counter.err_ended"},
	{core.ErrOnlineOrder, "counter.err_online"},
	{core.ErrNoOpenShift, "counter.err_no_shift"},
	{core.ErrShiftCurrency, "counter.err_shift_currency"},
}

// counterRefusal is the catalog key of err when it is one of them.
func counterRefusal(err error) (string, bool) {
	for _, r := range counterRefusals {
		if errors.Is(err, r.err) {
			return r.key, true
		}
	}
	return "", false
}

// ticket is a paid order's printable ticket, as an A6 card or an 80 mm
// receipt, and after it each seat's own ticket.
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
	seatTickets, err := cn.Engine.Store().SeatTickets(ctx, no)
	if err != nil {
		return err
	}
	if d.Cards, err = web.SeatCards(d.Seats, seatTickets); err != nil {
		return err
	}
	return render(c, http.StatusOK, web.TicketPage(cn.page(c, "ticket.title", web.NavOrders), d))
}

// counterRoutes mounts the counter sale: hold from the seat map, take the
// payment on the order page, print the ticket.
func (cn *console) counterRoutes(g *echo.Group) {
	sell := cn.requireRole(access.ActCounterSale)
	g.POST("/shows/:id/counter", cn.counterHold, sell)
	g.POST("/shows/:id/counter/best", cn.counterBest, sell)
	g.POST("/shows/:id/counter/quick", cn.counterQuick, sell)
	g.POST("/orders/:no/pay", cn.takePayment, sell)
	g.GET("/orders/:no/ticket", cn.ticket, cn.requireRole(access.ActView))
}
