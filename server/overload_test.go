package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/admission"
)

// TestOverloadSheds: with the limit of API work held full by requests
// blocked in their handler, the next costly request is refused at once
// with 503 overloaded and Retry-After, while the lane still answers:
// probes, metrics, the contract, the payment callback and a clerk signing
// in and force-cancelling in the console.
func TestOverloadSheds(t *testing.T) {
	a := newTestApp(t, "SEATFLOW_MAX_INFLIGHT", "2")
	toPay := a.place(1, "A-1")
	toCancel := a.place(2, "B-1")
	clerk := (&consoleEnv{t: t, e: a.app.Handler.echo, db: a.app.DB}).addStaff("clerk", access.RoleBoxOffice)

	// Both limits held full: API work other than placements, and placements.
	entered, release := make(chan struct{}), make(chan struct{})
	a.app.Handler.overload.admitted = func(c echo.Context) {
		if p := c.Request().URL.Path; p == "/api/v1/shows" || p == "/api/v1/orders" && c.Request().Method == "POST" {
			entered <- struct{}{}
			<-release
		}
	}
	heldReqs := []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/api/v1/shows", "", http.StatusOK},
		{"GET", "/api/v1/shows", "", http.StatusOK},
		{"POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":5,"show_id":%d,"seat_ids":["A-2"]}`, a.show.ID), http.StatusCreated},
		{"POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":6,"show_id":%d,"seat_ids":["B-2"]}`, a.show.ID), http.StatusCreated},
	}
	var wg sync.WaitGroup
	held := make([]int, len(heldReqs))
	for i, r := range heldReqs {
		wg.Go(func() { held[i] = a.do(r.method, r.path, r.body).Code })
	}
	for range held {
		<-entered
	}
	for name, l := range map[string]*admission.Limiter{"other": a.app.Handler.overload.limiter, "placements": a.app.Handler.overload.place} {
		if s := l.Stats(); s.InFlight != 2 || s.Limit != 2 {
			t.Fatalf("%s limiter %+v, want 2 in flight at a limit of 2", name, s)
		}
	}

	for _, c := range []struct{ method, path, body string }{
		{"GET", fmt.Sprintf("/api/v1/shows/%d", a.show.ID), ""},
		{"POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":3,"show_id":%d,"seat_ids":["C-1"]}`, a.show.ID)},
		{"GET", "/api/v1/orders/" + toPay["order_no"].(string), ""},
	} {
		rec := a.do(c.method, c.path, c.body)
		if rec.Code != http.StatusServiceUnavailable || errorCode(t, rec) != "overloaded" || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("%s %s at the limit: %d %s, Retry-After %q; want 503 overloaded, 1",
				c.method, c.path, rec.Code, rec.Body, rec.Header().Get("Retry-After"))
		}
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/api/v1/openapi.json"} {
		if rec := a.do("GET", path, "", "Authorization", ""); rec.Code != http.StatusOK {
			t.Errorf("GET %s at the limit: %d %s", path, rec.Code, rec.Body)
		}
	}
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-rush","amount_cents":1500}`, toPay["order_no"])); rec.Code != http.StatusOK {
		t.Errorf("payment callback at the limit: %d %s", rec.Code, rec.Body)
	}
	b := (&consoleEnv{t: t, e: a.app.Handler.echo, db: a.app.DB}).browser()
	if rec := b.login(clerk.Username, testPassword); rec.Code != http.StatusSeeOther {
		t.Fatalf("console login at the limit: %d", rec.Code)
	}
	rec := b.post("/console/orders/"+toCancel["order_no"].(string)+"/cancel",
		url.Values{"reason": {"double booking"}, "confirm": {"1"}})
	if rec.Code != http.StatusSeeOther || !strings.HasSuffix(rec.Header().Get("Location"), "?outcome=cancelled") {
		t.Errorf("console force-cancel at the limit: %d, Location %q", rec.Code, rec.Header().Get("Location"))
	}
	metrics := a.do("GET", "/metrics", "").Body.String()
	for _, want := range []string{`seatflow_shed_total{reason="concurrency"} 3`,
		`seatflow_api_inflight{work="other"} 2`, `seatflow_api_inflight_limit{work="other"} 2`,
		`seatflow_api_inflight{work="placements"} 2`, `seatflow_api_inflight_limit{work="placements"} 2`} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	close(release)
	wg.Wait()
	for i, r := range heldReqs {
		if held[i] != r.want {
			t.Errorf("held %s %s answered %d, want %d", r.method, r.path, held[i], r.want)
		}
	}
	if rec := a.do("GET", fmt.Sprintf("/api/v1/shows/%d", a.show.ID), ""); rec.Code != http.StatusOK {
		t.Errorf("after the held requests ended: %d %s, want 200", rec.Code, rec.Body)
	}
}

// TestMaxInFlight: the derived bound leaves poolReserve connections of
// the database pool to the console lane, and never goes under the
// limiter's minimum; the setting wins.
func TestMaxInFlight(t *testing.T) {
	for _, c := range []struct {
		name      string
		setting   int
		pool, max int
	}{
		{"MySQL default pool", 0, 32, 28},
		{"SQLite read pool", 0, 8, 4},
		{"small pool: the minimum", 0, 2, 4},
		{"the setting", 50, 32, 50},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := maxInFlight(Config{MaxInFlight: c.setting}, c.pool); got != c.max {
				t.Errorf("maxInFlight = %d, want %d", got, c.max)
			}
		})
	}
}

