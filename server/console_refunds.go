package server

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/web"
)

// refundOrder refunds a paid order from its page, with a required reason.
// Ops and admin refund at any amount; box office and managers refund up to
// SEATFLOW_REFUND_APPROVAL_CENTS and above it leave a request for ops. An
// order that is no longer paid (refunded meanwhile, another request open)
// is a message on the form, not an error page.
func (cn *console) refundOrder(c echo.Context) error {
	d, err := cn.orderData(c)
	if err != nil {
		return err
	}
	// Kept as typed, so a refused form shows the clerk's own text to fix.
	d.RefundReason = strings.TrimSpace(c.FormValue("reason"))
	d.RefundReference = strings.TrimSpace(c.FormValue("reference"))
	// Seats ticked: a partial refund of those (core/refundseats.go).
	if f, err := c.FormParams(); err == nil {
		d.RefundSeats = f["seat_ids"]
	}
	switch {
	case d.RefundReason == "":
		d.RefundError = "refund.err_reason"
	case utf8.RuneCountInString(d.RefundReason) > core.MaxRefundReasonLen:
		d.RefundError, d.RefundErrorArgs = "refund.err_reason_long",
			[]any{core.MaxRefundReasonLen, utf8.RuneCountInString(d.RefundReason)}
	case utf8.RuneCountInString(d.RefundReference) > core.MaxRefundReferenceLen:
		d.RefundError, d.RefundErrorArgs = "refund.err_reference_long",
			[]any{core.MaxRefundReferenceLen, utf8.RuneCountInString(d.RefundReference)}
	}
	if d.RefundError != "" {
		return render(c, http.StatusUnprocessableEntity, web.OrderPage(cn.page(c, "order.title", web.NavHolds), d))
	}
	s := sessionOf(c)
	out, err := cn.Refunds.Refund(c.Request().Context(), core.RefundRequest{OrderNo: d.Order.OrderNo,
		Reason: d.RefundReason, Reference: d.RefundReference, Actor: core.ActorStaffPrefix + s.staff.Username,
		Audit: staffAction(c), SeatIDs: d.RefundSeats})
	if key := refundConflict(err); key != "" {
		d.RefundError = key
		return render(c, http.StatusConflict, web.OrderPage(cn.page(c, "order.title", web.NavHolds), d))
	} else if err != nil {
		return err
	}
	outcome := web.OutcomeRefunded
	switch {
	case out.Pending:
		outcome = web.OutcomeRefundRequested
	case out.Order.Status == core.StatusPaid:
		outcome = web.OutcomeSeatsRefunded
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/orders/"+d.Order.OrderNo+"?outcome="+outcome))
}

// approveRefund runs a request for a refund (ops and admin).
func (cn *console) approveRefund(c echo.Context) error {
	req, err := cn.refundParam(c)
	if err != nil {
		return err
	}
	s := sessionOf(c)
	_, err = cn.Refunds.Approve(c.Request().Context(), req.ID, core.ActorStaffPrefix+s.staff.Username, staffAction(c))
	return cn.decided(c, req, web.OutcomeRefunded, err)
}

// rejectRefund closes a request for a refund with a required note; the
// order stays paid.
func (cn *console) rejectRefund(c echo.Context) error {
	req, err := cn.refundParam(c)
	if err != nil {
		return err
	}
	why := strings.TrimSpace(c.FormValue("note"))
	if n := utf8.RuneCountInString(why); why == "" || n > core.MaxRefundReasonLen {
		d, err := cn.orderDataOf(c, req.OrderNo)
		if err != nil {
			return err
		}
		d.RefundError = "refund.err_note"
		if n > 0 {
			d.RefundError, d.RefundErrorArgs = "refund.err_note_long", []any{core.MaxRefundReasonLen, n}
		}
		return render(c, http.StatusUnprocessableEntity, web.OrderPage(cn.page(c, "order.title", web.NavHolds), d))
	}
	s := sessionOf(c)
	_, err = cn.Refunds.Reject(c.Request().Context(), req.ID, core.ActorStaffPrefix+s.staff.Username, why, staffAction(c))
	return cn.decided(c, req, web.OutcomeRefundRejected, err)
}

// decided shows the order after an approval or rejection (audited by the
// workflow in its transaction): a request decided meanwhile (or an order no
// longer paid) is a message on its page.
func (cn *console) decided(c echo.Context, req core.Refund, outcome string, err error) error {
	if key := refundConflict(err); key != "" {
		d, derr := cn.orderDataOf(c, req.OrderNo)
		if derr != nil {
			return derr
		}
		d.RefundError = key
		return render(c, http.StatusConflict, web.OrderPage(cn.page(c, "order.title", web.NavHolds), d))
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/orders/"+req.OrderNo+"?outcome="+outcome))
}

func (cn *console) refundParam(c echo.Context) (core.Refund, error) {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return core.Refund{}, err
	}
	return cn.Refunds.Store().Refund(c.Request().Context(), id)
}

// refundConflict is the catalog key of a refund the order's state refused,
// or "" for any other error.
func refundConflict(err error) string {
	for _, e := range []*core.Error{core.ErrAlreadyRefunded, core.ErrOrderNotPaid, core.ErrRefundPending, core.ErrRefundDecided, core.ErrSeatsNotInOrder, core.ErrSelfApproval, core.ErrLinkedApproval} {
		if errors.Is(err, e) {
			return "refund.err_" + e.Code
		}
	}
	return ""
}
