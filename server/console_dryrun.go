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
// what each would repair item by item, then apply one item or all of them.
// Applying all is a repairing run of every check: the checks re-read the
// state and repair what is still wrong, so an item that righted itself
// meanwhile is left alone (and shown as gone), and one that arose meanwhile
// is shown as extra. Applying one item is a run that repairs that item only
// (reconcile.Reconciler.Apply), if it is still there.

// DryRun outlives the request, like RunNow: the run is recorded either way.
func (a consoleReconcile) DryRun(ctx context.Context) (web.ReconcileRun, error) {
	run, err := a.r.RunOnce(context.WithoutCancel(ctx), reconcile.TriggerManual, true)
	if err != nil {
		return web.ReconcileRun{}, err
	}
	return webRun(run), nil
}

// itemApplier is a ReconcileRunner that can also apply one item of a dry
// run, named by its check and key (consoleReconcile can). A runner without
// it refuses the per-item buttons' posts.
type itemApplier interface {
	ApplyItem(ctx context.Context, check, key string) (web.ReconcileRun, error)
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

// applyReconcile applies a dry run: a repairing run now, shown against it;
// or, when the form names one of its items (check and key), that item only.
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
	if check, key := c.FormValue("check"), c.FormValue("key"); check != "" || key != "" {
		return cn.applyReconcileItem(c, dry, check, key)
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

// applyReconcileItem repairs one item the dry run lists, and nothing else.
// Only a listed, repairable item is accepted: the form cannot be turned into
// a repair of something ops never saw.
func (cn *console) applyReconcileItem(c echo.Context, dry web.ReconcileRun, check, key string) error {
	applier, ok := cn.Reconcile.(itemApplier)
	if !ok || !listsRepair(dry, check, key) {
		return errBadRequest
	}
	dryID := strconv.FormatInt(dry.ID, 10)
	run, err := applier.ApplyItem(c.Request().Context(), check, key)
	if core.ErrorKind(err) == core.KindConflict {
		return c.Redirect(http.StatusSeeOther, web.URL("/reconcile/runs/"+dryID+"?msg=reconcile_busy"))
	}
	if err != nil {
		return err
	}
	found, fixed, errs := run.Totals()
	runID := strconv.FormatInt(run.ID, 10)
	cn.audit(c, core.AuditEntry{Action: core.AuditReconcileApply, Target: "reconcile_run:" + runID,
		Detail: map[string]any{"dry_run": dry.ID, "check": check, "key": key, "found": found, "fixed": fixed, "errors": errs}})
	return c.Redirect(http.StatusSeeOther, web.URL("/reconcile/runs/"+runID+"?msg=reconcile_done"))
}

// listsRepair reports whether the run lists an item of check with key that
// a check would repair (not one it only reports).
func listsRepair(run web.ReconcileRun, check, key string) bool {
	for _, c := range run.Checks {
		if c.Name != check {
			continue
		}
		for _, it := range c.Items {
			if it.Key() == key && web.ItemResult(it, run.DryRun) == web.ResultWould {
				return true
			}
		}
	}
	return false
}
