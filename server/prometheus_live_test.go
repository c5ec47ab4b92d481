package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/store"
	"seatflow/core/testenv"
	"seatflow/server/bench/netdelay"
)

// TestAlertsInPrometheus scrapes a running SeatFlow with Debian's
// Prometheus and deploy/prometheus/seatflow-rules.yml, drives a late
// timeout, a discrepancy and a seat-store outage, and waits until
// Prometheus's own API shows each one's alert pending or firing.
// SEATFLOW_TEST_PROMETHEUS=1 (make test, after the suite): it needs the
// prometheus binary and Redis.
func TestAlertsInPrometheus(t *testing.T) {
	if os.Getenv("SEATFLOW_TEST_PROMETHEUS") != "1" {
		t.Skip("SEATFLOW_TEST_PROMETHEUS=1 runs Prometheus against SeatFlow")
	}
	prom := testenv.Binary(t, "prometheus")
	// The seat store through a proxy this test can cut, on a Redis
	// database of its own.
	redisURL := strings.TrimSuffix(testenv.Redis(t), "/0")
	opt, err := redis.ParseURL(redisURL + "/14")
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opt)
	defer rc.Close()
	if err := rc.FlushDB(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	proxy, err := netdelay.Listen(opt.Addr, 0, netdelay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()

	// A hold whose timeout message comes far too late: one delay level of
	// five minutes, and no sweep to catch it.
	app, base, _ := startApp(t, map[string]string{
		"SEATFLOW_REDIS":                 "redis://" + proxy.Addr() + "/14",
		"SEATFLOW_HOLD_TTL":              "1s",
		"SEATFLOW_DELAY_MODE":            "levels",
		"SEATFLOW_DELAY_LEVELS":          "5m",
		"SEATFLOW_RECONCILE_EVERY":       "1h",
		"SEATFLOW_RECONCILE_SWEEP_EVERY": "1h",
	}, nil)
	show := createTestShow(t, app)

	promAPI := startPrometheus(t, prom, strings.TrimPrefix(base, "http://"))
	waitAlert := func(name string, states ...string) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			got := alertStates(t, promAPI)
			if slices.Contains(states, got[name]) {
				t.Logf("%s: %s", name, got[name])
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("alert %s never became %v; alerts now: %v", name, states, got)
			}
			time.Sleep(500 * time.Millisecond) // Prometheus evaluates every second
		}
	}

	// Each alert is off until its cause (a rule that is always on would
	// pass): checked once Prometheus has scraped SeatFlow and evaluated.
	waitScraped(t, promAPI)
	before := alertStates(t, promAPI)
	for _, name := range []string{"SeatFlowOverdueHolds", "SeatFlowDiscrepancyOpened", "SeatFlowStoreDown"} {
		if before[name] != "" {
			t.Fatalf("%s is %s before its cause", name, before[name])
		}
	}
	apiCall(t, base, "POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["A-1"]}`, show), nil, http.StatusCreated)
	waitAlert("SeatFlowOverdueHolds", "pending", "firing")

	body := `{"order_no":"SF-NOT-IN-THIS-DATABASE","txn_id":"T-prom-1","amount_cents":1000}`
	apiCall(t, base, "POST", "/api/v1/payments/callback", body, signed(body), 0)
	waitAlert("SeatFlowDiscrepancyOpened", "firing")

	if err := proxy.Close(); err != nil {
		t.Fatal(err)
	}
	waitAlert("SeatFlowStoreDown", "pending", "firing")
}

// startPrometheus runs prometheus with SeatFlow's rules, scraping target
// every second, and returns its base URL once it is ready.
func startPrometheus(t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	rules, err := filepath.Abs("../deploy/prometheus/seatflow-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: seatflow
    static_configs: [{targets: [%q]}]
`, rules, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logFile.Name())
			t.Logf("prometheus log:\n%s", out)
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitScraped waits until Prometheus has scraped SeatFlow twice (increase()
// needs two samples) and evaluated its rules since.
func waitScraped(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(`count_over_time(up{job="seatflow"}[1m])`))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Data struct {
				Result []struct {
					Value []any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if r := body.Data.Result; len(r) == 1 && len(r[0].Value) == 2 && r[0].Value[1] != "1" {
			time.Sleep(2 * time.Second) // two evaluation intervals
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus did not scrape SeatFlow twice: %+v", body.Data.Result)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// alertStates is Prometheus's alerts now: name → pending or firing.
func alertStates(t *testing.T, base string) map[string]string {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, a := range body.Data.Alerts {
		if out[a.Labels["alertname"]] != "firing" {
			out[a.Labels["alertname"]] = a.State
		}
	}
	return out
}

// createTestShow adds a one-row show of four seats to app's database.
func createTestShow(t *testing.T, app *App) int64 {
	t.Helper()
	sh, err := app.DB.CreateShow(t.Context(), core.Show{Name: "Test", StartsAt: time.Now().Add(time.Hour)}, store.DemoSeats(1, 4, 1000))
	if err != nil {
		t.Fatal(err)
	}
	return sh.ID
}

// apiCall sends one API request with the test token and checks its status
// (want 0: any).
func apiCall(t *testing.T, base, method, path, body string, header map[string]string, want int) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want != 0 && resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d", method, path, resp.StatusCode, want)
	}
}
