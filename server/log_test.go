package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/access"
)

func TestLoggerAddsTraceID(t *testing.T) {
	tests := []struct {
		name  string
		ctx   context.Context
		trace any // nil: no trace_id attribute
	}{
		{"with trace", core.WithTraceID(context.Background(), "abc123"), "abc123"},
		{"without trace", context.Background(), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := NewLogger(&buf, slog.LevelDebug).With("component", "test")
			logger.InfoContext(tc.ctx, "hello", "k", "v")
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("not JSON: %q", buf.String())
			}
			if line["trace_id"] != tc.trace || line["component"] != "test" {
				t.Errorf("line %v: trace_id %v, want %v", line, line["trace_id"], tc.trace)
			}
		})
	}
}

// A request's log line carries the trace id the response reports.
func TestRequestLogHasTraceID(t *testing.T) {
	var buf bytes.Buffer
	a := newTestApp(t)
	a.app.Handler = NewServer(a.app.cfg, Deps{Engine: a.app.engine, DB: a.app.DB, Hub: a.app.hub,
		Registry: prometheus.NewRegistry(), Logger: NewLogger(&buf, slog.LevelInfo)})
	rec := a.do("GET", "/api/v1/shows", "", "X-Request-ID", "trace-42")
	if rec.Header().Get("X-Request-ID") != "trace-42" {
		t.Fatalf("X-Request-ID %q", rec.Header().Get("X-Request-ID"))
	}
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q", buf.String())
	}
	if line["trace_id"] != "trace-42" || line["msg"] != "request" || line["status"] != 200.0 {
		t.Errorf("log line %v", line)
	}
}

// TestRequestLogRedactsSecrets: a password reset link's token (valid 24 h
// for whoever holds it) never reaches the log, whichever way the link is
// requested; the rest of the path still does.
func TestRequestLogRedactsSecrets(t *testing.T) {
	var buf bytes.Buffer
	a := newTestApp(t)
	a.app.Handler = NewServer(a.app.cfg, Deps{Engine: a.app.engine, DB: a.app.DB, Hub: a.app.hub,
		Registry: prometheus.NewRegistry(), Logger: NewLogger(&buf, slog.LevelDebug)})
	staff, err := a.app.DB.CreateStaff(t.Context(), access.Staff{Username: "ann", Role: access.RoleBoxOffice,
		CreatedAt: time.Now()}, "x")
	if err != nil {
		t.Fatal(err)
	}
	link, err := createResetLink(t.Context(), a.app.DB, staff, core.AuditEntry{At: time.Now(),
		Action: access.AuditPasswordResetLink})
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimPrefix(link, "/console/reset/")
	requests := []struct{ method, path string }{
		{"GET", link},
		{"POST", link},
		{"HEAD", link},
		{"GET", link + "/more"},
		{"GET", "/console//reset/" + token},
		{"GET", "/console/reset/" + token[:10] + "%2F" + token[10:]},
	}
	for _, r := range requests {
		buf.Reset()
		a.do(r.method, r.path, "", "Content-Type", "application/x-www-form-urlencoded")
		out := buf.String()
		if strings.Contains(out, token[:10]) || strings.Contains(out, token[10:]) {
			t.Errorf("%s %s: the token is in the log: %s", r.method, r.path, out)
		}
		if !strings.Contains(out, `"path":"/console/`) {
			t.Errorf("%s %s: no request line with the path: %s", r.method, r.path, out)
		}
	}
}

// TestConsoleLoginAbortedIsNoServerError: a login whose client goes away
// while it is checked (its context cancelled: the database call fails) is
// logged as a client that closed the request (499), not as an ERROR 500
// (issue 28 item 11).
func TestConsoleLoginAbortedIsNoServerError(t *testing.T) {
	var buf bytes.Buffer
	a := newTestApp(t)
	a.app.Handler = NewServer(a.app.cfg, Deps{Engine: a.app.engine, DB: a.app.DB, Hub: a.app.hub,
		Registry: prometheus.NewRegistry(), Logger: NewLogger(&buf, slog.LevelDebug)})
	form := a.do("GET", "/console/login", "")
	m := hiddenCSRF.FindStringSubmatch(form.Body.String())
	if m == nil {
		t.Fatalf("login form without a token: %s", form.Body)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	body := url.Values{"_csrf": {m[1]}, "username": {"ann"}, "password": {"secret"}}.Encode()
	req := httptest.NewRequestWithContext(ctx, "POST", "/console/login", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range form.Result().Cookies() {
		req.AddCookie(c)
	}
	buf.Reset()
	a.app.Handler.ServeHTTP(httptest.NewRecorder(), req)
	var logged []map[string]any
	for line := range strings.Lines(buf.String()) {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		logged = append(logged, l)
		if l["level"] == "ERROR" || l["status"] == 500.0 {
			t.Errorf("logged as a server error: %s", line)
		}
	}
	if len(logged) == 0 || logged[len(logged)-1]["msg"] != "request" || logged[len(logged)-1]["status"] != 499.0 {
		t.Errorf("no request line with status 499: %s", buf.String())
	}
}

// TestRequestLogShedIsQuiet: a request shed as overloaded is logged at
// debug, not as an error: in a rush there are thousands a second, and
// seatflow_shed_total counts them. The same request admitted is logged.
func TestRequestLogShedIsQuiet(t *testing.T) {
	var buf bytes.Buffer
	a := newTestApp(t, "SEATFLOW_MAX_INFLIGHT", "1")
	a.app.Handler = NewServer(a.app.cfg, Deps{Engine: a.app.engine, DB: a.app.DB, Hub: a.app.hub,
		Registry: prometheus.NewRegistry(), Logger: NewLogger(&buf, slog.LevelInfo)})
	done, ok := a.app.Handler.overload.limiter.Acquire()
	if !ok {
		t.Fatal("the limiter refused the first slot")
	}
	if rec := a.do("GET", "/api/v1/shows", ""); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("at the limit: %d %s, want 503", rec.Code, rec.Body)
	}
	if buf.Len() != 0 {
		t.Errorf("a shed request was logged at info or above: %s", buf.String())
	}
	done(0)
	if rec := a.do("GET", "/api/v1/shows", ""); rec.Code != http.StatusOK || !strings.Contains(buf.String(), `"status":200`) {
		t.Errorf("under the limit: %d, log %q", rec.Code, buf.String())
	}
}
