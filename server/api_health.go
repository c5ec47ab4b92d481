package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
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

// handleReadyz reports whether the database, the seat store and the delay
// queue answer. It answers from the health watcher's last probe while that
// is fresh (storeHealth.recent), so a rush that keeps every pooled
// connection busy cannot make the probe wait for one: a load balancer
// would pull the instance in the middle of the sale. Without a fresh probe
// it pings them itself. Any failure is a 503 (never a 500) whose code says
// what kind of failure it is; the details go to the log.
func (s *Server) handleReadyz(c echo.Context) error {
	ctx := c.Request().Context()
	if down, ok := s.recentProbe(); ok {
		if down != "" {
			s.logger.WarnContext(ctx, "not ready", "down", down)
			return c.JSON(http.StatusServiceUnavailable, errorBody{Error: errorDetail{Code: core.ErrStoreUnavailable.Code,
				Message: "not answering: " + down + "; the server log has the details"}})
		}
	} else if err := s.pingStores(ctx); err != nil {
		code := core.ErrStoreUnavailable.Code
		var ce *core.Error
		if errors.As(err, &ce) {
			code = ce.Code
		}
		// The error names hosts and addresses: for the log, not for
		// whoever can reach the probe.
		s.logger.WarnContext(ctx, "not ready", "err", err)
		return c.JSON(http.StatusServiceUnavailable, errorBody{Error: errorDetail{Code: code,
			Message: "not answering: " + strings.Join(storesNamed(err), ", ") + "; the server log has the details"}})
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

// recentProbe is the health watcher's last finding while fresh.
func (s *Server) recentProbe() (down string, ok bool) {
	if s.health == nil {
		return "", false
	}
	return s.health.recent(time.Now())
}

func (s *Server) pingStores(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	return s.engine.Ready(ctx)
}

// storesNamed returns which stores Engine.Ready found down: each of its
// joined errors starts with the store's name.
func storesNamed(err error) []string {
	var names []string
	for _, name := range []string{storeDatabase, storeSeats, storeDelayQueue} {
		if strings.Contains(err.Error(), name+": ") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		names = append(names, "a backing store")
	}
	return names
}
