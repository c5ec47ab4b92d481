package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/web"
)

// exchangeRefusals are the refusals an exchange form shows as a message
// (web catalog "exchange.err_<code>"), not an error page.
var exchangeRefusals = []*core.Error{core.ErrInvalid, core.ErrSeatUnavailable, core.ErrSeatsNotInOrder,
	core.ErrOrderNotPaid, core.ErrAlreadyRefunded, core.ErrRefundPending, core.ErrDifferenceUnpaid,
	core.ErrExchangeNeedsApproval, core.ErrNoOpenShift, core.ErrShiftCurrency, core.ErrSalesEnded, core.ErrShowCancelled}

// exchangeSeats moves seats of a paid order to others at the counter
// (core/exchange.go): a difference to pay is taken in the tender chosen,
// into the clerk's till; one to give back goes back in the order's.
func (cn *console) exchangeSeats(c echo.Context) error {
	d, err := cn.orderData(c)
	if err != nil {
		return err
	}
	f, err := c.FormParams()
	if err != nil {
		return err
	}
	// Kept as typed, so a refused form shows the clerk's own entries.
	d.ExchangeFrom, d.ExchangeTo = f["from"], strings.TrimSpace(f.Get("to"))
	d.ExchangeTender, d.ExchangeReference = f.Get("tender"), strings.TrimSpace(f.Get("reference"))
	d.ExchangeReason = strings.TrimSpace(f.Get("reason"))
	to := seatIDList(d.ExchangeTo)
	_, err = cn.exchanges.Exchange(c.Request().Context(), core.ExchangeRequest{OrderNo: d.Order.OrderNo,
		From: d.ExchangeFrom, To: to, Reason: d.ExchangeReason, Tender: core.Tender(d.ExchangeTender),
		Reference: d.ExchangeReference, Actor: core.ActorStaffPrefix + sessionOf(c).staff.Username, Audit: staffAction(c)})
	for _, r := range exchangeRefusals {
		if errors.Is(err, r) {
			d.ExchangeError = "exchange.err_" + r.Code
			status := http.StatusConflict
			if r == core.ErrInvalid {
				status = http.StatusUnprocessableEntity
			}
			return render(c, status, web.OrderPage(cn.page(c, "order.title", web.NavHolds), d))
		}
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/orders/"+d.Order.OrderNo+"?outcome="+web.OutcomeSeatsExchanged))
}
