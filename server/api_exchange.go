package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

type exchangeSeatsRequest struct {
	From   []string `json:"from"`
	To     []string `json:"to"`
	Reason string   `json:"reason"`
	// PaymentReference names the storefront's charge for the difference
	// when the new seats cost more; required then.
	PaymentReference string `json:"payment_reference"`
}

type exchangeSeatsResponse struct {
	Order           orderJSON   `json:"order"`
	From            []string    `json:"from"`
	To              []string    `json:"to"`
	DifferenceCents int64       `json:"difference_cents"`
	PaymentTxnID    string      `json:"payment_txn_id,omitempty"`
	Refund          *refundJSON `json:"refund,omitempty"`
}

// handleExchangeSeats moves seats of a paid order to others of its show in
// one transaction (core/exchange.go): 200 with the order as it stands, the
// price difference, and the payment or refund row that carried it. A
// difference to pay needs payment_reference (the key vouches for the
// money); one to give back above SEATFLOW_REFUND_APPROVAL_CENTS is refused
// (exchange_needs_approval): a key is never the second person.
func (s *Server) handleExchangeSeats(c echo.Context) error {
	var req exchangeSeatsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	no, err := s.orderParam(c)
	if err != nil {
		return err
	}
	by := apiAction(c)
	out, err := s.exchanges.Exchange(c.Request().Context(), core.ExchangeRequest{OrderNo: no, From: req.From, To: req.To,
		Reason: req.Reason, Reference: req.PaymentReference, Actor: by.Staff, Audit: by})
	if err != nil {
		return err
	}
	res := exchangeSeatsResponse{Order: newOrderJSON(out.Order), From: req.From, To: req.To, DifferenceCents: out.DifferenceCents}
	if out.Payment != nil {
		res.PaymentTxnID = out.Payment.TxnID
	}
	if r := out.Refund; r != nil {
		res.Refund = &refundJSON{ID: r.ID, State: string(r.State), AmountCents: r.AmountCents, Reason: r.Reason,
			Reference: r.Reference, Actor: r.Actor, CreatedAt: rfc3339(r.CreatedAt)}
	}
	return c.JSON(http.StatusOK, res)
}
