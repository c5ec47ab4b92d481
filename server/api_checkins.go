package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/checkin"
)

type checkinRequest struct {
	Code    string   `json:"code"`     // the QR's order code, or
	OrderNo string   `json:"order_no"` // the order number
	Gate    string   `json:"gate"`
	ShowID  int64    `json:"show_id"`  // optional: the show this gate admits to
	SeatIDs []string `json:"seat_ids"` // optional: part of the order
}

type checkinResponse struct {
	Result        string    `json:"result"`
	Order         orderJSON `json:"order"`
	Seats         []string  `json:"seats"`
	AdmittedCount int       `json:"admitted_count"`
	SeatCount     int       `json:"seat_count"`
	At            string    `json:"at"`
}

type undoCheckinRequest struct {
	Code    string   `json:"code"`
	OrderNo string   `json:"order_no"`
	SeatIDs []string `json:"seat_ids"`
}

type undoCheckinResponse struct {
	Result string             `json:"result"`
	Undone []checkinEntryJSON `json:"undone"`
}

type checkinEntryJSON struct {
	SeatID string `json:"seat_id"`
	At     string `json:"at"`
	Gate   string `json:"gate"`
	By     string `json:"by"`
}

// handleCheckin admits a scanned ticket: 200 admitted, or 409
// already_checked_in (the first scan in error.detail.first) or not_valid
// (error.detail.reason). The key is who scanned.
func (s *Server) handleCheckin(c echo.Context) error {
	var req checkinRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	a, err := s.checkins.Admit(c.Request().Context(), checkin.Request{Code: req.Code, OrderNo: req.OrderNo,
		Gate: req.Gate, ShowID: req.ShowID, SeatIDs: req.SeatIDs, Actor: apiActor(c)})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, checkinResponse{Result: checkin.ResultAdmitted, Order: newOrderJSON(a.Order),
		Seats: a.Seats, AdmittedCount: a.AdmittedCount, SeatCount: len(a.Order.SeatIDs), At: rfc3339(a.At)})
}

// handleUndoCheckin clears the admission of an order's seats (all, or
// seat_ids) so they admit once more: 200 with the scans undone, 409
// not_checked_in when none was admitted. Audited under the key.
func (s *Server) handleUndoCheckin(c echo.Context) error {
	var req undoCheckinRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	undone, err := s.checkins.Undo(c.Request().Context(), req.Code, req.OrderNo, req.SeatIDs, apiAction(c))
	if err != nil {
		return err
	}
	out := undoCheckinResponse{Result: "undone", Undone: make([]checkinEntryJSON, len(undone))}
	for i, t := range undone {
		out.Undone[i] = checkinEntryJSON{SeatID: t.SeatID, At: rfc3339(t.At), Gate: t.Gate, By: t.Actor}
	}
	return c.JSON(http.StatusOK, out)
}

type syncCheckinsRequest struct {
	Gate   string                `json:"gate"`
	ShowID int64                 `json:"show_id"` // optional: the show this gate admits to
	Scans  []checkin.OfflineScan `json:"scans"`
}

type syncCheckinsResponse struct {
	Results []checkin.Synced `json:"results"`
}

// handleTicketList is a show's ticket list for an offline gate: codes as
// salted hashes, seats, state and admissions (core/checkin/offline.go).
func (s *Server) handleTicketList(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	return ticketList(c, s.engine, s.checkins, id)
}

// ticketList answers show's ticket list (404 for no such show), for the
// API and the console's scan page alike.
func ticketList(c echo.Context, e *core.Engine, desk *checkin.Desk, show int64) error {
	ctx := c.Request().Context()
	if _, err := e.Store().Show(ctx, show); err != nil {
		return err
	}
	l, err := desk.List(ctx, show)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, l)
}

// handleSyncCheckins records what an offline gate admitted: 200 with one
// result per scan (admitted, double_entry with its case, not_valid).
func (s *Server) handleSyncCheckins(c echo.Context) error {
	var req syncCheckinsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	res, err := s.checkins.Sync(c.Request().Context(), checkin.SyncRequest{Gate: req.Gate, ShowID: req.ShowID,
		Actor: apiActor(c), Scans: req.Scans})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, syncCheckinsResponse{Results: res})
}
