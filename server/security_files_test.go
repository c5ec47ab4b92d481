package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

// Strict JSON: what encoding/json lets through is refused with a clear 4xx
// code, and a body not declared JSON is 415.
func TestStrictJSONBodies(t *testing.T) {
	a := newTestApp(t)
	order := a.place(1, "A-1")["order_no"].(string)
	place := func(body string) string {
		return fmt.Sprintf(body, a.show.ID)
	}
	payBody := fmt.Sprintf(`{"order_no":%q,"txn_id":"T-ct","amount_cents":1500}`, order)
	dupPay := fmt.Sprintf(`{"order_no":%q,"txn_id":"T1","amount_cents":1,"amount_cents":1500}`, order)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	for _, tc := range []struct {
		name, method, path, body string
		header                   []string
		status                   int
		code                     string
	}{
		{"duplicate key", "POST", "/api/v1/orders", place(`{"user_id":2,"user_id":3,"show_id":%d,"seat_ids":["B-1"]}`), nil, 400, "invalid_request"},
		{"keys differing in case", "POST", "/api/v1/orders", place(`{"user_id":2,"USER_ID":3,"show_id":%d,"seat_ids":["B-1"]}`), nil, 400, "invalid_request"},
		{"key in the wrong case", "POST", "/api/v1/orders", place(`{"User_Id":2,"show_id":%d,"seat_ids":["B-1"]}`), nil, 400, "invalid_request"},
		{"nested key in the wrong case", "POST", "/api/v1/orders",
			place(`{"user_id":2,"show_id":%d,"seat_ids":["B-1"],"customer":{"Name":"Ann"}}`), nil, 400, "invalid_request"},
		{"nested duplicate key", "POST", "/api/v1/orders",
			place(`{"user_id":2,"show_id":%d,"seat_ids":["B-1"],"customer":{"name":"Ann","name":"Bob"}}`), nil, 400, "invalid_request"},
		{"duplicate key in the payment callback", "POST", "/api/v1/payments/callback", dupPay,
			[]string{"X-SeatFlow-Timestamp", ts, "X-SeatFlow-Signature", sign(testSecret, ts, dupPay)}, 400, "invalid_request"},
		{"no content type", "POST", "/api/v1/orders", place(`{"user_id":2,"show_id":%d,"seat_ids":["B-1"]}`),
			[]string{"Content-Type", ""}, 415, "unsupported_media_type"},
		{"text/plain", "POST", "/api/v1/orders/" + order + "/cancel", `{"user_id":1}`,
			[]string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
		{"form", "POST", "/api/v1/orders/" + order + "/extend", `{"minutes":5}`,
			[]string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"},
		{"json look-alike", "POST", "/api/v1/orders", place(`{"user_id":2,"show_id":%d,"seat_ids":["B-1"]}`),
			[]string{"Content-Type", "application/jsonp"}, 415, "unsupported_media_type"},
		{"payment callback as text/plain", "POST", "/api/v1/payments/callback", payBody,
			[]string{"Content-Type", "text/plain", "X-SeatFlow-Timestamp", ts, "X-SeatFlow-Signature", sign(testSecret, ts, payBody)},
			415, "unsupported_media_type"},
		{"json with charset", "POST", "/api/v1/orders", place(`{"user_id":2,"show_id":%d,"seat_ids":["B-1"]}`),
			[]string{"Content-Type", "application/json; charset=utf-8"}, 201, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := a.do(tc.method, tc.path, tc.body, tc.header...)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.code != "" {
				if got := errorCode(t, rec); got != tc.code {
					t.Errorf("code %q, want %q", got, tc.code)
				}
			}
		})
	}
	if n := a.count("payment"); n != 0 {
		t.Errorf("%d payments recorded from refused callbacks", n)
	}
}

// Every API answer, errors included, is JSON not to be sniffed or cached.
func TestAPIResponseHeaders(t *testing.T) {
	a := newTestApp(t)
	for _, tc := range []struct {
		name, method, path string
		header             []string
		status             int
	}{
		{"list", "GET", "/api/v1/shows", nil, 200},
		{"not found", "GET", "/api/v1/orders/SF-none", nil, 404},
		{"unauthorized", "GET", "/api/v1/shows", []string{"Authorization", ""}, 401},
		// The router's own answers, before any route's middleware runs.
		{"method not allowed", "PATCH", "/api/v1/orders", nil, 405},
		{"no such route", "GET", "/api/v1/nowhere", nil, 404},
	} {
		rec := a.do(tc.method, tc.path, "", tc.header...)
		if rec.Code != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, rec.Code, tc.status)
		}
		h := rec.Header()
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: X-Content-Type-Options %q, Cache-Control %q; want nosniff, no-store",
				tc.name, h.Get("X-Content-Type-Options"), h.Get("Cache-Control"))
		}
	}
}

// /readyz says what is down, never the address it could not reach; the log
// has that.
func TestReadyzHidesInternalErrors(t *testing.T) {
	logs := &syncBuffer{}
	redis, env := goneSeatStore(t)
	app, base, _ := startApp(t, env, NewLogger(logs, slog.LevelInfo))
	redis.Close() // the seat store goes away
	awaitStoreDown(t, app.health, storeSeats)
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "seat store") {
		t.Fatalf("readyz: %d %s, want 503 naming the seat store", resp.StatusCode, body)
	}
	for _, leak := range []string{"127.0.0.1", "dial", "tcp", "refused", "redis"} {
		if strings.Contains(string(body), leak) {
			t.Errorf("readyz tells the client %q: %s", leak, body)
		}
	}
	if !strings.Contains(logs.String(), `"msg":"not ready"`) {
		t.Errorf("the log lacks the readiness failure:\n%s", logs.String())
	}
}

