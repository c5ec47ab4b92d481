package server

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"seatflow/core"
	"seatflow/core/reconcile"
)

// scrape GETs base/metrics as Prometheus would and parses it.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return mfs
}

// labelSets is every combination of the values given per label name.
func labelSets(labels map[string][]string) []map[string]string {
	out := []map[string]string{{}}
	for _, name := range slices.Sorted(maps.Keys(labels)) {
		var next []map[string]string
		for _, set := range out {
			for _, v := range labels[name] {
				s := maps.Clone(set)
				s[name] = v
				next = append(next, s)
			}
		}
		out = next
	}
	return out
}

// sampleValue is a counter's or gauge's value, a histogram's count.
func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return -1
}

func findSeries(mf *dto.MetricFamily, want map[string]string) *dto.Metric {
	for _, m := range mf.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		if maps.Equal(got, want) {
			return m
		}
	}
	return nil
}

// TestMetricsExistAtStart: a freshly started embedded app exports every
// labelled series for its known label values at 0 on its first scrape, so
// rate() sees the first event and alerts have series to judge at once.
func TestMetricsExistAtStart(t *testing.T) {
	app, base, _ := startApp(t, map[string]string{}, nil)
	mfs := scrape(t, base) // the first request: none counted yet

	var routes []string
	var errorSeries []map[string]string
	for _, r := range app.Handler.echo.Routes() {
		if !countedMethod(r.Method) {
			continue
		}
		routes = append(routes, r.Path)
		for _, status := range []string{"500", "503"} {
			errorSeries = append(errorSeries, map[string]string{"route": r.Path, "method": r.Method, "status": status})
		}
	}
	if !slices.Contains(routes, "/api/v1/orders") || !slices.Contains(routes, "/metrics") {
		t.Fatalf("the routes lack the API or /metrics: %v", routes)
	}
	checks := []string{reconcile.CheckExpiredPending, reconcile.CheckUnsentTimeout, reconcile.CheckPaidNotSold,
		reconcile.CheckOrphanOrderSeat, reconcile.CheckRefundedSold, reconcile.CheckStaleRedisLock,
		reconcile.CheckBlockDrift, reconcile.CheckLimitDrift, reconcile.CheckOpenDiscrepancy}
	outcomes := []string{"ignored", "rearmed", "cancelled", "resent", "deferred"}
	ended := labelSets(map[string][]string{"status": {"cancelled"},
		"reason": {core.ReasonTimeout, core.ReasonCustomer, core.ReasonStaff, core.ReasonReconcile, core.ReasonShowCancelled}})
	ended = append(ended, map[string]string{"status": "paid", "reason": "payment"},
		map[string]string{"status": "refunded", "reason": "refund"})

	for _, c := range []struct {
		family string
		series []map[string]string
		// The start-up reconcile run may have counted these before the
		// scrape: only their presence is checked.
		mayMove bool
	}{
		{"seatflow_place_rejected_total", labelSets(map[string][]string{"reason": {"seat_unavailable", "purchase_limit"}}), false},
		{"seatflow_orders_ended_total", ended, false},
		{"seatflow_timeout_messages_total", labelSets(map[string][]string{"outcome": outcomes}), false},
		{"seatflow_timeout_handle_seconds", labelSets(map[string][]string{
			"outcome": append(slices.Clone(outcomes), "failed"), "queue": {core.DeadLetterDBQueue}}), false},
		{"seatflow_timeout_hops_total", labelSets(map[string][]string{"level": {"0"}}), false}, // the embedded queue: exact timers
		{"seatflow_payments_total", labelSets(map[string][]string{
			"result": {"paid", "duplicate", "discrepancy", "txn_conflict", "amount_mismatch"}}), false},
		{"seatflow_discrepancies_total", labelSets(map[string][]string{"kind": {core.DiscrepancyPaidAfterCancel,
			core.DiscrepancySecondPayment, core.DiscrepancyAmountMismatch, core.DiscrepancyPaidAfterRefund,
			core.DiscrepancyUnknownOrder, core.DiscrepancyTxnConflict}}), false},
		{"seatflow_seat_store_failures_total", labelSets(map[string][]string{
			"op": {"release", "sell", "compensate", "unblock", "refund_release"}}), false},
		{"seatflow_expiry_lag_seconds", labelSets(map[string][]string{"path": {"timeout", "sweep", "reconcile"}}), false},
		{"seatflow_refunds_total", labelSets(map[string][]string{"outcome": {"refunded", "requested", "rejected"}}), false},
		{"seatflow_checkins_total", labelSets(map[string][]string{"result": {"admitted", "already_checked_in", "not_valid"}}), false},
		{"seatflow_reconcile_found_total", labelSets(map[string][]string{"check": checks}), false}, // an empty database has no anomalies
		{"seatflow_reconcile_fixed_total", labelSets(map[string][]string{"check": checks}), false},
		{"seatflow_reconcile_duration_seconds", labelSets(map[string][]string{"check": checks}), true},
		{"seatflow_reconcile_runs_total", labelSets(map[string][]string{
			"trigger": {"schedule", "sweep", "manual", "cli"}, "status": {"ok", "errors", "aborted"}}), true},
		{"seatflow_http_request_duration_seconds", labelSets(map[string][]string{"route": routes}), false},
		{"seatflow_http_requests_total", errorSeries, false},
		{"seatflow_store_down", labelSets(map[string][]string{"store": {"database", "seat_store", "delay_queue"}}), false},
		{"seatflow_shed_total", labelSets(map[string][]string{"reason": {shedConcurrency, shedConnections}}), false},
		{"seatflow_api_inflight", labelSets(map[string][]string{"work": {workPlacements, workOther}}), false},
		// The scrape itself is an open connection: only present.
		{"seatflow_open_connections", []map[string]string{{}}, true},
		{"seatflow_api_inflight_limit", labelSets(map[string][]string{"work": {workPlacements, workOther}}), true},
		{"seatflow_connections_limit", []map[string]string{{}}, true},
		{"seatflow_queue_joins_total", []map[string]string{{}}, false},
		{"seatflow_queue_polls_total", []map[string]string{{}}, false},
		{"seatflow_queue_admissions_total", []map[string]string{{}}, false},
		{"seatflow_queue_admission_rate", []map[string]string{{}}, false},
		{"seatflow_queue_placement_p99_seconds", []map[string]string{{}}, false},
		// Without SEATFLOW_WEBHOOK_URL too: the alert has its series.
		{"seatflow_webhook_delivered_total", []map[string]string{{}}, false},
		{"seatflow_webhook_failed_attempts_total", labelSets(map[string][]string{"reason": {"status", "timeout", "network"}}), false},
		{"seatflow_webhook_backlog", []map[string]string{{}}, false},
		{"seatflow_webhook_oldest_undelivered_seconds", []map[string]string{{}}, false},
	} {
		t.Run(c.family, func(t *testing.T) {
			mf := mfs[c.family]
			if mf == nil {
				t.Fatalf("%s is not exported", c.family)
			}
			var missing, moved []string
			for _, want := range c.series {
				m := findSeries(mf, want)
				switch {
				case m == nil:
					missing = append(missing, labelString(want))
				case !c.mayMove && sampleValue(m) != 0:
					moved = append(moved, labelString(want))
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s lacks %d of %d series, e.g. %s", c.family, len(missing), len(c.series), missing[0])
			}
			if len(moved) > 0 {
				t.Errorf("%s is not 0 at start for %v", c.family, moved)
			}
		})
	}
}

func labelString(l map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}
