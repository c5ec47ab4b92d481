package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// rawClient is one TCP connection speaking HTTP/1.1 by hand, so the test
// decides when a connection is kept, reused or opened.
type rawClient struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, conn: c, r: bufio.NewReader(c)}
}

func (c *rawClient) send(path string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawClient) read() (*http.Response, string) {
	c.t.Helper()
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("read response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// TestConnLimit: at a cap of 2 on a real listener, a new connection takes
// the place of the idle keep-alive one (closed), and with none idle a new
// one reads 503 overloaded with Retry-After, while a probe over the cap is
// still answered by the lane.
func TestConnLimit(t *testing.T) {
	reg := prometheus.NewRegistry()
	shed := prometheus.NewCounter(prometheus.CounterOpts{Name: "shed"})
	l := newConnLimit(2, shed, reg)
	full := make(chan struct{}, 1)
	l.reserveFull = func() { full <- struct{}{} }

	entered, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ready") })
	mux.HandleFunc("/block", func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = io.WriteString(w, "done")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	idle := make(chan struct{}, 8)
	srv := newHTTPServer("", mux, slog.New(slog.DiscardHandler))
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		l.track(c, s)
		if s == http.StateIdle {
			idle <- struct{}{}
		}
	}
	lane := newHTTPServer("", mux, slog.New(slog.DiscardHandler))
	lane.SetKeepAlivesEnabled(false)
	go func() { _ = srv.Serve(l.listener(ln)) }()
	go func() { _ = lane.Serve(l.laneListener(ln.Addr())) }()
	defer func() { srv.Close(); lane.Close() }()
	addr := ln.Addr().String()

	a := dialRaw(t, addr)
	a.send("/ok")
	if resp, body := a.read(); resp.StatusCode != 200 || body != "ok" {
		t.Fatalf("first: %d %q", resp.StatusCode, body)
	}
	await(t, idle) // a is a kept-alive connection waiting for its next request
	b := dialRaw(t, addr)
	b.send("/block")
	await(t, entered)
	if open := gaugeValue(t, reg, "seatflow_open_connections"); open != 2 {
		t.Fatalf("open connections %v, want 2", open)
	}

	c := dialRaw(t, addr) // at the cap: a, idle, makes room
	c.send("/block")
	await(t, entered)
	if _, err := a.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("the idle connection was not closed for the new one: %v", err)
	}

	d := dialRaw(t, addr) // at the cap, none idle
	d.send("/ok")
	resp, body := d.read()
	var e errorBody
	_ = json.Unmarshal([]byte(body), &e)
	if resp.StatusCode != http.StatusServiceUnavailable || e.Error.Code != "overloaded" || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("over the cap: %d %s, Retry-After %q; want 503 overloaded, 1", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	if _, err := d.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("the refused connection stays open: %v", err)
	}
	if n := testutil.ToFloat64(shed); n != 1 {
		t.Errorf("shed %v, want 1", n)
	}

	p := dialRaw(t, addr) // a probe over the cap: the lane answers
	p.send("/readyz")
	if resp, body := p.read(); resp.StatusCode != 200 || body != "ready" {
		t.Errorf("probe over the cap: %d %q, want 200 from the lane", resp.StatusCode, body)
	}

	// The reserve in use: an over-cap connection waits for a descriptor
	// to come free and is answered then, never closed unanswered.
	for range cap(l.spare) {
		l.spare <- struct{}{}
	}
	w := dialRaw(t, addr)
	w.send("/ok")
	await(t, full)
	<-l.spare
	if resp, body := w.read(); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("over the cap with the reserve in use: %d %s, want 503 once a descriptor came free", resp.StatusCode, body)
	}
	for range cap(l.spare) - 1 {
		<-l.spare
	}

	close(release)
	for _, cl := range []*rawClient{b, c} {
		if resp, body := cl.read(); resp.StatusCode != 200 || body != "done" {
			t.Errorf("held request: %d %q", resp.StatusCode, body)
		}
	}
	if cap := gaugeValue(t, reg, "seatflow_connections_limit"); cap != 2 {
		t.Errorf("seatflow_connections_limit %v, want 2", cap)
	}
}

// await receives from ch, failing the test instead of hanging when
// nothing comes (a guard, not a measure: the time is generous).
func await[T any](t *testing.T, ch <-chan T) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing came")
	}
}

// gaugeValue reads a registered gauge by its metric name.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("%s is not registered", name)
	return 0
}

// TestConnCap: the cap is what the descriptor limit leaves beside the
// stores; a setting over that, or too little room, is a start-up error
// naming SEATFLOW_MAX_CONNS.
func TestConnCap(t *testing.T) {
	for _, c := range []struct {
		name    string
		setting int
		nofile  uint64
		stores  int
		want    int
		err     string
	}{
		{"derived", 0, 20000, 100, 20000 - 100 - otherDescriptors - connReserve, ""},
		{"the setting, within room", 500, 20000, 100, 500, ""},
		{"the setting over the room", 19900, 20000, 100, 0, "SEATFLOW_MAX_CONNS=19900"},
		{"a tiny ulimit", 0, 256, 100, 0, "raise the limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := connCap(c.setting, c.nofile, c.stores)
			if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Errorf("connCap = %d, %v; want %d, %q", got, err, c.want, c.err)
			}
			if err != nil && !strings.Contains(err.Error(), "SEATFLOW_MAX_CONNS") {
				t.Errorf("the error does not name the setting: %v", err)
			}
		})
	}
}
