package server

import (
	"encoding/json"
	"sync"
	"time"
)

// showCache keeps one encoded read of each show, the seat map or the
// availability, for up to maxAge (SEATFLOW_SEAT_MAP_MAX_AGE), so that a
// rush's thousands of storefront reads share one build: a 2,000-seat map
// reads the plan from the database and encodes 295 KB, an availability
// walks every hold; measured on the embedded stack those reads, not the
// placements, set the pace of an on-sale (BENCHMARKS.md, rush). Both are
// advisory anyway, a seat shown free may be taken by the time it is
// placed (409): a read up to maxAge old only makes that a little likelier.
// Off (maxAge 0) every read builds.
type showCache struct {
	maxAge time.Duration
	now    func() time.Time

	mu    sync.Mutex
	shows map[int64]*showCacheEntry
}

// showCacheEntry is one show's read; its own lock makes concurrent readers
// of a stale map wait for one build instead of each building it.
type showCacheEntry struct {
	mu   sync.Mutex
	body []byte
	at   time.Time
}

// showCacheSweep is how many shows the cache holds before it drops stale ones.
const showCacheSweep = 256

func newShowCache(maxAge time.Duration, now func() time.Time) *showCache {
	return &showCache{maxAge: maxAge, now: now, shows: map[int64]*showCacheEntry{}}
}

// get returns the show's encoded map, built by build when none is fresh.
// An error is returned, never kept.
func (c *showCache) get(show int64, build func() (any, error)) ([]byte, error) {
	if c.maxAge <= 0 {
		return encodeMap(build)
	}
	c.mu.Lock()
	e, ok := c.shows[show]
	if !ok {
		if len(c.shows) >= showCacheSweep {
			c.sweepLocked()
		}
		e = &showCacheEntry{}
		c.shows[show] = e
	}
	c.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.body != nil && c.now().Sub(e.at) < c.maxAge {
		return e.body, nil
	}
	at := c.now() // the map is at least as fresh as the start of its build
	body, err := encodeMap(build)
	if err != nil {
		return nil, err
	}
	e.body, e.at = body, at
	return body, nil
}

// fresh returns the show's encoded map if one within maxAge is kept.
func (c *showCache) fresh(show int64) ([]byte, bool) {
	if c.maxAge <= 0 {
		return nil, false
	}
	c.mu.Lock()
	e, ok := c.shows[show]
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.body == nil || c.now().Sub(e.at) >= c.maxAge {
		return nil, false
	}
	return e.body, true
}

// sweepLocked drops the entries no longer fresh; c.mu is held.
func (c *showCache) sweepLocked() {
	for id, e := range c.shows {
		if e.mu.TryLock() {
			if c.now().Sub(e.at) >= c.maxAge {
				delete(c.shows, id)
			}
			e.mu.Unlock()
		}
	}
}

func encodeMap(build func() (any, error)) ([]byte, error) {
	v, err := build()
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}
