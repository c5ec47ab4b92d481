package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/access"
)

// openLiveStream opens /console/live as b and returns its events.
func openLiveStream(t *testing.T, ctx context.Context, srv *httptest.Server, b *browser) <-chan string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/console/live", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.AddCookie(b.cookies[sessionCookie])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("live stream: status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return sseEvents(resp.Body, 100)
}

// nextChange returns the data of the next "change" event.
func nextChange(t *testing.T, ctx context.Context, events <-chan string) liveChange {
	t.Helper()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("live stream ended")
			}
			data, found := strings.CutPrefix(ev, "event: change\ndata: ")
			if !found {
				continue
			}
			var ch liveChange
			if err := json.Unmarshal([]byte(data), &ch); err != nil {
				t.Fatalf("change event %q: %v", ev, err)
			}
			return ch
		case <-ctx.Done():
			t.Fatal("no change event in time")
		}
	}
}

// TestLiveStreamAcrossInstances: a console page's live stream on one
// instance carries the changes of every show made on another, through the
// relay the seat maps use, and the seat map's stream carries the same
// "change" events next to its seat buttons.
func TestLiveStreamAcrossInstances(t *testing.T) {
	env := newConsoleEnv(t)
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	channel := SeatChannel(0) + ":" + t.Name()
	one, two := startRelayInstance(t, rdb, channel), startRelayInstance(t, rdb, channel)
	env.cn.Hub = two.hub // this console is instance two; instance one's engine makes the change

	viewer := env.login(access.RoleBoxOffice)
	srv := httptest.NewServer(env.e)
	t.Cleanup(srv.Close)
	t.Cleanup(two.hub.Close) // ends the streams before the server waits for them
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	live := openLiveStream(t, ctx, srv, viewer)
	seatMap := openSeatStreamChan(t, ctx, srv, env, viewer)
	// The seat stream is open once its grid came; the live stream has no
	// first event, so wait until the hub counts both subscriptions.
	readGrid(t, ctx, seatMap)
	for hubSubscribers(two.hub) < 2 {
		if ctx.Err() != nil {
			t.Fatal("the streams did not subscribe")
		}
		time.Sleep(10 * time.Millisecond)
	}

	one.hub.SeatsChanged(env.show.ID, []string{"A-1", "A-2"}, core.SeatSold, "SF-LIVE-1")
	want := liveChange{ShowID: env.show.ID, SeatIDs: []string{"A-1", "A-2"}, State: "sold", OrderNo: "SF-LIVE-1"}
	if got := nextChange(t, ctx, live); !sameChange(got, want) {
		t.Errorf("live stream: %+v, want %+v", got, want)
	}
	if got := nextChange(t, ctx, seatMap); !sameChange(got, want) {
		t.Errorf("seat stream: %+v, want %+v", got, want)
	}

	// Another show's release (no order number) reaches the live stream too.
	one.hub.SeatsChanged(env.show.ID+1000, []string{"B-1"}, core.SeatAvailable, "")
	want = liveChange{ShowID: env.show.ID + 1000, SeatIDs: []string{"B-1"}, State: "available"}
	if got := nextChange(t, ctx, live); !sameChange(got, want) {
		t.Errorf("live stream, another show: %+v, want %+v", got, want)
	}
}

func sameChange(a, b liveChange) bool {
	return a.ShowID == b.ShowID && a.State == b.State && a.OrderNo == b.OrderNo &&
		strings.Join(a.SeatIDs, ",") == strings.Join(b.SeatIDs, ",")
}

// hubSubscribers counts the hub's subscriptions, of every show.
func hubSubscribers(h *SeatHub) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, set := range h.subs {
		n += len(set)
	}
	return n
}
