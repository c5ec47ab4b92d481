package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// opsApp builds an App from env (plus the test token and secret) and
// loopback listeners for its API and its operations routes; before
// serving, prepare can set the App's test hooks. It returns the two
// addresses and a stop that shuts it down as SIGTERM does and reports
// Serve's error.
func opsApp(t *testing.T, env map[string]string, prepare func(*App)) (api, ops string, stop func() error) {
	t.Helper()
	env["SEATFLOW_DB"] = "sqlite://" + filepath.Join(t.TempDir(), "seatflow.db")
	env["SEATFLOW_API_TOKEN"], env["SEATFLOW_PAYMENT_SECRET"] = testToken, testSecret
	env["SEATFLOW_OPS_LISTEN"] = "127.0.0.1:0"
	cfg, err := LoadConfig(mapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApp(t.Context(), cfg, NewLogger(io.Discard, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	public, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opsLn, err := net.Listen("tcp", cfg.OpsAddr)
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(app)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.serveOn(ctx, public, opsLn, nil) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-served
	}
	t.Cleanup(func() { _ = stop() })
	return public.Addr().String(), opsLn.Addr().String(), stop
}

// opsGet is one GET with its own connection and a bound, for a probe.
func opsGet(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestOpsListener: with SEATFLOW_OPS_LISTEN, /healthz, /readyz and
// /metrics answer on that listener (with /metrics's token as on the API's),
// nothing else does, the routes stay on the API's listener, and the
// listener closes with the server.
func TestOpsListener(t *testing.T) {
	const metricsToken = "metrics-token-0123456789"
	api, ops, stop := opsApp(t, map[string]string{"SEATFLOW_METRICS_TOKEN": metricsToken}, nil)
	for _, c := range []struct {
		path, token string
		code        int
		body        string
	}{
		{"/healthz", "", http.StatusOK, `"ok"`},
		{"/readyz", "", http.StatusOK, `"ready"`},
		{"/metrics", metricsToken, http.StatusOK, "seatflow_open_connections"},
		{"/metrics", "", http.StatusUnauthorized, ""},
		{"/api/v1/shows", testToken, http.StatusNotFound, ""},
		{"/console/login", "", http.StatusNotFound, ""},
	} {
		if code, body := opsGet(t, "http://"+ops+c.path, c.token); code != c.code || !strings.Contains(body, c.body) {
			t.Errorf("ops %s: %d %.120q; want %d with %q", c.path, code, body, c.code, c.body)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _ := opsGet(t, "http://"+api+path, ""); code != http.StatusOK {
			t.Errorf("API listener %s: %d, want 200: existing probes must keep working", path, code)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", ops); err == nil {
		c.Close()
		t.Error("the operations listener still accepts after the server stopped")
	}
}

// TestOpsListenerOverTheCap: with the API listener's connection cap full
// (every connection busy) and its reserve in use, a /readyz sent there
// waits, while the operations listener answers at once: it is not behind
// the API's connections.
func TestOpsListenerOverTheCap(t *testing.T) {
	waiting := make(chan struct{}, 1)
	var conns *connLimit
	api, ops, _ := opsApp(t, map[string]string{"SEATFLOW_MAX_CONNS": "2"}, func(a *App) {
		conns = a.conns
		conns.reserveFull = func() { waiting <- struct{}{} }
	})
	probe, held := overTheCap(t, conns, api, waiting)
	// Given back before the server stops, whatever fails first.
	t.Cleanup(func() {
		for range *held {
			<-conns.spare
		}
	})

	code, body := opsGet(t, "http://"+ops+"/readyz", "")
	if code != http.StatusOK || !strings.Contains(body, `"ready"`) {
		t.Errorf("ops /readyz over the API's cap: %d %q, want 200 ready", code, body)
	}
	// Answered while the API listener's probe still waits for the
	// reserve: the ops listener did not wait behind the API's connections.
	_ = probe.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := probe.r.Peek(1); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the API listener's /readyz was answered before the ops one: %v", err)
	}

	// A descriptor comes free: the waiting probe is answered by the lane.
	<-conns.spare
	*held--
	_ = probe.conn.SetReadDeadline(time.Time{})
	if resp, _ := probe.read(); resp.StatusCode != http.StatusOK {
		t.Errorf("the API listener's /readyz once a descriptor came free: %d, want 200", resp.StatusCode)
	}
}

// overTheCap fills the API listener of an app whose SEATFLOW_MAX_CONNS is
// 2 (conns, with reserveFull signalling on waiting): two connections that
// send nothing (open, never idle, so none is closed to make room), the
// lane's reserve in use, and a /readyz on a third that waits for a
// descriptor. held is how many reserve slots the test still holds.
func overTheCap(t *testing.T, conns *connLimit, api string, waiting chan struct{}) (probe *rawClient, held *int) {
	t.Helper()
	for range 2 {
		dialRaw(t, api)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		conns.mu.Lock()
		n := len(conns.conns)
		conns.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open on the API listener, want 2", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range cap(conns.spare) { // the reserve in use, as when the lane is busy
		conns.spare <- struct{}{}
	}
	n := cap(conns.spare)
	probe = dialRaw(t, api)
	probe.send("/readyz")
	await(t, waiting)
	_ = probe.conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := probe.r.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the API listener's /readyz did not wait over the cap: %v", err)
	}
	return probe, &n
}

// TestShutdownOverTheCap stops the server while a connection over the cap
// waits for the lane's reserve: the accept that hands it over must not
// hold up the graceful shutdown (it did, until the process was killed).
func TestShutdownOverTheCap(t *testing.T) {
	waiting := make(chan struct{}, 1)
	var conns *connLimit
	api, _, stop := opsApp(t, map[string]string{"SEATFLOW_MAX_CONNS": "2", "SEATFLOW_SHUTDOWN_TIMEOUT": "2s"}, func(a *App) {
		conns = a.conns
		conns.reserveFull = func() { waiting <- struct{}{} }
	})
	_, held := overTheCap(t, conns, api, waiting)
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// Only a bound on a hang: a shutdown waits at most its 2 s timeout.
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		for range *held { // unblock it, so the test ends
			<-conns.spare
		}
		<-stopped
		t.Fatal("serve did not stop while a connection waited for the reserve")
	}
}