// With SEATFLOW_METRICS_TOKEN set, /metrics needs it as a bearer token.
func TestMetricsToken(t *testing.T) {
	const token = "metrics-token-0123456789"
	a := newTestApp(t, "SEATFLOW_METRICS_TOKEN", token)
	for _, tc := range []struct {
		name, auth string
		status     int
	}{
		{"no token", "", 401},
		{"the API token", "Bearer " + testToken, 401},
		{"the metrics token", "Bearer " + token, 200},
	} {
		rec := a.do("GET", "/metrics", "", "Authorization", tc.auth)
		if rec.Code != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, rec.Code, tc.status)
		}
	}
	if rec := newTestApp(t).do("GET", "/metrics", "", "Authorization", ""); rec.Code != 200 {
		t.Errorf("without SEATFLOW_METRICS_TOKEN /metrics answers %d, want 200", rec.Code)
	}
}

// The console's static folder lists nothing; its files are served.
func TestStaticFolderHasNoListing(t *testing.T) {
	a := newTestApp(t)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/console/static/", 404},
		{"/console/static/.", 404},
		{"/console/static/./", 404},
		{"/console/static/console.css", 200},
		{"/console/static/nope.js", 404},
	} {
		rec := a.do("GET", tc.path, "", "Authorization", "")
		if rec.Code != tc.status {
			t.Errorf("GET %s: %d, want %d: %.200s", tc.path, rec.Code, tc.status, rec.Body)
		}
		if strings.Contains(rec.Body.String(), "console.js") && !strings.HasSuffix(tc.path, ".css") {
			t.Errorf("GET %s lists the folder: %.200s", tc.path, rec.Body)
		}
	}
}

// Reconcile runs shown to API clients do not name the host or the pid.
func TestReconcileRunsHideTheInstance(t *testing.T) {
	a := newTestApp(t)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(os.Getpid())
	// The run at start may still hold the lease: its 409 must not name the
	// instance either; then try again.
	var posted *httptest.ResponseRecorder
	for {
		posted = a.do("POST", "/api/v1/reconcile/runs?dry_run=true", "")
		if posted.Code != http.StatusConflict {
			break
		}
		if body := posted.Body.String(); strings.Contains(body, host) || strings.Contains(body, "-"+pid) {
			t.Fatalf("reconcile_busy names host %q or pid %s: %s", host, pid, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if posted.Code != http.StatusCreated {
		t.Fatalf("run: %d %s", posted.Code, posted.Body)
	}
	listed := a.do("GET", "/api/v1/reconcile/runs", "")
	for name, rec := range map[string]*httptest.ResponseRecorder{"POST": posted, "GET": listed} {
		body := rec.Body.String()
		if strings.Contains(body, host) || strings.Contains(body, "-"+pid) {
			t.Errorf("%s reconcile/runs names host %q or pid %s: %s", name, host, pid, body)
		}
		if !strings.Contains(body, `"owner":"instance-`) {
			t.Errorf("%s reconcile/runs has no instance digest: %s", name, body)
		}
	}
}

// A client that leaves mid-request is a 499 at debug level, never a 5xx in
// the metrics and never an ERROR line: an API call whose store work is
// cut short, and a seat-map stream the browser closes.
func TestClientDisconnectIs499(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler echo.HandlerFunc
	}{
		{"store call cut short", func(c echo.Context) error {
			<-c.Request().Context().Done()
			return fmt.Errorf("query seats: %w", c.Request().Context().Err())
		}},
		{"stream closed by the browser", func(c echo.Context) error {
			c.Response().WriteHeader(http.StatusOK)
			c.Response().Flush()
			<-c.Request().Context().Done()
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			reg := prometheus.NewRegistry()
			e := echo.New()
			e.HTTPErrorHandler = handleError
			e.Use(requestLog(NewLogger(&logs, slog.LevelDebug), newHTTPMetrics(reg)))
			started := make(chan struct{})
			e.GET("/x", func(c echo.Context) error { close(started); return tc.handler(c) },
				deadline(time.Hour)) // the API's deadline wraps the context, as in routes.go
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer close(done)
				e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, "GET", "/x", nil))
			}()
			<-started
			cancel() // the client goes away
			<-done
			if strings.Contains(logs.String(), `"level":"ERROR"`) || !strings.Contains(logs.String(), `"status":499`) ||
				!strings.Contains(logs.String(), `"level":"DEBUG"`) {
				t.Errorf("log is not one DEBUG line with status 499:\n%s", logs.String())
			}
			if got := requestCounts(t, reg); got != "499" {
				t.Errorf("requests counted by status %q, want only 499", got)
			}
		})
	}

	// The whole stack: a canceled request to place an order writes no
	// order and counts no 5xx.
	a := newTestApp(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	req := httptest.NewRequestWithContext(ctx, "POST", "/api/v1/orders",
		strings.NewReader(fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["A-1"]}`, a.show.ID)))
	req.Header.Set("Content-Type", "application/json")
	rec := serve(t, a, req)
	if rec.Code < 400 || rec.Code >= 500 {
		t.Errorf("canceled place: status %d, want 4xx (499): %s", rec.Code, rec.Body)
	}
	if m := a.do("GET", "/metrics", "").Body.String(); regexp.MustCompile(`route="/api/v1/orders",status="5\d\d"\} [1-9]`).MatchString(m) {
		t.Errorf("a canceled request counted as 5xx:\n%s", m)
	}
}

// requestCounts lists the status labels of seatflow_http_requests_total.
func requestCounts(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, f := range families {
		if f.GetName() != "seatflow_http_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "status" {
					statuses = append(statuses, l.GetValue())
				}
			}
		}
	}
	return strings.Join(statuses, ",")
}
