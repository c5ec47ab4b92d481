package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/web"
)

// counterQuick sells the best N seats of the counter's best form in one
// step, paid in the tender of the button pressed (core.Counter.QuickSale),
// and opens the paid order, its ticket a click away. A refusal (no seats
// left, no open shift) is said on the form: htmx gets the counter's forms
// (200, as counterBest), a plain post the whole page.
func (cn *console) counterQuick(c echo.Context) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	p := cn.page(c, "shows.title", web.NavShows)
	f := bestCounterForm(c)
	n, ok := bestCount(p, &f)
	if !ok {
		return cn.renderCounter(c, p, id, f, http.StatusUnprocessableEntity)
	}
	o, res, err := cn.counter.QuickSale(c.Request().Context(), core.QuickSale{ShowID: id, Count: n, Category: f.Best.Category,
		Together: !f.Best.Apart, Customer: core.Customer{Name: f.Name, Email: f.Email, Phone: f.Phone},
		Tender: core.Tender(c.FormValue("tender")), Clerk: sessionOf(c).staff.Username})
	if err == nil {
		return cn.quickSold(c, o, res)
	}
	status, err := quickRefusal(p, err, &f)
	if err != nil {
		return err
	}
	return cn.renderCounter(c, p, id, f, status)
}

// quickSold audits a quick sale as the hold and the payment it is, and
// opens the order (htmx follows HX-Redirect).
func (cn *console) quickSold(c echo.Context, o core.Order, res core.PaymentResult) error {
	sh, err := cn.Engine.Store().Show(c.Request().Context(), o.ShowID)
	if err != nil {
		return err
	}
	cn.audit(c, core.AuditEntry{Action: core.AuditCounterHold, Target: "order:" + o.OrderNo, Detail: map[string]any{
		"show_id": o.ShowID, "seat_ids": o.SeatIDs, "amount_cents": o.AmountCents, "currency": sh.Currency, "code": o.Code,
		"quick_sale": true}})
	cn.audit(c, core.AuditEntry{Action: core.AuditCounterPayment, Target: "order:" + o.OrderNo, Detail: map[string]any{
		"tender": c.FormValue("tender"), "amount_cents": o.AmountCents, "currency": sh.Currency, "result": string(res),
		"quick_sale": true}})
	outcome := web.OutcomePaid
	if res != core.PaymentApplied {
		outcome = web.OutcomePaidLate
	}
	to := web.URL("/orders/" + o.OrderNo + "?outcome=" + outcome)
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", to)
		return c.NoContent(http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// quickRefusal words a refused quick sale on f: what best-available says,
// or the till's refusals; an error it cannot put in words is returned.
func quickRefusal(p web.Page, err error, f *web.CounterForm) (int, error) {
	if key, ok := counterRefusal(err); ok {
		f.BestError = p.T(key)
		return http.StatusConflict, nil
	}
	if errors.Is(err, core.ErrSeatUnavailable) {
		f.BestError = p.T("best.err_none")
		return http.StatusConflict, nil
	}
	return bestRefusal(p, err, f)
}
