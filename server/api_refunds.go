package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

type refundOrderRequest struct {
	Reason    string `json:"reason"`
	Reference string `json:"reference"` // the payment provider's refund reference
	// SeatIDs makes it a partial refund of those seats (core/refundseats.go).
	SeatIDs []string `json:"seat_ids"`
}

type refundJSON struct {
	ID          int64  `json:"id"`
	State       string `json:"state"`
	AmountCents int64  `json:"amount_cents"`
	Reason      string `json:"reason"`
	Reference   string `json:"reference,omitempty"`
	Actor       string `json:"actor"`
	CreatedAt   string `json:"created_at"`
	// SeatIDs: the seats a partial refund gives back (or asks to).
	SeatIDs []string `json:"seat_ids,omitempty"`
}

type refundOrderResponse struct {
	Order  orderJSON  `json:"order"`
	Refund refundJSON `json:"refund"`
}

// handleRefundOrder refunds a paid order: 200 with the refunded order and
// the refund row; 409 order_not_paid or already_refunded when it is not
// paid (a second refund, or one racing a cancel, loses here). Above
// SEATFLOW_REFUND_APPROVAL_CENTS it is 202 with a request that staff other
// than the key's minter approve in the console: a key is someone's
// credential, never the second person of four eyes. The key is the refund's
// actor and its audit row names it. With seat_ids it refunds those seats
// only, for their prices; the order stays paid with the rest (409
// seats_not_in_order for a seat it does not hold, so a repeat refunds
// nothing).
func (s *Server) handleRefundOrder(c echo.Context) error {
	var req refundOrderRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	no, err := s.orderParam(c)
	if err != nil {
		return err
	}
	by := apiAction(c)
	out, err := s.refunds.Refund(c.Request().Context(), core.RefundRequest{
		OrderNo: no, Reason: req.Reason, Reference: req.Reference, Actor: by.Staff, Audit: by, SeatIDs: req.SeatIDs})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if out.Pending {
		status = http.StatusAccepted
	}
	r := out.Refund
	return c.JSON(status, refundOrderResponse{Order: newOrderJSON(out.Order), Refund: refundJSON{
		ID: r.ID, State: string(r.State), AmountCents: r.AmountCents, Reason: r.Reason,
		Reference: r.Reference, Actor: r.Actor, CreatedAt: rfc3339(r.CreatedAt), SeatIDs: req.SeatIDs}})
}
