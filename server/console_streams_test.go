package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"seatflow/core/access"
)

// sseEvents reads a server-sent event stream into a channel, one string per
// event (keep-alive comments included), buffering size; the channel closes
// when the stream ends.
func sseEvents(body io.Reader, size int) <-chan string {
	events := make(chan string, size)
	go func() {
		defer close(events)
		buf := make([]byte, 64<<10)
		var acc strings.Builder
		for {
			n, err := body.Read(buf)
			acc.Write(buf[:n])
			for {
				s := acc.String()
				i := strings.Index(s, "\n\n")
				if i < 0 {
					break
				}
				events <- s[:i]
				acc.Reset()
				acc.WriteString(s[i+2:])
			}
			if err != nil {
				return
			}
		}
	}()
	return events
}

// openSeatStreamChan opens the test show's event stream as b over a real
// connection and returns its events, one string each; the channel closes
// when the stream ends.
func openSeatStreamChan(t *testing.T, ctx context.Context, srv *httptest.Server, env *consoleEnv, b *browser) <-chan string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/console/shows/%d/events", srv.URL, env.show.ID), nil)
	req.Header.Set("Accept", "text/event-stream")
	req.AddCookie(b.cookies[sessionCookie])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("stream: status %d", resp.StatusCode)
	}
	return sseEvents(resp.Body, 100)
}

// TestSeatStreamEndsWithSession: a stream opened before its session ends
// (logout, the account disabled) ends with it and carries no later change.
func TestSeatStreamEndsWithSession(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(env *consoleEnv, viewer *browser)
	}{
		{"logout", func(env *consoleEnv, viewer *browser) {
			if rec := viewer.do("POST", "/console/logout", url.Values{"_csrf": {viewer.csrf}}, nil); rec.Code != http.StatusSeeOther {
				t.Fatalf("logout: status %d", rec.Code)
			}
		}},
		{"account disabled", func(env *consoleEnv, viewer *browser) {
			admin := env.login(access.RoleAdmin)
			path := fmt.Sprintf("/console/staff/%d/disable", env.staff[access.RoleBoxOffice].ID)
			if rec := admin.do("POST", path, url.Values{"_csrf": {admin.csrf}}, nil); rec.Code != http.StatusSeeOther {
				t.Fatalf("disable: status %d: %s", rec.Code, rec.Body)
			}
		}},
		{"password changed in another session", func(env *consoleEnv, viewer *browser) {
			other := env.login(access.RoleBoxOffice)
			if rec := other.post("/console/account/password", url.Values{"current": {testPassword},
				"password": {newTestPassword}, "confirm": {newTestPassword}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("change password: status %d: %s", rec.Code, rec.Body)
			}
		}},
		{"password set by a reset link", func(env *consoleEnv, viewer *browser) {
			link := resetLinkFor(t, env, env.staff[access.RoleBoxOffice])
			if rec := useResetLink(t, env.browser(), link, newTestPassword); rec.StatusCode != http.StatusSeeOther {
				t.Fatalf("reset: status %d: %s", rec.StatusCode, rec.Status)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newConsoleEnv(t)
			viewer := env.login(access.RoleBoxOffice)
			srv := httptest.NewServer(env.e)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			events := openSeatStreamChan(t, ctx, srv, env, viewer)
			select {
			case first := <-events:
				if !strings.Contains(first, `id="seat-grid"`) {
					t.Fatalf("first event is not the grid: %.200s", first)
				}
			case <-ctx.Done():
				t.Fatal("no grid in time")
			}
			tc.end(env, viewer)
			o := env.place(5, "A-3")
			for {
				select {
				case ev, ok := <-events:
					if !ok {
						return
					}
					if strings.Contains(ev, o.OrderNo) {
						t.Fatalf("the stream carried a change after its session ended: %.200s", ev)
					}
				case <-ctx.Done():
					t.Fatal("the stream did not end with its session")
				}
			}
		})
	}
}
