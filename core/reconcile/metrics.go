package reconcile

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are reconcile's collectors, per check (label "check").
type metrics struct {
	found    *prometheus.CounterVec
	fixed    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	runs     *prometheus.CounterVec // trigger, status
	busy     prometheus.Counter
}

// newMetrics creates the collectors and registers them on reg (nil: unregistered).
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		found: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_reconcile_found_total", Help: "Anomalies found by reconcile, by check."}, []string{"check"}),
		fixed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_reconcile_fixed_total", Help: "Anomalies repaired by reconcile, by check."}, []string{"check"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "seatflow_reconcile_duration_seconds", Help: "Time one reconcile check took, by check.",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 30, 60}}, []string{"check"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_reconcile_runs_total", Help: "Reconcile runs, by trigger and outcome status."}, []string{"trigger", "status"}),
		busy: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatflow_reconcile_busy_total", Help: "Runs not started because another instance held the lease."}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.found, m.fixed, m.duration, m.runs, m.busy} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("reconcile: register metrics: %w", err)
		}
	}
	return m, nil
}

// zero creates the series of every check and of every trigger and final
// status at 0, so the first anomaly or failed run shows in increase() and
// an alert on runs that stopped happening can be judged from the start.
func (m *metrics) zero(checks []Check) {
	for _, c := range checks {
		m.found.WithLabelValues(c.Name())
		m.fixed.WithLabelValues(c.Name())
		m.duration.WithLabelValues(c.Name())
	}
	for _, t := range []string{TriggerSchedule, TriggerSweep, TriggerManual, TriggerCLI} {
		for _, s := range []string{StatusOK, StatusErrors, StatusAborted} {
			m.runs.WithLabelValues(t, s)
		}
	}
}

func (m *metrics) observe(check string, r Result, took time.Duration) {
	m.found.WithLabelValues(check).Add(float64(r.Found))
	m.fixed.WithLabelValues(check).Add(float64(r.Fixed))
	m.duration.WithLabelValues(check).Observe(took.Seconds())
}
