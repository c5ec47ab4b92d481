package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestPprofListener: with SEATFLOW_PPROF_ADDR the runtime's profiles answer
// on that listener only, never on the public address, and the listener
// closes with the server.
func TestPprofListener(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:6060", "[::1]:6060", "localhost:0"} {
		if err := validLoopbackAddr(addr); err != nil {
			t.Errorf("%s refused: %v", addr, err)
		}
	}
	cfg, err := LoadConfig(mapEnv(map[string]string{
		"SEATFLOW_DB":         "sqlite://" + filepath.Join(t.TempDir(), "seatflow.db"),
		"SEATFLOW_PPROF_ADDR": "127.0.0.1:0",
		"SEATFLOW_API_TOKEN":  testToken, "SEATFLOW_PAYMENT_SECRET": testSecret,
	}))
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApp(t.Context(), cfg, NewLogger(io.Discard, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	public, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := net.Listen("tcp", cfg.PprofAddr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.serveOn(ctx, public, nil, profiles) }()

	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://" + profiles.Addr().String() + "/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Errorf("goroutine profile on the profiles listener: %d %.80q", code, body)
	}
	if code, body := get("http://" + profiles.Addr().String() + "/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "heap") {
		t.Errorf("profile index: %d %.80q", code, body)
	}
	if code, _ := get("http://" + public.Addr().String() + "/debug/pprof/goroutine?debug=1"); code != http.StatusNotFound {
		t.Errorf("profiles on the public address answer %d, want 404", code)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", profiles.Addr().String()); err == nil {
		c.Close()
		t.Error("the profiles listener still accepts after the server stopped")
	}
}

// TestPprofRefusesOtherHosts: a page on another site that resolves its own
// name to 127.0.0.1 (DNS rebinding) can make a browser on the host send
// requests to the profiles listener; they carry that name as Host and are
// refused. Loopback names and addresses are served (issue 28 item 11).
func TestPprofRefusesOtherHosts(t *testing.T) {
	h := pprofHandler()
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:6060", http.StatusOK},
		{"127.0.0.1", http.StatusOK},
		{"127.5.6.7:6060", http.StatusOK},
		{"[::1]:6060", http.StatusOK},
		{"localhost:6060", http.StatusOK},
		{"LOCALHOST", http.StatusOK},
		{"evil.example:6060", http.StatusForbidden},
		{"evil.example", http.StatusForbidden},
		{"localhost.evil.example:6060", http.StatusForbidden},
		{"10.0.0.5:6060", http.StatusForbidden},
		{"", http.StatusForbidden},
	} {
		t.Run(tc.host, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/debug/pprof/cmdline", nil)
			req.Host = tc.host
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("Host %q: status %d, want %d", tc.host, rec.Code, tc.want)
			}
		})
	}
}
