package server

import (
	"context"

	"seatflow/core/reconcile"
	"seatflow/web"
)

// consoleReconcile adapts the reconciler to the console's ReconcileRunner.
type consoleReconcile struct{ r *reconcile.Reconciler }

func (a consoleReconcile) RecentRuns(ctx context.Context, limit int) ([]web.ReconcileRun, error) {
	runs, err := a.r.Runs(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]web.ReconcileRun, len(runs))
	for i, r := range runs {
		out[i] = webRun(r)
	}
	return out, nil
}

// RunNow outlives the request: closing the browser tab must not abort a
// run that is repairing orders.
func (a consoleReconcile) RunNow(ctx context.Context) (web.ReconcileRun, error) {
	run, err := a.r.RunOnce(context.WithoutCancel(ctx), reconcile.TriggerManual, false)
	if err != nil {
		return web.ReconcileRun{}, err
	}
	return webRun(run), nil
}

func webRun(r reconcile.Run) web.ReconcileRun {
	w := web.ReconcileRun{ID: r.ID, Trigger: r.Trigger, Owner: r.Owner, Status: r.Status,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, DryRun: r.DryRun, Error: r.Error}
	for _, c := range r.Checks {
		wc := web.ReconcileCheck{Name: c.Name, Found: c.Found, Fixed: c.Fixed, Errors: c.Errors}
		for _, it := range c.Items {
			wc.Items = append(wc.Items, web.ReconcileItem{OrderNo: it.OrderNo, ShowID: it.ShowID, SeatIDs: it.SeatIDs,
				UserID: it.UserID, Action: it.Action, Detail: it.Detail, Fixed: it.Fixed, Error: it.Error})
		}
		w.Checks = append(w.Checks, wc)
	}
	return w
}
