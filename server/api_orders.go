package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
)

type placeOrderRequest struct {
	UserID  int64    `json:"user_id"`
	ShowID  int64    `json:"show_id"`
	SeatIDs []string `json:"seat_ids"`
	// BestAvailable asks the engine to choose the seats (instead of
	// SeatIDs: exactly one of the two).
	BestAvailable *bestAvailableJSON `json:"best_available"`
	Customer      *core.Customer     `json:"customer"` // optional
	// Admission is the waiting room's grant (api_queue.go), needed while
	// the show's queue is engaged.
	Admission string `json:"admission"`
}

type bestAvailableJSON struct {
	Count      int    `json:"count"`
	Category   string `json:"category"`
	Together   *bool  `json:"together"` // default true
	Accessible bool   `json:"accessible"`
}

// placedOrderJSON is a new order; StrandedSingle, for best available,
// says its seats left a single seat alone because no choice avoided it.
type placedOrderJSON struct {
	orderJSON
	StrandedSingle bool `json:"stranded_single,omitempty"`
}

type cancelOrderRequest struct {
	UserID int64 `json:"user_id"`
}

// extendOrderRequest asks for a longer hold. Reason is optional: the API's
// caller (the ticketing front end) knows why; it is recorded on the event.
type extendOrderRequest struct {
	UserID  int64  `json:"user_id"` // the order's user, as for cancel
	Minutes int    `json:"minutes"`
	Reason  string `json:"reason"`
}

// Limits of one extension through the API (the engine bounds the total).
const (
	maxExtendMinutes = 120
	maxReasonLen     = 500
)

type orderJSON struct {
	OrderNo      string         `json:"order_no"`
	Code         string         `json:"code"`
	Status       string         `json:"status"`
	ShowID       int64          `json:"show_id"`
	UserID       int64          `json:"user_id"`
	SeatIDs      []string       `json:"seat_ids"`
	AmountCents  int64          `json:"amount_cents"`
	CreatedAt    string         `json:"created_at"`
	ExpireTime   string         `json:"expire_time"`
	ClosedAt     string         `json:"closed_at,omitempty"`
	CancelReason string         `json:"cancel_reason,omitempty"`
	PaidTxnID    string         `json:"paid_txn_id,omitempty"`
	Customer     *core.Customer `json:"customer,omitempty"`
	// Source is "waitlist" for a waiting-list offer; absent otherwise.
	Source string `json:"source,omitempty"`
}

type orderDetailJSON struct {
	orderJSON
	// Tickets are a paid order's seats with their own ticket codes (each
	// admits its seat only); absent for an order that is not paid.
	Tickets []core.SeatTicket `json:"tickets,omitempty"`
	Events  []eventJSON       `json:"events"`
}

type eventJSON struct {
	At     string         `json:"at"`
	Kind   string         `json:"kind"`
	Detail map[string]any `json:"detail"`
}

func newOrderJSON(o core.Order) orderJSON {
	j := orderJSON{OrderNo: o.OrderNo, Code: o.Code, Status: o.Status.String(), ShowID: o.ShowID, UserID: o.UserID,
		SeatIDs: o.SeatIDs, AmountCents: o.AmountCents, CreatedAt: rfc3339(o.CreatedAt),
		ExpireTime: rfc3339(o.ExpireAt), CancelReason: o.CancelReason, PaidTxnID: o.PaidTxnID, Source: o.Source}
	if j.SeatIDs == nil {
		j.SeatIDs = []string{}
	}
	if !o.ClosedAt.IsZero() {
		j.ClosedAt = rfc3339(o.ClosedAt)
	}
	if o.Customer != (core.Customer{}) {
		j.Customer = &o.Customer
	}
	return j
}

// bindJSON reads and strictly decodes the request body into v.
func bindJSON(c echo.Context, v any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	if err := requireJSONType(c, body); err != nil {
		return err
	}
	return decodeJSON(body, v)
}

