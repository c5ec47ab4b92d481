package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

// The watcher marks stores down and up again by itself (recovery needs no
// restart), probes quickly while something is down, and probes at once
// when kicked.
func TestStoreHealthWatch(t *testing.T) {
	h := newStoreHealth()
	var down atomic.Pointer[[]string]
	probes := make(chan struct{}, 100)
	probe := func(context.Context) []string {
		defer func() { probes <- struct{}{} }()
		if d := down.Load(); d != nil {
			return *d
		}
		return nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); h.watch(ctx, probe) }()
	defer func() { cancel(); <-done }()

	waitProbe := func(within time.Duration) {
		t.Helper()
		select {
		case <-probes:
		case <-time.After(within):
			t.Fatalf("no probe within %v", within)
		}
	}
	// A probe's signal goes out as it returns, a moment before the watcher
	// records its result, so the state is awaited rather than read at once.
	waitDown := func(want string, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for h.Down() != want {
			if time.Now().After(deadline) {
				t.Fatalf("Down() = %q, want %q within %v", h.Down(), want, within)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitProbe(time.Second) // the first look is immediate
	waitDown("", time.Second)

	down.Store(&[]string{storeDatabase, storeSeats})
	h.kick() // a request failed: look now, not in healthEvery
	waitDown("database, seat store", time.Second)
	down.Store(nil)
	waitDown("", healthEveryDown+time.Second) // quick probes while down, not healthEvery
	for len(probes) > 0 {
		<-probes
	}
	h.kick()
	h.kick() // kicks never block, and many collapse into one probe
	waitProbe(time.Second)
}

func TestStoreStatusMiddleware(t *testing.T) {
	tests := []struct {
		name    string
		down    []string
		handler echo.HandlerFunc
		banner  string
		kicked  bool
	}{
		{"all up, ok", nil, func(c echo.Context) error { return c.NoContent(200) }, "", false},
		{"db down, page still renders", []string{storeDatabase}, func(c echo.Context) error { return c.NoContent(200) }, "database", false},
		{"store error kicks", nil, func(echo.Context) error { return fmt.Errorf("place: %w", core.ErrStoreUnavailable) }, "", true},
		{"console 503 page kicks", nil, func(c echo.Context) error { return c.NoContent(http.StatusServiceUnavailable) }, "", true},
		{"shed work does not: a rush is no outage", nil, func(echo.Context) error { return errOverloaded }, "", false},
		{"conflict does not", nil, func(echo.Context) error { return core.ErrSeatUnavailable }, "", false},
		{"internal does not", nil, func(echo.Context) error { return fmt.Errorf("bug") }, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newStoreHealth()
			h.set(tc.down)
			var banner any
			e := echo.New()
			e.Use(storeStatus(h))
			e.GET("/", func(c echo.Context) error {
				banner = c.Get(ContextKeyStoreDown)
				return tc.handler(c)
			})
			e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			if got, _ := banner.(string); got != tc.banner || (tc.banner == "" && banner != nil) {
				t.Errorf("context %s = %#v, want %q", ContextKeyStoreDown, banner, tc.banner)
			}
			if kicked := len(h.kicks) == 1; kicked != tc.kicked {
				t.Errorf("kicked = %v, want %v", kicked, tc.kicked)
			}
		})
	}
}

// awaitStoreDown kicks the app's health watcher until its probe has seen
// store down: /readyz answers from that probe.
func awaitStoreDown(t testing.TB, h *storeHealth, store string) {
	t.Helper()
	deadline := time.Now().Add(healthFresh)
	for !strings.Contains(h.Down(), store) {
		if time.Now().After(deadline) {
			t.Fatalf("the health watcher did not see the %s down within %v (down: %q)", store, healthFresh, h.Down())
		}
		h.kick()
		time.Sleep(5 * time.Millisecond)
	}
}
