package server

import (
	"encoding/json"
	"sync"
	"time"
)

// seatMapCache keeps each show's encoded seat map for up to maxAge
// (SEATFLOW_SEAT_MAP_MAX_AGE), so that a rush's thousands of storefront
// page loads share one build: a 2,000-seat map reads the plan from the
// database and encodes 295 KB, and measured on the embedded stack those
// reads, not the placements, set the pace of an on-sale (BENCHMARKS.md,
// rush). The map is advisory anyway, a seat shown free may be taken by
// the time it is placed (409): a map up to maxAge old only makes that a
// little likelier. Off (maxAge 0) every read builds the map.
type seatMapCache struct {
	maxAge time.Duration
	now    func() time.Time

	mu    sync.Mutex
	shows map[int64]*seatMapEntry
}

// seatMapEntry is one show's map; its own lock makes concurrent readers
// of a stale map wait for one build instead of each building it.
type seatMapEntry struct {
	mu   sync.Mutex
	body []byte
	at   time.Time
}

// seatMapSweep is how many shows the cache holds before it drops stale ones.
const seatMapSweep = 256

func newSeatMapCache(maxAge time.Duration, now func() time.Time) *seatMapCache {
	return &seatMapCache{maxAge: maxAge, now: now, shows: map[int64]*seatMapEntry{}}
}

// get returns the show's encoded map, built by build when none is fresh.
// An error is returned, never kept.
func (c *seatMapCache) get(show int64, build func() (any, error)) ([]byte, error) {
	if c.maxAge <= 0 {
		return encodeMap(build)
	}
	c.mu.Lock()
	e, ok := c.shows[show]
	if !ok {
		if len(c.shows) >= seatMapSweep {
			c.sweepLocked()
		}
		e = &seatMapEntry{}
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
func (c *seatMapCache) fresh(show int64) ([]byte, bool) {
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
func (c *seatMapCache) sweepLocked() {
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
