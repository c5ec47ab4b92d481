package server

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"seatflow/core/access"
)

// Pages, CSS and JS go out compressed to a browser that takes gzip; the
// seat map's event stream does not.
func TestConsoleGzip(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleAdmin)
	gz := http.Header{"Accept-Encoding": {"gzip, deflate, br"}}
	for _, c := range []struct{ path, want string }{
		{"/console/", "<html"},
		{"/console/static/console.js", "function"},
		{"/console/static/console.css", "{"},
	} {
		rec := b.do("GET", c.path, nil, gz)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: %d, Content-Encoding %q; want 200 gzip", c.path, rec.Code, rec.Header().Get("Content-Encoding"))
			continue
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		body, err := io.ReadAll(zr)
		if err != nil || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: decompressed body lacks %q (%v)", c.path, c.want, err)
		}
	}
	if rec := b.do("GET", "/console/", nil, nil); rec.Header().Get("Content-Encoding") != "" || !strings.Contains(rec.Body.String(), "<html") {
		t.Error("a client without gzip got a compressed page")
	}

	srv := httptest.NewServer(env.e)
	t.Cleanup(srv.Close)
	t.Cleanup(env.hub.Close) // ends the stream before the server waits for it
	req, err := http.NewRequestWithContext(t.Context(), "GET", fmt.Sprintf("%s/console/shows/%d/events", srv.URL, env.show.ID), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = http.Header{"Accept": {"text/event-stream"}, "Accept-Encoding": {"gzip"}}
	req.AddCookie(b.cookies[sessionCookie])
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("seat stream: %d, Content-Encoding %q; want 200 uncompressed", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
}
