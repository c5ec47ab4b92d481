package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

// The waiting list's API (core/waitlist.go): a manager opens a show's list,
// a storefront puts its buyers on it and polls their entries; the seats an
// ended hold lets go reach the next entry as a pending order (the offer)
// without ever going back on sale (core/handoff.go). An entry's name is an
// unguessable bearer token, as an order number is.

type waitlistSettingsRequest struct {
	Enabled  bool   `json:"enabled"`
	JoinWhen string `json:"join_when"`
	// OfferTTLSeconds is how long an offer's order holds its seats; 0 or
	// absent is 30 minutes.
	OfferTTLSeconds int64 `json:"offer_ttl_seconds"`
}

type waitlistSettingsJSON struct {
	ShowID          int64  `json:"show_id"`
	Enabled         bool   `json:"enabled"`
	JoinWhen        string `json:"join_when"`
	OfferTTLSeconds int64  `json:"offer_ttl_seconds"`
	UpdatedAt       string `json:"updated_at,omitempty"`
}

func newWaitlistSettingsJSON(s core.WaitlistSettings) waitlistSettingsJSON {
	j := waitlistSettingsJSON{ShowID: s.ShowID, Enabled: s.Enabled, JoinWhen: s.JoinWhen,
		OfferTTLSeconds: int64(s.OfferTTL / time.Second)}
	if !s.UpdatedAt.IsZero() {
		j.UpdatedAt = rfc3339(s.UpdatedAt)
	}
	return j
}

type joinWaitlistRequest struct {
	UserID   int64          `json:"user_id"`
	Count    int            `json:"count"`
	Category string         `json:"category"`
	Together bool           `json:"together"`
	Customer *core.Customer `json:"customer"`
}

type waitEntryJSON struct {
	Entry    string         `json:"entry"`
	ShowID   int64          `json:"show_id"`
	UserID   int64          `json:"user_id"`
	Count    int            `json:"count"`
	Category string         `json:"category,omitempty"`
	Together bool           `json:"together"`
	State    string         `json:"state"`
	Position int            `json:"position,omitempty"`
	JoinedAt string         `json:"joined_at"`
	Offer    *waitOfferJSON `json:"offer,omitempty"`
}

// waitOfferJSON is the order an entry was offered: pay it, as any order,
// before expires_at.
type waitOfferJSON struct {
	OrderNo     string   `json:"order_no"`
	Code        string   `json:"code"`
	SeatIDs     []string `json:"seat_ids"`
	AmountCents int64    `json:"amount_cents"`
	ExpiresAt   string   `json:"expires_at"`
	Status      string   `json:"status"`
}

func newWaitEntryJSON(v core.WaitEntryView) waitEntryJSON {
	en := v.Entry
	j := waitEntryJSON{Entry: en.Token, ShowID: en.ShowID, UserID: en.UserID, Count: en.Count, Category: en.Category,
		Together: en.Together, State: string(v.State), Position: v.Position, JoinedAt: rfc3339(en.Created)}
	if o := v.Offer; o != nil && v.State != core.WaitWithdrawn {
		j.Offer = &waitOfferJSON{OrderNo: o.OrderNo, Code: o.Code, SeatIDs: o.SeatIDs, AmountCents: o.AmountCents,
			ExpiresAt: rfc3339(o.ExpireAt), Status: o.Status.String()}
	}
	return j
}

// handlePutWaitlist sets a show's list: 200 with the settings.
func (s *Server) handlePutWaitlist(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	var req waitlistSettingsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.OfferTTLSeconds < 0 {
		return core.Invalidf("offer_ttl_seconds must not be negative")
	}
	set, err := s.engine.SetWaitlist(c.Request().Context(), core.WaitlistSettings{ShowID: id, Enabled: req.Enabled,
		JoinWhen: req.JoinWhen, OfferTTL: time.Duration(req.OfferTTLSeconds) * time.Second})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newWaitlistSettingsJSON(set))
}

// handleGetWaitlist reads a show's list settings.
func (s *Server) handleGetWaitlist(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	set, err := s.engine.Waitlist(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newWaitlistSettingsJSON(set))
}

// handleJoinWaitlist puts a buyer on a show's list: 201 with the new entry,
// 200 with the buyer's entry when there is one already.
func (s *Server) handleJoinWaitlist(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	var req joinWaitlistRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.UserID <= 0 {
		return core.Invalidf("user_id must be a positive integer")
	}
	j := core.WaitJoin{ShowID: id, UserID: req.UserID, Count: req.Count, Category: req.Category,
		Together: req.Together, AddedBy: apiActor(c)}
	if req.Customer != nil {
		j.Customer = *req.Customer
	}
	v, created, err := s.engine.JoinWaitlist(c.Request().Context(), j)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, newWaitEntryJSON(v))
}

// handleGetWaitEntry says where an entry stands, and its offer once it has one.
func (s *Server) handleGetWaitEntry(c echo.Context) error {
	v, err := s.engine.WaitEntry(c.Request().Context(), c.Param("entry"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newWaitEntryJSON(v))
}

// handleWithdrawWaitEntry takes an entry off the list; an offer still
// pending is cancelled and its seats go to the next entry. 200 with the
// entry (accepted when its offer was already paid); a repeat is a success.
func (s *Server) handleWithdrawWaitEntry(c echo.Context) error {
	v, err := s.engine.WithdrawWaitEntry(c.Request().Context(), c.Param("entry"), apiActor(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newWaitEntryJSON(v))
}
