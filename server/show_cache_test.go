package server

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSeatMapCache: within maxAge a show's map is built once and shared;
// past it, or for another show, it is built again; an error is never kept;
// with maxAge 0 every read builds.
func TestSeatMapCache(t *testing.T) {
	boom := errors.New("boom")
	type read struct {
		after  time.Duration // since the start
		show   int64
		err    error // what a build would return
		builds int   // builds so far, after this read
		body   string
	}
	for _, c := range []struct {
		name   string
		maxAge time.Duration
		reads  []read
	}{
		{"fresh map shared", 100 * time.Millisecond, []read{
			{0, 1, nil, 1, `"b1"`}, {50 * time.Millisecond, 1, nil, 1, `"b1"`}, {99 * time.Millisecond, 1, nil, 1, `"b1"`}}},
		{"stale map rebuilt", 100 * time.Millisecond, []read{
			{0, 1, nil, 1, `"b1"`}, {100 * time.Millisecond, 1, nil, 2, `"b2"`}, {150 * time.Millisecond, 1, nil, 2, `"b2"`}}},
		{"each show its own", 100 * time.Millisecond, []read{
			{0, 1, nil, 1, `"b1"`}, {0, 2, nil, 2, `"b2"`}, {10 * time.Millisecond, 1, nil, 2, `"b1"`}}},
		{"error not kept", 100 * time.Millisecond, []read{
			{0, 1, boom, 1, ""}, {0, 1, nil, 2, `"b2"`}, {0, 1, nil, 2, `"b2"`}}},
		{"off", 0, []read{
			{0, 1, nil, 1, `"b1"`}, {0, 1, nil, 2, `"b2"`}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Unix(1_000_000, 0)
			now := start
			cache := newShowCache(c.maxAge, func() time.Time { return now })
			builds := 0
			for i, r := range c.reads {
				now = start.Add(r.after)
				body, err := cache.get(r.show, func() (any, error) {
					builds++
					if r.err != nil {
						return nil, r.err
					}
					return "b" + string(rune('0'+builds)), nil
				})
				if !errors.Is(err, r.err) || string(body) != r.body || builds != r.builds {
					t.Errorf("read %d: %q, %v after %d builds; want %q, %v after %d", i, body, err, builds, r.body, r.err, r.builds)
				}
			}
		})
	}
}

// TestSeatMapCacheSweep: past showCacheSweep shows, a new show drops the
// stale entries and keeps the fresh ones.
func TestSeatMapCacheSweep(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	cache := newShowCache(time.Second, func() time.Time { return now })
	build := func() (any, error) { return 1, nil }
	for id := range int64(showCacheSweep) {
		if _, err := cache.get(id, build); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Second)
	if _, err := cache.get(showCacheSweep, build); err != nil {
		t.Fatal(err)
	}
	if n := len(cache.shows); n != 1 {
		t.Errorf("%d shows kept after the sweep, want only the new one", n)
	}
}

// TestSeatMapCacheConcurrent: concurrent readers of a show with no map
// share one build (run under -race).
func TestSeatMapCacheConcurrent(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	cache := newShowCache(time.Second, func() time.Time { return now })
	var builds atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			body, err := cache.get(1, func() (any, error) { builds.Add(1); return "map", nil })
			if err != nil || string(body) != `"map"` {
				t.Errorf("get: %q, %v", body, err)
			}
		})
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("%d builds for 50 concurrent readers, want 1", n)
	}
}
