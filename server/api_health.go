package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

// readyTimeout keeps a probe from hanging on a store that does not answer.
const readyTimeout = 3 * time.Second

// handleHealthz answers while the process runs: liveness, not readiness.
func (s *Server) handleHealthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz pings the database, the seat store and the delay queue. Any
// failure is a 503 (never a 500), and the message names what is down, for
// the operator reading the probe.
func (s *Server) handleReadyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()
	if err := s.engine.Ready(ctx); err != nil {
		code := core.ErrStoreUnavailable.Code
		var ce *core.Error
		if errors.As(err, &ce) {
			code = ce.Code
		}
		return c.JSON(http.StatusServiceUnavailable, errorBody{Error: errorDetail{Code: code, Message: err.Error()}})
	}
	// An instance whose clock is off would end holds early or late: take
	// it out of the load balancer until its time sync is fixed.
	if s.skew != nil {
		if bad, why := s.skew.Skewed(); bad {
			return c.JSON(http.StatusServiceUnavailable, errorBody{Error: errorDetail{Code: "clock_skew", Message: why}})
		}
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}