// TestPlacementsHaveTheirOwnLimit: with the derived bounds (SQLite: 8
// read connections, so 4 for API work other than placements) and that
// limit held full, a placement is still admitted, as it waits for the
// group commit holding no connection; and placements are bounded by what
// the group commit takes in a round, not by the pool.
func TestPlacementsHaveTheirOwnLimit(t *testing.T) {
	a := newTestApp(t)
	o := a.app.Handler.overload
	if s := o.place.Stats(); s.Max != core.PlacementsInFlight {
		t.Errorf("placements limit max %d, want core.PlacementsInFlight %d", s.Max, core.PlacementsInFlight)
	}
	most := o.limiter.Stats().Max
	entered, release := make(chan struct{}), make(chan struct{})
	o.admitted = func(c echo.Context) {
		if c.Request().URL.Path == "/api/v1/shows" {
			entered <- struct{}{}
			<-release
		}
	}
	var wg sync.WaitGroup
	for range most {
		wg.Go(func() { a.do("GET", "/api/v1/shows", "") })
	}
	for range most {
		<-entered
	}
	if rec := a.do("GET", fmt.Sprintf("/api/v1/shows/%d", a.show.ID), ""); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("a read with the other limit full: %d, want 503", rec.Code)
	}
	a.place(7, "C-2") // fails the test unless 201
	close(release)
	wg.Wait()
}

// TestMaxPlacements: placements are bounded by the group commit's round,
// whatever the pool; the setting wins.
func TestMaxPlacements(t *testing.T) {
	for _, c := range []struct {
		name    string
		setting int
		max     int
	}{
		{"derived", 0, core.PlacementsInFlight},
		{"the setting", 50, 50},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := maxPlacements(Config{MaxInFlight: c.setting}); got != c.max {
				t.Errorf("maxPlacements = %d, want %d", got, c.max)
			}
		})
	}
}

// TestReadyzAnswersFromTheProbe: /readyz answers from the health
// watcher's fresh probe and never waits for a database connection: here
// the database's only write connection (which a ping takes first) is held
// throughout. Its 503 semantics stay those of the probe.
func TestReadyzAnswersFromTheProbe(t *testing.T) {
	a := newTestApp(t)
	h := newStoreHealth() // no watcher runs: the test sets what the probe found
	s := NewServer(a.app.cfg, Deps{Engine: a.app.engine, DB: a.app.DB, Hub: a.app.hub,
		Registry: prometheus.NewRegistry(), Logger: NewLogger(io.Discard, slog.LevelInfo), health: h})
	conn, err := a.app.DB.X().Conn(t.Context()) // the pool has no other
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	for _, c := range []struct {
		name   string
		down   []string
		status int
		says   string
	}{
		{"all up", nil, http.StatusOK, `"ready"`},
		{"seat store down", []string{storeSeats}, http.StatusServiceUnavailable, "not answering: seat store"},
		{"database down", []string{storeDatabase}, http.StatusServiceUnavailable, "not answering: database"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h.set(c.down)
			rec := httptestDo(s, "GET", "/readyz")
			if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.says) {
				t.Errorf("readyz %d %s, want %d saying %q", rec.Code, rec.Body, c.status, c.says)
			}
		})
	}
	// A probe older than healthFresh is not trusted: readyz pings itself,
	// and the held connection makes that fail.
	h.probed.Store(time.Now().Add(-healthFresh - time.Second).UnixNano())
	if rec := httptestDo(s, "GET", "/readyz"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("readyz on a stale probe: %d %s, want 503 from its own ping", rec.Code, rec.Body)
	}
}

func httptestDo(h http.Handler, method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// TestSeatMapPastTheLimit: with the limit of API work held full, a seat
// map read of a show whose map is cached fresh is answered from the cache;
// with the cache off it is shed like any other read.
func TestSeatMapPastTheLimit(t *testing.T) {
	for _, c := range []struct {
		name, maxAge string
		want         int
	}{
		{"cached fresh", "1h", http.StatusOK},
		{"cache off", "0s", http.StatusServiceUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newTestApp(t, "SEATFLOW_MAX_INFLIGHT", "2", "SEATFLOW_SEAT_MAP_MAX_AGE", c.maxAge)
			path := fmt.Sprintf("/api/v1/shows/%d/seats", a.show.ID)
			if rec := a.do("GET", path, ""); rec.Code != http.StatusOK {
				t.Fatalf("first read: %d %s", rec.Code, rec.Body)
			}
			entered, release := make(chan struct{}), make(chan struct{})
			a.app.Handler.overload.admitted = func(c echo.Context) {
				if c.Request().URL.Path == "/api/v1/shows" {
					entered <- struct{}{}
					<-release
				}
			}
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() { a.do("GET", "/api/v1/shows", "") })
			}
			for range 2 {
				<-entered
			}
			if rec := a.do("GET", path, ""); rec.Code != c.want {
				t.Errorf("seat map read at the limit: %d, want %d", rec.Code, c.want)
			}
			if c.want == http.StatusOK { // past the limit, never past the key check
				if rec := a.do("GET", path, "", "Authorization", ""); rec.Code != http.StatusUnauthorized {
					t.Errorf("seat map read without a key at the limit: %d, want 401", rec.Code)
				}
			}
			close(release)
			wg.Wait()
		})
	}
}
