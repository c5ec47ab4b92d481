package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

type showJSON struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Venue    string `json:"venue"`
	StartsAt string `json:"starts_at"`
	Rows     int    `json:"rows"`
	Cols     int    `json:"cols"`
	// Set up through POST /shows (api_shows_admin.go).
	SalesEnd     string     `json:"sales_end,omitempty"`
	Currency     string     `json:"currency"`
	Status       string     `json:"status"` // on_sale | cancelled
	SeatCount    int        `json:"seat_count"`
	Counts       countsJSON `json:"counts"`
	RevenueCents int64      `json:"revenue_cents"`
}

type seatJSON struct {
	SeatID     string `json:"seat_id"`
	Row        int    `json:"row"`
	Col        int    `json:"col"`
	PriceCents int64  `json:"price_cents"`
	State      string `json:"state"` // available | locked | sold | blocked
	Section    string `json:"section"`
	RowLabel   string `json:"row_label"`
	Number     int    `json:"number"`
	Category   string `json:"category"`
	X          int    `json:"x"`
	Y          int    `json:"y"`
}

// handleShows lists every show with its seat counts.
func (s *Server) handleShows(c echo.Context) error {
	shows, err := s.engine.ShowSummaries(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]showJSON, len(shows))
	for i, sh := range shows {
		out[i] = newShowJSON(sh)
	}
	return c.JSON(http.StatusOK, map[string]any{"shows": out})
}

// handleSeats returns a show's seat plan with each seat's live state (at
// most SEATFLOW_SEAT_MAP_MAX_AGE old: show_cache.go).
func (s *Server) handleSeats(c echo.Context) error {
	return s.cachedShowRead(c, s.seatMaps, func(ctx context.Context, id int64) (any, error) {
		seats, err := s.engine.SeatMap(ctx, id)
		if err != nil {
			return nil, err
		}
		out := make([]seatJSON, len(seats))
		for i, st := range seats {
			out[i] = seatJSON{SeatID: st.SeatID, Row: st.Row, Col: st.Col, PriceCents: st.PriceCents,
				State: st.State.String(), Section: st.Section, RowLabel: st.RowLabel, Number: st.Number,
				Category: st.Category, X: st.X, Y: st.Y}
		}
		return map[string]any{"seats": out}, nil
	})
}

// cachedShowRead answers a show's read from cache when it is fresh, and
// builds it otherwise. A fresh read is answered without a slot of the
// limit (limitCached); a build takes one, as it may hold a database
// connection.
func (s *Server) cachedShowRead(c echo.Context, cache *showCache, build func(context.Context, int64) (any, error)) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	if body, ok := cache.fresh(id); ok {
		return c.JSONBlob(http.StatusOK, body)
	}
	if c.Get(ctxNoSlot) != nil {
		done, ok := s.overload.limiter.Acquire()
		if !ok {
			s.overload.shed.WithLabelValues(shedConcurrency).Inc()
			return errOverloaded
		}
		start := time.Now()
		defer func() { done(time.Since(start)) }()
	}
	body, err := cache.get(id, func() (any, error) { return build(c.Request().Context(), id) })
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, body)
}

// ctxNoSlot marks a read let past the limit because it was cached fresh:
// should it have gone stale since, the handler takes a slot before
// building it.
const ctxNoSlot = "seatflow.showread.noslot"

// limitCached is the limit of API work for a cached show read, but a read
// of a show cached fresh passes without a slot: it costs a copy of the
// encoded body, no database connection. In a rush seat map reads came by
// the thousand and, sharing the 4 slots of SQLite's pool with everything
// else, were most of the shed answers (BENCHMARKS.md, rush).
func (s *Server) limitCached(cache *showCache) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		limited := s.overload.limit(next)
		return func(c echo.Context) error {
			if id, err := showID(c); err == nil {
				if _, ok := cache.fresh(id); ok {
					c.Set(ctxNoSlot, true)
					return next(c)
				}
			}
			return limited(c)
		}
	}
}

// rfc3339 formats API times: UTC, millisecond precision (what the DB keeps).
func rfc3339(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
