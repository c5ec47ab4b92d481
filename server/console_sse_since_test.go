package server

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
)

var sseConnect = regexp.MustCompile(`sse-connect="([^"]+)"`)

// TestSeatEventsSince: the seat map's stream sends the whole grid first
// unless the page's since= says nothing changed since the page read the
// seats; a change in between, a since= of another process, or none at all
// get the grid.
func TestSeatEventsSince(t *testing.T) {
	tests := []struct {
		name       string
		since      func(page string) string // the since= the stream is opened with
		changeLate bool                     // a seat changes after the page, before the stream
		wantGrid   bool
	}{
		{"unchanged since the page", func(page string) string { return page }, false, false},
		{"changed after the page", func(page string) string { return page }, true, true},
		{"another process's version", func(string) string { return "0abc.0" }, false, true},
		{"no since", func(string) string { return "" }, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newConsoleEnv(t)
			b := env.login(access.RoleBoxOffice)
			env.place(4, "A-1") // a change before the page: the version is past zero
			page := b.do("GET", fmt.Sprintf("/console/shows/%d", env.show.ID), nil, nil).Body.String()
			m := sseConnect.FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("seat map page without sse-connect")
			}
			u, err := url.Parse(html.UnescapeString(m[1]))
			if err != nil {
				t.Fatal(err)
			}
			pageSince := u.Query().Get("since")
			if pageSince == "" {
				t.Fatalf("sse-connect %q names no version", m[1])
			}
			if tc.changeLate {
				env.place(5, "B-1")
			}
			srv := httptest.NewServer(env.e)
			t.Cleanup(srv.Close)
			t.Cleanup(env.hub.Close) // ends the stream before the server waits for it
			next := openSeatStream(t, srv.URL+u.Path+"?since="+url.QueryEscape(tc.since(pageSince)), b)
			// A change once the stream is open: without the grid it is the
			// first event.
			env.place(6, "C-1")
			first := next()
			if got := strings.Contains(first, `id="seat-grid"`); got != tc.wantGrid {
				t.Fatalf("first event is the grid: %v, want %v: %.300s", got, tc.wantGrid, first)
			}
			if tc.wantGrid {
				if tc.changeLate && !strings.Contains(first, `["B-1","locked"`) {
					t.Errorf("the grid lacks the change made after the page: %.300s", first)
				}
				first = next()
			}
			if !strings.Contains(first, `id="seat-C-1" class="locked"`) {
				t.Errorf("event after the stream opened: %.300s", first)
			}
		})
	}
}

// openSeatStream opens a seat map's event stream with b's session and
// returns a function that waits for its next event.
func openSeatStream(t *testing.T, streamURL string, b *browser) func() string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", streamURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.AddCookie(b.cookies[sessionCookie])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: status %d", resp.StatusCode)
	}
	events := sseEvents(resp.Body, 10)
	return func() string {
		t.Helper()
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatal("stream ended")
				}
				if !strings.HasPrefix(ev, ":") { // not a keep-alive comment
					return ev
				}
			case <-ctx.Done():
				t.Fatal("no event in time")
			}
		}
	}
}

// TestSeatHubVersion: a show's version moves with each change delivered and
// each stream the hub ends (that browser must get the grid when it
// reconnects), not when a browser leaves, and only that show's.
func TestSeatHubVersion(t *testing.T) {
	tests := []struct {
		name  string
		do    func(h *SeatHub, sub *SeatSubscription)
		moved bool
	}{
		{"nothing", func(*SeatHub, *SeatSubscription) {}, false},
		{"another show's change", func(h *SeatHub, _ *SeatSubscription) { h.SeatsChanged(2, []string{"A-1"}, core.SeatLocked, "SF1") }, false},
		{"a change", func(h *SeatHub, _ *SeatSubscription) { h.SeatsChanged(1, []string{"A-1"}, core.SeatLocked, "SF1") }, true},
		{"a browser left", func(_ *SeatHub, sub *SeatSubscription) { sub.Close() }, false},
		{"the hub closed", func(h *SeatHub, _ *SeatSubscription) { h.Close() }, true},
		{"a slow stream dropped", func(h *SeatHub, _ *SeatSubscription) {
			for range subscriberBuffer + 1 {
				h.Deliver(SeatChange{ShowID: 1, SeatIDs: []string{"A-1"}, State: core.SeatLocked})
			}
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewSeatHub(nil, nil)
			sub := h.Subscribe(1)
			if v := h.Version(1); v != sub.Version {
				t.Fatalf("subscription version %q, hub's %q", sub.Version, v)
			}
			tc.do(h, sub)
			if moved := h.Version(1) != sub.Version; moved != tc.moved {
				t.Errorf("version moved: %v, want %v", moved, tc.moved)
			}
		})
	}
	if a, b := NewSeatHub(nil, nil).Version(1), NewSeatHub(nil, nil).Version(1); a == b {
		t.Errorf("two hubs (processes) share the version %q", a)
	}
}
