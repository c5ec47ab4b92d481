package server

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/reconcile"
)

// handleReconcileRuns lists recent reconcile runs: ?limit=N (default 20, at most 500).
func (s *Server) handleReconcileRuns(c echo.Context) error {
	limit := 0
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return core.Invalidf("limit must be a non-negative integer")
		}
		limit = n
	}
	runs, err := s.recon.Runs(c.Request().Context(), limit)
	if err != nil {
		return err
	}
	for i := range runs {
		runs[i] = apiRun(runs[i])
	}
	return c.JSON(http.StatusOK, map[string]any{"runs": runs})
}

// handleRunReconcile runs every check now (?dry_run=true only reports);
// 409 reconcile_busy while another instance holds the lease.
func (s *Server) handleRunReconcile(c echo.Context) error {
	dryRun, err := strconv.ParseBool(cmp.Or(c.QueryParam("dry_run"), "false"))
	if err != nil {
		return core.Invalidf("dry_run must be true or false")
	}
	key, _ := c.Get(contextKeyAPIKey).(access.APIKey)
	undo, err := s.abuse.reserveReconcile(key)
	if err != nil {
		return err
	}
	run, err := s.recon.RunOnce(c.Request().Context(), reconcile.TriggerManual, dryRun)
	if ce := (*core.Error)(nil); errors.As(err, &ce) && ce.Code == reconcile.ErrBusy.Code {
		undo() // no run started: the slot stays free
		// Its message names the holder's host and pid, for the console.
		return reconcile.ErrBusy
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, apiRun(run))
}

// apiRun hides the instance that ran r (its owner is host name and pid) from
// API clients behind a short digest: runs of one instance still share it.
func apiRun(r reconcile.Run) reconcile.Run {
	if r.Owner != "" {
		sum := sha256.Sum256([]byte(r.Owner))
		r.Owner = "instance-" + hex.EncodeToString(sum[:4])
	}
	return r
}
