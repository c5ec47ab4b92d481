package web

import (
	"strconv"
	"time"

	"seatflow/core/access"
)

// Expiry-lag thresholds of the ops dashboard. A timeout message ends a hold
// within about a second; past LagWarn a sweep had to end it (the message
// was late or lost), past LagBad a full reconcile did, or nothing for a
// minute: customers saw seats held that were free.
const (
	LagWarn = 5 * time.Second
	LagBad  = time.Minute
)

// Seconds writes a threshold as whole seconds ("60 s"), the way the
// dashboard's texts name them.
func Seconds(d time.Duration) string { return strconv.Itoa(int(d.Seconds())) + " s" }

// Levels of a dashboard figure, as CSS classes.
const (
	LevelOK   = "ok"
	LevelWarn = "warn"
	LevelBad  = "bad"
)

// OpsView says whether the dashboard is the ops one (the stack's health,
// expiry, discrepancies, dead letters): for those who may run reconcile,
// ops and admin.
func (p Page) OpsView() bool { return p.Can(access.ActReconcile) }

// BoxOfficeView says whether the dashboard is the box office's (holds
// about to expire, seats left): everyone else, box office and manager.
func (p Page) BoxOfficeView() bool { return !p.OpsView() }

// HealthCheck is whether one backing store answers; Key names it in the
// catalog.
type HealthCheck struct {
	Key string
	OK  bool
}

// DiscrepancyBandAges are the upper ages of the dashboard's bands of open
// discrepancies, youngest first; one more band holds the older ones.
var DiscrepancyBandAges = []time.Duration{time.Hour, 24 * time.Hour}

// discrepancyBandKeys name the bands in the catalog.
var discrepancyBandKeys = []string{"dashboard.age_hour", "dashboard.age_day", "dashboard.age_older"}

// DiscrepancyAge is the open discrepancies of one age band (an index of
// DiscrepancyBandAges, or its length for the oldest): how many and how
// much money.
type DiscrepancyAge struct {
	Band        int
	N           int
	AmountCents int64
}

// Key names the band in the catalog.
func (a DiscrepancyAge) Key() string { return discrepancyBandKeys[a.Band] }

// Level is a band's level: a discrepancy older than an hour wants someone
// on it, older than a day is late.
func (a DiscrepancyAge) Level() string {
	switch {
	case a.N == 0 || a.Band == 0:
		return LevelOK
	case a.Band == 1:
		return LevelWarn
	}
	return LevelBad
}

// LagLevel is the expiry lag's level over the chart's hour.
func (c LagChart) Level() string {
	switch {
	case c.AtLeast(LagBad) > 0:
		return LevelBad
	case c.AtLeast(LagWarn) > 0:
		return LevelWarn
	}
	return LevelOK
}

// AtLeast counts the orders whose lag was d or more; d should be one of
// the bounds (otherwise its bucket is left out).
func (c LagChart) AtLeast(d time.Duration) int {
	n := 0
	for _, counts := range c.Counts {
		for i, v := range counts {
			if i > 0 && c.Bounds[i-1] >= d {
				n += v
			}
		}
	}
	return n
}

// ClockLevel is the clock offset's level: past the limit the instance is
// out of the load balancer (/readyz), past half of it close to.
func (d DashboardData) ClockLevel() string {
	off := d.ClockOffset.Abs()
	switch {
	case d.ClockLimit == 0:
		return LevelOK
	case off > d.ClockLimit:
		return LevelBad
	case off > d.ClockLimit/2:
		return LevelWarn
	}
	return LevelOK
}

// OverdueMax is the most holds overdue at once in the chart's hour.
func (d DashboardData) OverdueMax() int {
	m := 0
	for _, pt := range d.Overdue {
		m = max(m, pt.N)
	}
	return m
}
