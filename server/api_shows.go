package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

type showJSON struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Venue    string `json:"venue"`
	StartsAt string `json:"starts_at"`
	Rows     int    `json:"rows"`
	Cols     int    `json:"cols"`
}

type seatJSON struct {
	SeatID     string `json:"seat_id"`
	Row        int    `json:"row"`
	Col        int    `json:"col"`
	PriceCents int64  `json:"price_cents"`
	State      string `json:"state"` // available | locked | sold
}

// handleShows lists every show.
func (s *Server) handleShows(c echo.Context) error {
	shows, err := s.engine.Shows(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]showJSON, len(shows))
	for i, sh := range shows {
		out[i] = showJSON{ID: sh.ID, Name: sh.Name, Venue: sh.Venue, StartsAt: rfc3339(sh.StartsAt),
			Rows: sh.Rows, Cols: sh.Cols}
	}
	return c.JSON(http.StatusOK, map[string]any{"shows": out})
}

// handleSeats returns a show's seat plan with each seat's live state.
func (s *Server) handleSeats(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return core.Invalidf("show id in the path must be a positive integer")
	}
	seats, err := s.engine.SeatMap(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out := make([]seatJSON, len(seats))
	for i, st := range seats {
		out[i] = seatJSON{SeatID: st.SeatID, Row: st.Row, Col: st.Col, PriceCents: st.PriceCents,
			State: st.State.String()}
	}
	return c.JSON(http.StatusOK, map[string]any{"seats": out})
}

// rfc3339 formats API times: UTC, millisecond precision (what the DB keeps).
func rfc3339(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
