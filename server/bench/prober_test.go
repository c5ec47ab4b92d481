package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestProber: `bench probe` writes one sample per probe, a failed one
// with its cause, and ends cleanly when its standard input closes.
func TestProber(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) == 2 {
			http.Error(w, `{"error":{"code":"store_unavailable"}}`, http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{"status":"ready"}`)
	}))
	defer srv.Close()
	stdinR, stdinW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runProber(context.Background(), []string{"--url", srv.URL + "/readyz", "--every", "10ms"}, stdinR, outW)
		outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	var got []probeSample
	for len(got) < 3 && sc.Scan() {
		var s probeSample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, s)
	}
	stdinW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the prober did not stop when its input closed")
	}
	if len(got) != 3 || got[0].Err != "" || !strings.Contains(got[1].Err, "HTTP 503") || got[2].Err != "" || got[0].Took <= 0 {
		t.Errorf("samples %+v; want ok, HTTP 503, ok, each timed", got)
	}
	if err := runProber(context.Background(), []string{"--every", "10ms"}, strings.NewReader(""), io.Discard); err == nil {
		t.Error("a prober without --url started")
	}
}
