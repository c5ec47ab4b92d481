package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/web"
)

// Reconcile's dry run in the console: run every check report-only, look at
// what each would repair item by item, then apply. Applying is a repairing
// run of every check: the checks re-read the state and repair what is
// still wrong, so an item that righted itself meanwhile is left alone
// (and shown as gone), and one that arose meanwhile is shown as extra.

// DryRun outlives the request, like RunNow: the run is recorded either way.
func (a consoleReconcile) DryRun(ctx context.Context) (web.ReconcileRun, error) {
	run, err := a.r.RunOnce(context.WithoutCancel(ctx), reconcile.TriggerManual, true)
	if err != nil {
		return web.ReconcileRun{}, err
	}
	return webRun(run), nil
}

// runLookback is how many of the newest runs Run searches: the reconciler
// lists runs newest first and has no lookup by id; with the default sweep
// every 30 s that reaches back about four hours, plenty for a dry run
// looked at and applied on the spot.
const runLookback = 500

func (a consoleReconcile) Run(ctx context.Context, id int64) (web.ReconcileRun, error) {
	runs, err := a.r.Runs(ctx, runLookback)
	if err != nil {
		return web.ReconcileRun{}, err
	}
	for _, r := range runs {
		if r.ID == id {
			return webRun(r), nil
		}
	}
	return web.ReconcileRun{}, errRunNotFound(id)
}

func errRunNotFound(id int64) error {
	return &core.Error{Kind: core.KindNotFound, Code: "reconcile_run_not_found",
		Message: fmt.Sprintf("reconcile run %d not found among the %d newest", id, runLookback)}
}

func (cn *console) dryRunReconcile(c echo.Context) error {
	if cn.Reconcile == nil {
		return echo.ErrNotFound
	}
	run, err := cn.Reconcile.DryRun(c.Request().Context())
	if core.ErrorKind(err) == core.KindConflict {
		return c.Redirect(http.StatusSeeOther, web.URL("/reconcile?msg=reconcile_busy"))
	}
	if err != nil {
		return err
	}
	found, _, errs := run.Totals()
	id := strconv.FormatInt(run.ID, 10)
	cn.audit(c, core.AuditEntry{Action: core.AuditReconcileDryRun, Target: "reconcile_run:" + id,
		Detail: map[string]any{"found": found, "errors": errs}})
	return c.Redirect(http.StatusSeeOther, web.URL("/reconcile/runs/"+id))
}

// reconcileRun shows one run; ?applied=<dry run id> compares it with the
// dry run it applied.
func (cn *console) reconcileRun(c echo.Context) error {
	if cn.Reconcile == nil {
		return echo.ErrNotFound
	}
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	ctx := c.Request().Context()
	d := web.ReconcileRunData{}
	if d.Run, err = cn.Reconcile.Run(ctx, id); err != nil {
		return err
	}
	if applied, err := queryID(c, "applied"); err != nil {
		return err
	} else if applied != 0 {
		dry, err := cn.Reconcile.Run(ctx, applied)
		if err != nil {
			return err
		}
		d.Applied = &dry
	}
	return render(c, http.StatusOK, web.ReconcileRunPage(cn.page(c, "reconcile.title", web.NavReconcile), d))
}

// applyReconcile applies a dry run: a repairing run now, shown against it.
func (cn *console) applyReconcile(c echo.Context) error {
	if cn.Reconcile == nil {
		return echo.ErrNotFound
	}
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	dry, err := cn.Reconcile.Run(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if !dry.DryRun {
		return errBadRequest
	}
	run, err := cn.Reconcile.RunNow(c.Request().Context())
	if core.ErrorKind(err) == core.KindConflict {
		return c.Redirect(http.StatusSeeOther, web.URL("/reconcile/runs/"+strconv.FormatInt(id, 10)+"?msg=reconcile_busy"))
	}
	if err != nil {
		return err
	}
	found, fixed, errs := run.Totals()
	runID := strconv.FormatInt(run.ID, 10)
	cn.audit(c, core.AuditEntry{Action: core.AuditReconcileApply, Target: "reconcile_run:" + runID,
		Detail: map[string]any{"dry_run": id, "found": found, "fixed": fixed, "errors": errs}})
	return c.Redirect(http.StatusSeeOther, web.URL(fmt.Sprintf("/reconcile/runs/%s?applied=%d&msg=reconcile_done", runID, id)))
}
