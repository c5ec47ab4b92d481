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

func (a consoleReconcile) LastFullRun(ctx context.Context) (web.ReconcileRun, bool, error) {
	run, ok, err := a.r.LastFullRun(ctx)
	if err != nil || !ok {
		return web.ReconcileRun{}, false, err
	}
	return webRun(run), true, nil
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

// Run is a primary-key lookup: a dry run stays reachable however many
// sweeps ran since.
func (a consoleReconcile) Run(ctx context.Context, id int64) (web.ReconcileRun, error) {
	run, err := a.r.RunByID(ctx, id)
	if err != nil {
		return web.ReconcileRun{}, err
	}
	return webRun(run), nil
}

// ApplyItem repairs the one item of check whose key is key (the Key of a
// dry run's item) and nothing else; like RunNow it outlives the request.
func (a consoleReconcile) ApplyItem(ctx context.Context, check, key string) (web.ReconcileRun, error) {
	run, err := a.r.Apply(context.WithoutCancel(ctx), reconcile.TriggerManual, func(c string, it reconcile.Item) bool {
		return c == check && it.Key() == key
	})
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
				UserID: it.UserID, Action: it.Action, Detail: it.Detail, Notes: it.Notes, Fixed: it.Fixed, Error: it.Error})
		}
		w.Checks = append(w.Checks, wc)
	}
	return w
}
