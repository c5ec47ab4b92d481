package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"seatflow/core"
	"seatflow/core/access"
)

// TestAbuseLimits runs requests through the abuse middleware with a frozen
// clock: a key's and an address's buckets, which address counts, and the
// 429 a client gets.
func TestAbuseLimits(t *testing.T) {
	forwarder := access.APIKey{ID: 7, Prefix: "sfk_fwd", Scopes: []access.Scope{access.ScopeOrdersWrite, access.ScopeClientIP}}
	plain := access.APIKey{ID: 8, Prefix: "sfk_plain", Scopes: []access.Scope{access.ScopeOrdersWrite}}
	type req struct {
		key    access.APIKey
		header string // X-SeatFlow-Client-IP
		wait   time.Duration
		status int
	}
	cases := []struct {
		name   string
		limits RateLimits
		reqs   []req
		reason string // the one reason counted, if any
	}{
		{"a key's burst, then one a second", RateLimits{PerKey: 1}, []req{
			{plain, "", 0, 200}, {plain, "", 0, 200}, {plain, "", 0, 429},
			{forwarder, "", 0, 200}, // another key, another bucket
			{plain, "", time.Second, 200}, {plain, "", 0, 429},
		}, core.RateLimitKey},
		{"forwarded addresses count apart", RateLimits{PerClient: 1}, []req{
			{forwarder, "203.0.113.5", 0, 200}, {forwarder, "203.0.113.5", 0, 200}, {forwarder, "203.0.113.5", 0, 429},
			{forwarder, "203.0.113.6", 0, 200},
			{forwarder, "::ffff:203.0.113.6", 0, 200}, // the same address, written as IPv6
			{forwarder, "203.0.113.6", 0, 429},
		}, core.RateLimitClient},
		{"the addresses of one IPv6 /64 count as one", RateLimits{PerClient: 1}, []req{
			{forwarder, "2001:db8:1:2::1", 0, 200}, {forwarder, "2001:db8:1:2::2", 0, 200},
			{forwarder, "2001:db8:1:2:ffff:ffff:ffff:ffff", 0, 429},
			{forwarder, "2001:db8:1:3::1", 0, 200}, // the next /64
		}, core.RateLimitClient},
		{"a longer IPv6 prefix counts narrower networks", RateLimits{PerClient: 1, IPv6Prefix: 128}, []req{
			{forwarder, "2001:db8:1:2::1", 0, 200}, {forwarder, "2001:db8:1:2::1", 0, 200},
			{forwarder, "2001:db8:1:2::2", 0, 200},
		}, core.RateLimitClient},
		{"a key without the right cannot pick an address", RateLimits{PerClient: 1}, []req{
			{plain, "203.0.113.5", 0, 200}, {plain, "203.0.113.6", 0, 200}, {plain, "203.0.113.7", 0, 429},
		}, core.RateLimitClient},
		{"a bad forwarded address", RateLimits{PerClient: 1}, []req{
			{forwarder, "not-an-ip", 0, 400}, {forwarder, "fe80::1%eth0", 0, 400},
		}, ""},
		{"no limits", RateLimits{}, []req{{plain, "", 0, 200}, {plain, "", 0, 200}, {plain, "", 0, 200}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(1_800_000_000, 0)
			a := newAbuseLimits(tc.limits, prometheus.NewRegistry())
			a.clock = func() time.Time { return now }
			e := echo.New()
			e.HTTPErrorHandler = handleError
			var key access.APIKey
			e.GET("/x", func(c echo.Context) error { return c.String(200, clientIPOf(c)) },
				func(next echo.HandlerFunc) echo.HandlerFunc {
					return func(c echo.Context) error { c.Set(contextKeyAPIKey, key); return next(c) }
				}, a.middleware)
			limited := 0
			for i, r := range tc.reqs {
				now = now.Add(r.wait)
				key = r.key
				hr := httptest.NewRequest("GET", "/x", nil)
				hr.RemoteAddr = "192.0.2.1:5000"
				if r.header != "" {
					hr.Header.Set(clientIPHeader, r.header)
				}
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, hr)
				if rec.Code != r.status {
					t.Fatalf("request %d: status %d, want %d: %s", i, rec.Code, r.status, rec.Body)
				}
				if rec.Code == 429 {
					limited++
					if rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), `"rate_limited"`) {
						t.Errorf("request %d: Retry-After %q, body %s", i, rec.Header().Get("Retry-After"), rec.Body)
					}
				}
			}
			if tc.reason != "" {
				var got float64
				for _, k := range []access.APIKey{plain, forwarder} {
					got += testutil.ToFloat64(a.limited.WithLabelValues(keyLabel(k), tc.reason))
				}
				if int(got) != limited {
					t.Errorf("seatflow_rate_limited_total{reason=%q} = %v, want %d", tc.reason, got, limited)
				}
			}
		})
	}
}

