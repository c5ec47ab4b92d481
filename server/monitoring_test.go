package server

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"go.yaml.in/yaml/v3"
)

// The operators' files in deploy/ (README "Monitoring").
var (
	rulesFile     = filepath.Join("..", "deploy", "prometheus", "seatflow-rules.yml")
	rulesTestFile = filepath.Join("..", "deploy", "prometheus", "seatflow-rules_test.yml")
	dashboardFile = filepath.Join("..", "deploy", "grafana", "seatflow.json")
)

// TestAlertRulesPromtool: Prometheus's own tool accepts the rules and their
// unit tests pass (each alert firing and not firing).
func TestAlertRulesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not installed: CI must run this test (apt-get install prometheus; .ci/run does)")
		}
		t.Skip("promtool is not installed (Debian: apt-get install prometheus)")
	}
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", rulesTestFile}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestMonitoringNamesExportedMetrics: every metric the rules and the
// dashboard's queries name is one a running SeatFlow exports, read from the
// /metrics of an embedded app, or a recording rule of the rules file.
func TestMonitoringNamesExportedMetrics(t *testing.T) {
	_, base, _ := startApp(t, map[string]string{}, nil)
	known := exportedNames(scrape(t, base))

	var rules struct {
		Groups []struct {
			Name  string
			Rules []struct{ Record, Alert, Expr string }
		}
	}
	raw, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	exprs := map[string]string{} // where → expression
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				known[r.Record] = true
			}
			exprs[rulesFile+": "+r.Record+r.Alert] = r.Expr
		}
	}
	if len(exprs) == 0 {
		t.Fatalf("%s has no rules", rulesFile)
	}

	raw, err = os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string
		Panels []struct {
			ID      int
			Title   string
			Type    string
			Targets []struct{ RefID, Expr string }
		}
		Templating struct {
			List []struct {
				Name, Type string
				Query      json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s is not well-formed JSON: %v", dashboardFile, err)
	}
	ids := map[int]bool{}
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("%s: panel id %d is used twice", dashboardFile, p.ID)
		}
		ids[p.ID] = true
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("%s: panel %q has no query", dashboardFile, p.Title)
		}
		for _, q := range p.Targets {
			exprs[dashboardFile+": "+p.Title+" "+q.RefID] = q.Expr
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("%s: variable %s: %v", dashboardFile, v.Name, err)
		}
		// label_values(selector, label): only the selector names metrics.
		m := regexp.MustCompile(`^label_values\(([^,]+),`).FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("%s: variable %s: query %q is not label_values(metric, label)", dashboardFile, v.Name, q.Query)
			continue
		}
		exprs[dashboardFile+": variable "+v.Name] = m[1]
	}

	for where, expr := range exprs {
		names := promqlMetricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: %q names no metric", where, expr)
		}
		for _, n := range names {
			if !known[n] {
				t.Errorf("%s: %s is not a metric SeatFlow exports (in %q)", where, n, expr)
			}
		}
	}
}

// exportedNames are the sample names of a scrape: a histogram's family
// exports name_bucket, name_sum and name_count, a summary's name_sum and
// name_count.
func exportedNames(mfs map[string]*dto.MetricFamily) map[string]bool {
	out := map[string]bool{}
	for name, mf := range mfs {
		out[name] = true
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM:
			out[name+"_bucket"], out[name+"_sum"], out[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			out[name+"_sum"], out[name+"_count"] = true, true
		}
	}
	return out
}

var (
	promqlStrings   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promqlMatchers  = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promqlGrouping  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	grafanaVariable = regexp.MustCompile(`\$\{[^}]*\}|\$\w+`)
	// An identifier not preceded by a digit or a dot (so not 1e3 or 5m).
	promqlIdent    = regexp.MustCompile(`(?:^|[^A-Za-z0-9_:.])([A-Za-z_:][A-Za-z0-9_:]*)`)
	promqlKeywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
		"group_left", "group_right", "inf", "nan", "Inf", "NaN"}
)

// promqlMetricNames returns the metric names a PromQL expression selects:
// what is left once strings, label matchers, ranges, grouping labels,
// Grafana variables, function names and keywords are taken out.
func promqlMetricNames(expr string) []string {
	s := promqlStrings.ReplaceAllString(expr, `""`)
	s = promqlMatchers.ReplaceAllString(s, " ")
	s = promqlGrouping.ReplaceAllString(s, " ")
	s = grafanaVariable.ReplaceAllString(s, " ")
	var names []string
	for _, m := range promqlIdent.FindAllStringSubmatchIndex(s, -1) {
		name := s[m[2]:m[3]]
		call := strings.HasPrefix(strings.TrimLeft(s[m[3]:], " \t\n"), "(")
		if call || slices.Contains(promqlKeywords, name) || slices.Contains(names, name) {
			continue
		}
		names = append(names, name)
	}
	return names
}

func TestPromQLMetricNames(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`max by (job) (seatflow_orders_overdue) > 0`, []string{"seatflow_orders_overdue"}},
		{`histogram_quantile(0.99, sum by (job, path, le) (rate(seatflow_expiry_lag_seconds_bucket{job=~"$job"}[$__rate_interval])))`,
			[]string{"seatflow_expiry_lag_seconds_bucket"}},
		{`sum(rate(a_total{status=~"5.."}[5m])) / sum(rate(a_total[5m])) > 1e3`, []string{"a_total"}},
		{`abs(x) > 0.25 and abs(y) <= 0.5 offset 5m`, []string{"x", "y"}},
		{`seatflow:http_5xx:ratio_rate5m{job=~"${job}"}`, []string{"seatflow:http_5xx:ratio_rate5m"}},
		{`sum(rate(a[1m])) by (route) * on (job) group_left (x) b`, []string{"a", "b"}},
		{`vector(1)`, nil},
	} {
		if got := promqlMetricNames(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("promqlMetricNames(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}
