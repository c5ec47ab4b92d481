package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

// editShowRequest is the body of PATCH /shows/{id}: a field left out keeps
// its value; sales_end "" sells until the start again.
type editShowRequest struct {
	Name     *string `json:"name"`
	Venue    *string `json:"venue"`
	StartsAt *string `json:"starts_at"`
	SalesEnd *string `json:"sales_end"`
}

// handleEditShow changes a show's name, venue, start and sales end before
// its first order (409 show_on_sale after, show_cancelled once cancelled);
// 400 naming the field at fault.
func (s *Server) handleEditShow(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	var req editShowRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	p := core.ShowPatch{Name: req.Name, Venue: req.Venue}
	for _, f := range []struct {
		field string
		in    *string
		out   **time.Time
	}{{"starts_at", req.StartsAt, &p.StartsAt}, {"sales_end", req.SalesEnd, &p.SalesEnd}} {
		if f.in == nil {
			continue
		}
		t, err := parseTime(f.field, *f.in)
		if err != nil {
			return err
		}
		*f.out = &t
	}
	if _, err := s.engine.EditShow(c.Request().Context(), id, p); err != nil {
		return err
	}
	return s.writeShow(c, http.StatusOK, id)
}

// handlePublishShow puts a draft show on sale (409 show_cancelled).
func (s *Server) handlePublishShow(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	if _, err := s.engine.PublishShow(c.Request().Context(), id); err != nil {
		return err
	}
	return s.writeShow(c, http.StatusOK, id)
}