// TestHoldsPerClient: through the real app, one address may have at most
// SEATFLOW_MAX_HOLDS_PER_CLIENT holds open on a show; a forwarded address
// counts for itself; a cancelled hold no longer counts, at once.
func TestHoldsPerClient(t *testing.T) {
	app, base, _ := startApp(t, map[string]string{"SEATFLOW_MAX_HOLDS_PER_CLIENT": "2"}, nil)
	show := createTestShow(t, app)
	place := func(seat, forwarded string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/api/v1/orders",
			strings.NewReader(fmt.Sprintf(`{"user_id":%d,"show_id":%d,"seat_ids":[%q]}`, time.Now().UnixNano()%1e9+1, show, seat)))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		if forwarded != "" {
			req.Header.Set(clientIPHeader, forwarded)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	var first orderJSON
	for _, seat := range []string{"A-1", "A-2"} {
		resp, body := place(seat, "")
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("hold %s: %d %s", seat, resp.StatusCode, body)
		}
		if first.OrderNo == "" {
			if err := json.Unmarshal([]byte(body), &first); err != nil {
				t.Fatal(err)
			}
		}
	}
	resp, body := place("A-3", "")
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "too_many_holds") || resp.Header.Get("Retry-After") != "60" {
		t.Fatalf("third hold from one address: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if resp, body := place("A-3", "203.0.113.9"); resp.StatusCode != http.StatusCreated {
		t.Errorf("a forwarded address has holds of its own: %d %s", resp.StatusCode, body)
	}
	if got := testutil.ToFloat64(app.Handler.abuse.limited.WithLabelValues(bootstrapKey.Name, core.RateLimitHolds)); got != 1 {
		t.Errorf("seatflow_rate_limited_total{reason=holds_per_client} = %v, want 1", got)
	}
	// A cancelled hold stops counting at once.
	req, _ := http.NewRequest("POST", base+"/api/v1/orders/"+first.OrderNo+"/cancel",
		strings.NewReader(fmt.Sprintf(`{"user_id":%d}`, first.UserID)))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	cancelled, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancelled.Body.Close()
	if cancelled.StatusCode != http.StatusOK {
		t.Fatalf("cancel: %d", cancelled.StatusCode)
	}
	if resp, body := place("A-4", ""); resp.StatusCode != http.StatusCreated {
		t.Errorf("a hold after cancelling one: %d %s", resp.StatusCode, body)
	}
}

// TestHoldsPerClientCountsIPv6Networks: the holds cap counts the
// addresses of one IPv6 /64 together: one machine may pick any of them.
func TestHoldsPerClientCountsIPv6Networks(t *testing.T) {
	app, base, _ := startApp(t, map[string]string{"SEATFLOW_MAX_HOLDS_PER_CLIENT": "2"}, nil)
	show := createTestShow(t, app)
	place := func(seat, forwarded string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/api/v1/orders",
			strings.NewReader(fmt.Sprintf(`{"user_id":%d,"show_id":%d,"seat_ids":[%q]}`, time.Now().UnixNano()%1e9+1, show, seat)))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(clientIPHeader, forwarded)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for i, seat := range []string{"A-1", "A-2"} {
		if code, body := place(seat, fmt.Sprintf("2001:db8:7:8::%d", i+1)); code != http.StatusCreated {
			t.Fatalf("hold %s: %d %s", seat, code, body)
		}
	}
	if code, body := place("A-3", "2001:db8:7:8:abcd::99"); code != http.StatusTooManyRequests || !strings.Contains(body, "too_many_holds") {
		t.Errorf("a third hold from the same /64: %d %s", code, body)
	}
	if code, body := place("A-3", "2001:db8:7:9::1"); code != http.StatusCreated {
		t.Errorf("a hold from the next /64: %d %s", code, body)
	}
}

// TestReconcileAPIOncePerTenSeconds: a second run started through the API
// within 10 s is refused with when to retry.
func TestReconcileAPIOncePerTenSeconds(t *testing.T) {
	app, base, _ := startApp(t, map[string]string{}, nil)
	now := time.Now()
	app.Handler.abuse.clock = func() time.Time { return now }
	run := func() *http.Response {
		req, _ := http.NewRequest("POST", base+"/api/v1/reconcile/runs?dry_run=true", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// The scheduler's first run may hold the lease: 409, which leaves the
	// slot free. Wait for a run of ours to start.
	deadline := time.Now().Add(30 * time.Second)
	for resp := run(); resp.StatusCode != http.StatusCreated; resp = run() {
		if resp.StatusCode != http.StatusConflict || time.Now().After(deadline) {
			t.Fatalf("first run: %d", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
	now = now.Add(4 * time.Second)
	if resp := run(); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "6" {
		t.Fatalf("a run 4 s later: %d, Retry-After %q; want 429 after 6", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	now = now.Add(6 * time.Second)
	if resp := run(); resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusConflict {
		t.Errorf("a run 10 s after the first: %d, want it let through (201, or 409 if the scheduler holds the lease)", resp.StatusCode)
	}
}

// TestAbuseBucketsSweptOnlyAsTheSetDoubles: a set of buckets all in use
// (a rush's buyers) is swept once, not on every new address; idle ones
// go when the set has doubled since.
func TestAbuseBucketsSweptOnlyAsTheSetDoubles(t *testing.T) {
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	a := newAbuseLimits(RateLimits{PerClient: 20}, prometheus.NewRegistry())
	a.clock = func() time.Time { return now }
	add := func(n int, prefix string) {
		for i := range n {
			if ok, _ := a.take(&a.clients, fmt.Sprintf("%s%d", prefix, i), 20); !ok {
				t.Fatalf("first request of %s%d refused", prefix, i)
			}
		}
	}
	add(limiterPruneAt, "busy-")
	add(1, "next-") // a sweep that finds none idle
	if got, want := a.clients.pruneAt, 2*limiterPruneAt; got != want {
		t.Fatalf("next sweep at %d buckets, want %d", got, want)
	}
	now = now.Add(2 * limiterIdle) // every bucket idle now
	add(1, "later-")
	if got := len(a.clients.byID); got != limiterPruneAt+2 {
		t.Fatalf("%d buckets after one more address, want %d: swept before the set doubled", got, limiterPruneAt+2)
	}
	add(limiterPruneAt, "rush-") // the set passes its doubled size: the idle ones go
	if got := len(a.clients.byID); got >= limiterPruneAt+2 {
		t.Fatalf("%d buckets: the idle ones were never swept", got)
	}
	if a.clients.pruneAt < limiterPruneAt {
		t.Fatalf("next sweep at %d, below the floor %d", a.clients.pruneAt, limiterPruneAt)
	}
}