// handlePlaceOrder holds seats for a user; the engine validates the request
// before anything is written.
func (s *Server) handlePlaceOrder(c echo.Context) error {
	var req placeOrderRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	r := core.PlaceRequest{UserID: req.UserID, ShowID: req.ShowID, SeatIDs: req.SeatIDs, ClientIP: clientIPOf(c)}
	if req.Customer != nil {
		r.Customer = *req.Customer
	}
	ctx := c.Request().Context()
	// The waiting room's check stays here, before the engine: a signed
	// admission verified with no store call but the single-use claim.
	var endAdmission func(context.Context, bool) error
	if s.room != nil && s.room.Required(req.ShowID) {
		end, err := s.room.BeginPlacement(ctx, req.ShowID, req.UserID, req.Admission, time.Now())
		if err != nil {
			return err
		}
		endAdmission = end
	}
	start := time.Now()
	var (
		o        core.Order
		stranded bool
		err      error
	)
	if b := req.BestAvailable; b != nil {
		o, stranded, err = s.engine.PlaceBest(ctx, core.BestAvailableRequest{PlaceRequest: r, Count: b.Count,
			Category: b.Category, Together: b.Together == nil || *b.Together, Accessible: b.Accessible})
	} else {
		o, err = s.engine.Place(ctx, r)
	}
	if s.room != nil && decided(err) {
		s.room.Observe(time.Since(start))
	}
	if endAdmission != nil {
		// After the placement, whatever its answer: a used admission is
		// refused from now on, a 409 leaves it usable. Should the store
		// fail, the order stands and the claim lapses by itself.
		if err := endAdmission(context.WithoutCancel(ctx), err == nil); err != nil {
			s.logger.WarnContext(ctx, "end the claim of an admission", "show", req.ShowID, "user", req.UserID, "err", err)
		}
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/api/v1/orders/"+o.OrderNo)
	return c.JSON(http.StatusCreated, placedOrderJSON{orderJSON: newOrderJSON(o), StrandedSingle: stranded})
}

// decided says whether a placement got an answer from the engine's stores
// (placed, or a seat taken): what the admission controller's latency
// objective is about. Refusals of bad input never reach them.
func decided(err error) bool {
	var ce *core.Error
	return err == nil || errors.As(err, &ce) && ce.Kind == core.KindConflict
}

// orderParam is the order the URL names, by order number or short code.
func (s *Server) orderParam(c echo.Context) (string, error) {
	return s.engine.OrderNo(c.Request().Context(), c.Param("order_no"))
}

// handleGetOrder returns an order with its whole timeline and, once paid,
// its seats' own ticket codes.
func (s *Server) handleGetOrder(c echo.Context) error {
	no, err := s.orderParam(c)
	if err != nil {
		return err
	}
	o, events, err := s.engine.Order(c.Request().Context(), no)
	if err != nil {
		return err
	}
	out := orderDetailJSON{orderJSON: newOrderJSON(o), Events: make([]eventJSON, len(events))}
	if o.Status == core.StatusPaid {
		if out.Tickets, err = s.engine.Store().SeatTickets(c.Request().Context(), no); err != nil {
			return err
		}
	}
	for i, ev := range events {
		out.Events[i] = eventJSON{At: rfc3339(ev.At), Kind: ev.Kind, Detail: apiEventDetail(ev.Detail)}
	}
	return c.JSON(http.StatusOK, out)
}

// apiStaff is every member of staff to an API reader.
const apiStaff = "staff"

// apiEventDetail is an event's detail for an API reader: a member of staff
// (staff:<name> as actor, requester, approver) appears as "staff". Who at
// the venue did what is the console's and the audit log's to show, not
// every orders:read key's.
func apiEventDetail(d map[string]any) map[string]any {
	out := make(map[string]any, len(d))
	for k, v := range d {
		if s, ok := v.(string); ok {
			if name, ok := strings.CutPrefix(s, core.ActorStaffPrefix); ok && access.ValidUsername(name) == nil {
				v = apiStaff
			}
		}
		out[k] = v
	}
	return out
}

// handleCancelOrder is the customer's cancel. Repeating it succeeds; another
// user's order is "not found", so order numbers cannot be probed.
func (s *Server) handleCancelOrder(c echo.Context) error {
	var req cancelOrderRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.UserID <= 0 {
		return core.Invalidf("user_id must be a positive integer")
	}
	no, err := s.orderParam(c)
	if err != nil {
		return err
	}
	o, err := s.engine.Cancel(c.Request().Context(), no, req.UserID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"order_no": o.OrderNo, "status": o.Status.String()})
}

// handleExtendOrder pushes a pending order's expiry later: 200 with the
// order; 409 order_not_pending (or hold_expired) when it can no longer be
// held; 422 hold_limit past the configured longest hold.
func (s *Server) handleExtendOrder(c echo.Context) error {
	var req extendOrderRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.UserID <= 0 {
		return core.Invalidf("user_id must be a positive integer")
	}
	if req.Minutes < 1 || req.Minutes > maxExtendMinutes {
		return core.Invalidf("minutes must be a whole number from 1 to %d", maxExtendMinutes)
	}
	if utf8.RuneCountInString(req.Reason) > maxReasonLen {
		return core.Invalidf("reason may have at most %d characters", maxReasonLen)
	}
	no, err := s.orderParam(c)
	if err != nil {
		return err
	}
	o, err := s.engine.ExtendForCustomer(c.Request().Context(), no, req.UserID, time.Duration(req.Minutes)*time.Minute,
		apiActor(c), req.Reason)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newOrderJSON(o))
}
