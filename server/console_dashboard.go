package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/store"
	"seatflow/web"
)

// The dashboard's reads: the expiry charts cover the last hour, the
// overdue chart in minutes (its most at once, so an outage shorter than a
// minute still shows), the lag in the buckets of the Prometheus histogram.
const (
	chartWindow   = time.Hour
	overdueStep   = time.Minute
	expiringShown = 10 // holds expiring soon listed on the dashboard
)

// dashboard shows the figures of the member of staff's role (see
// web.DashboardData), reading only those.
func (cn *console) dashboard(c echo.Context) error {
	ctx := c.Request().Context()
	p := cn.page(c, "dashboard.title", web.NavDashboard)
	now := cn.Clock.Now()
	counts, err := cn.DB.OrderCounts(ctx, now.Add(-time.Hour))
	if err != nil {
		return err
	}
	d := web.DashboardData{Counts: counts, Reconcile: cn.Reconcile != nil}
	if p.OpsView() {
		err = cn.opsFigures(ctx, p, now, &d)
	} else {
		err = cn.boxOfficeFigures(ctx, now, &d)
	}
	if err != nil {
		return err
	}
	if d.MyRequests, err = cn.myRequests(ctx, p.Staff.Username, now); err != nil {
		return err
	}
	if d.MyWriteOffs, err = cn.myWriteOffs(ctx, p, now); err != nil {
		return err
	}
	d.Queues = cn.queueRows(ctx)
	return render(c, http.StatusOK, web.DashboardPage(p, d))
}

// boxOfficeFigures: the holds expiring within web.ExpiringWindow (the
// soonest of them, and how many), the seats left of every show on sale.
func (cn *console) boxOfficeFigures(ctx context.Context, now time.Time, d *web.DashboardData) error {
	var err error
	d.Expiring, d.ExpiringTotal, err = cn.DB.PendingOrders(ctx, store.PendingQuery{Sort: "expire", Limit: expiringShown,
		ExpireFrom: now, ExpireTo: now.Add(web.ExpiringWindow)})
	if err != nil {
		return err
	}
	shows, err := cn.Engine.ShowSummaries(ctx)
	if err != nil {
		return err
	}
	for _, s := range shows {
		if s.Status == core.ShowOnSale {
			d.Shows = append(d.Shows, s)
		}
	}
	return nil
}

// healthKeys name the backing stores, in the order the health card lists
// them, by the names the store watcher reports (storeHealth).
var healthKeys = []struct{ store, key string }{
	{storeDatabase, "health.database"},
	{storeSeats, "health.seats"},
	{storeDelayQueue, "health.queue"},
}

// opsFigures: what the store watcher found down, the clock offset, the
// expiry charts, open discrepancies by age and amount, dead letters, the
// last reconcile run worth reading.
func (cn *console) opsFigures(ctx context.Context, p web.Page, now time.Time, d *web.DashboardData) error {
	down := strings.Split(p.StoreDown, ", ")
	for _, h := range healthKeys {
		d.Health = append(d.Health, web.HealthCheck{Key: h.key, OK: !slices.Contains(down, h.store)})
	}
	if cn.ClockOffset != nil {
		d.ClockOffset, d.ClockMeasured = cn.ClockOffset()
	}
	d.ClockLimit = cn.ClockLimit
	var err error
	if d.Lag, d.Overdue, err = cn.expiryCharts(ctx, now); err != nil {
		return err
	}
	if d.OverdueNow, err = cn.DB.OverdueCount(ctx, now.Add(-cn.overdueAfter())); err != nil {
		return err
	}
	ages, err := cn.DB.OpenDiscrepancyAges(ctx, now, web.DiscrepancyBandAges)
	if err != nil {
		return err
	}
	for i, a := range ages {
		d.Discrepancies = append(d.Discrepancies, web.DiscrepancyAge{Band: i, N: a.N, AmountCents: a.AmountCents})
	}
	if d.DeadLetters, err = cn.DB.DeadLetterCount(ctx); err != nil {
		return err
	}
	if cn.Reconcile != nil {
		if err := cn.lastRuns(ctx, d); err != nil {
			// The rest of the dashboard is still worth showing.
			cn.Logger.WarnContext(ctx, "console: reading reconcile runs", "err", err)
		}
	}
	return nil
}

// dashboardRunsRead is how many of the newest runs the dashboard reads for
// one worth reading: a sweep that found something is news for a while.
const dashboardRunsRead = 20

// lastRuns finds the run the dashboard shows: the newest worth reading
// among the newest runs (a full run, a dry run, a sweep that found or
// failed something), else the last full run however many empty sweeps
// came since; and the newest run when it is an empty sweep, so ops still
// see that sweeps run.
func (cn *console) lastRuns(ctx context.Context, d *web.DashboardData) error {
	runs, err := cn.Reconcile.RecentRuns(ctx, dashboardRunsRead)
	if err != nil {
		return err
	}
	if len(runs) > 0 && runs[0].EmptySweep() {
		d.LastSweep = &runs[0]
	}
	for i := range runs {
		if !runs[i].EmptySweep() {
			d.LastRun = &runs[i]
			return nil
		}
	}
	full, ok, err := cn.Reconcile.LastFullRun(ctx)
	if ok {
		d.LastRun = &full
	}
	return err
}

// overdueAfter is how late a hold must be to count as overdue: the bound
// of the Prometheus gauge (app.go), so the dashboard alarms when the alert
// would, and not for holds ended within the delay slack.
func (cn *console) overdueAfter() time.Duration { return cn.Engine.Config().Delay.OverdueAfter() }

// expiryCharts reads the expiry-lag histogram and the overdue series of the
// last hour from the database: both are facts of the order rows, so every
// instance draws the same charts and a restart loses no history. The
// overdue minutes are whole minutes of the clock, the current one last.
func (cn *console) expiryCharts(ctx context.Context, now time.Time) (web.LagChart, []web.OverduePoint, error) {
	bounds := make([]time.Duration, len(core.ExpiryLagBuckets))
	for i, b := range core.ExpiryLagBuckets {
		bounds[i] = time.Duration(b * float64(time.Second))
	}
	lag, err := cn.DB.ExpiryLag(ctx, now.Add(-chartWindow), bounds)
	if err != nil {
		return web.LagChart{}, nil, err
	}
	from := now.Add(-chartWindow).Truncate(overdueStep)
	peaks, err := cn.DB.OverdueMax(ctx, from, now, overdueStep, cn.overdueAfter())
	if err != nil {
		return web.LagChart{}, nil, err
	}
	points := make([]web.OverduePoint, len(peaks))
	for i, n := range peaks {
		points[i] = web.OverduePoint{At: from.Add(time.Duration(i) * overdueStep), N: n}
	}
	return web.LagChart{Bounds: bounds, Counts: lag}, points, nil
}
