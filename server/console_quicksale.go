package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

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
	ctx := c.Request().Context()
	p := cn.page(c, "shows.title", web.NavShows)
	f := web.CounterForm{Name: strings.TrimSpace(c.FormValue("name")), Email: strings.TrimSpace(c.FormValue("email")),
		Phone: strings.TrimSpace(c.FormValue("phone")),
		Best:  web.BestForm{Count: strings.TrimSpace(c.FormValue("count")), Category: c.FormValue("category"), Apart: c.FormValue("together") == ""}}
	status := http.StatusUnprocessableEntity
	n, err := strconv.Atoi(f.Best.Count)
	if err != nil || n < 1 || n > core.MaxBestCount {
		f.BestError = p.Tf("best.err_count", core.MaxBestCount)
	} else {
		var o core.Order
		var res core.PaymentResult
		o, res, err = cn.counter.QuickSale(ctx, core.QuickSale{ShowID: id, Count: n, Category: f.Best.Category, Together: !f.Best.Apart,
			Customer: core.Customer{Name: f.Name, Email: f.Email, Phone: f.Phone},
			Tender:   core.Tender(c.FormValue("tender")), Clerk: sessionOf(c).staff.Username})
		if err == nil {
			return cn.quickSold(c, o, res)
		}
		if status, err = quickRefusal(p, err, &f); err != nil {
			return err
		}
	}
	var d web.SeatMapData
	if c.Request().Header.Get("HX-Request") == "true" {
		if d.Show, err = cn.Engine.Store().Show(ctx, id); err != nil {
			return err
		}
		if d.Categories, err = cn.Engine.Store().PriceCategories(ctx, id); err != nil {
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
	if c.Request().Header.Get("HX-Request") == "true" {
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
