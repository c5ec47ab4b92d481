package core

import (
	"context"
	"fmt"
	"sync"
)

// maxCachedPlans bounds the plan cache; past it the cache starts over, which
// costs one reload per show on sale.
const maxCachedPlans = 256

// seatPlans caches each show's seat plan. A plan never changes once the
// show exists, and reading it for every order cost a placement two of its
// database round trips.
type seatPlans struct {
	mu    sync.RWMutex
	plans map[int64]map[string]Seat
}

// plan returns the show's seats by id; ErrShowNotFound for an unknown show
// (misses are not cached: the show may be created a moment later).
func (c *seatPlans) plan(ctx context.Context, store Store, showID int64) (map[string]Seat, error) {
	c.mu.RLock()
	p, ok := c.plans[showID]
	c.mu.RUnlock()
	if ok {
		return p, nil
	}
	if _, err := store.Show(ctx, showID); err != nil {
		return nil, err
	}
	seats, err := store.Seats(ctx, showID)
	if err != nil {
		return nil, fmt.Errorf("seat plan of show %d: %w", showID, err)
	}
	p = make(map[string]Seat, len(seats))
	for _, s := range seats {
		p[s.SeatID] = s
	}
	c.mu.Lock()
	if c.plans == nil || len(c.plans) >= maxCachedPlans {
		c.plans = make(map[int64]map[string]Seat)
	}
	c.plans[showID] = p
	c.mu.Unlock()
	return p, nil
}
