package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"seatflow/core/access"
	"seatflow/web"
)

// TestReconcilePageHidesEmptySweeps: the page lists the runs worth reading
// (full runs, sweeps that found or failed something, dry runs) and counts
// the empty sweeps it leaves out; ?sweeps=1 lists them too. The dashboard's
// last run is the newest one worth reading.
func TestReconcilePageHidesEmptySweeps(t *testing.T) {
	env := newConsoleEnv(t)
	start := time.Now().Add(-time.Hour)
	add := func(trigger, status string, found int, dryRun bool) int64 {
		id := int64(len(env.runner.runs) + 1)
		at := start.Add(time.Duration(id) * 30 * time.Second)
		env.runner.runs = append(env.runner.runs, web.ReconcileRun{ID: id, Trigger: trigger, Status: status, DryRun: dryRun,
			StartedAt: at, FinishedAt: at, Checks: []web.ReconcileCheck{{Name: "expired_pending", Found: found, Fixed: found}}})
		return id
	}
	full := add("schedule", "ok", 4, false)
	foundSweep := add("sweep", "ok", 1, false)
	failedSweep := add("sweep", "errors", 0, false)
	dry := add("manual", "ok", 0, true)
	var empty []int64
	for range 30 { // fifteen minutes of empty sweeps on top
		empty = append(empty, add("sweep", "ok", 0, false))
	}
	row := func(id int64) string { return fmt.Sprintf(`href="/console/reconcile/runs/%d"`, id) }

	ops := env.login(access.RoleOps)
	page := ops.do("GET", "/console/reconcile", nil, nil).Body.String()
	for _, id := range []int64{full, foundSweep, failedSweep, dry} {
		if !strings.Contains(page, row(id)) {
			t.Errorf("run %d is not listed", id)
		}
	}
	for _, id := range empty {
		if strings.Contains(page, row(id)) {
			t.Errorf("empty sweep %d is listed by default", id)
		}
	}
	if !strings.Contains(page, "30 sweeps that found nothing are not listed.") {
		t.Error("the page does not say how many sweeps it left out")
	}
	all := ops.do("GET", "/console/reconcile?sweeps=1", nil, nil).Body.String()
	if !strings.Contains(all, row(empty[len(empty)-1])) || strings.Count(all, `href="/console/reconcile/runs/`) != reconcileRunsShown {
		t.Errorf("?sweeps=1: want the newest %d runs, empty sweeps included", reconcileRunsShown)
	}

	// The dashboard: a full run that found 4, then a quarter hour of empty
	// sweeps: the full run is the last one shown.
	env.runner.runs = env.runner.runs[:full]
	for range 30 {
		add("sweep", "ok", 0, false)
	}
	if dash := ops.do("GET", "/console/", nil, nil).Body.String(); !strings.Contains(dash, "found 4, fixed 4, errors 0") {
		t.Error("the dashboard's last run is an empty sweep, not the full run that found 4")
	}
}
