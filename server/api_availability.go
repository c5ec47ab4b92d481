package server

import (
	"context"

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

// handleAvailability is cached like the seat map (show_cache.go): in a
// rush every storefront page reads it, and a build walks every hold.
func (s *Server) handleAvailability(c echo.Context) error {
	return s.cachedShowRead(c, s.availability, func(ctx context.Context, id int64) (any, error) {
		a, err := s.engine.Availability(ctx, id)
		if err != nil {
			return nil, err
		}
		return availabilityJSON{ShowID: id, Seats: a.Seats, Free: a.Seats - len(a.Taken), Taken: a.Taken}, nil
	})
}
