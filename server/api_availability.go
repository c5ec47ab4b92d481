package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// availabilityJSON is GET /api/v1/shows/{id}/availability: the seats that
// cannot be placed now, for a storefront that holds the plan (GET
// .../seats once, or from its CDN) and refreshes only this in a rush.
type availabilityJSON struct {
	ShowID int64    `json:"show_id"`
	Seats  int      `json:"seats"`
	Free   int      `json:"free"`
	Taken  []string `json:"taken"`
}

func (s *Server) handleAvailability(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	a, err := s.engine.Availability(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, availabilityJSON{ShowID: id, Seats: a.Seats, Free: a.Seats - len(a.Taken), Taken: a.Taken})
}
