package core

import (
	"context"
	"fmt"
	"sync"
)

// maxCachedPlans bounds the plan cache; past it the cache starts over, which
// costs one reload per show on sale.
const maxCachedPlans = 256

// seatPlans caches each show's seat plan: reading it for every order cost a
// placement two of its database round trips. A plan changes only before
// the show's first order (UpdatePlan); the version cached with it lets
// Place's transaction notice a plan changed by another instance.
type seatPlans struct {
	mu    sync.RWMutex
	plans map[int64]cachedPlan
	// loading is the read in flight per show: when a show goes on sale,
	// every buyer misses the cache at once, and each reading the whole
	// plan (20,000 seats) would cost more than all their orders.
	loading map[int64]*planLoad
}

type planLoad struct {
	done chan struct{}
	p    cachedPlan
	err  error
}

type cachedPlan struct {
	version int64
	seats   map[string]Seat
	ordered []Seat     // the plan as the store orders it (by row, col): the seat map's
	index   *SeatIndex // best available's view of the plan (bestseats.go)
}

// plan returns the show's seats by id and the plan's version;
// ErrShowNotFound for an unknown show (misses are not cached: the show may
// be created a moment later). The show is read before its seats, so a plan
// changed between the two reads carries the older version and fails
// Place's check rather than passing it.
func (c *seatPlans) plan(ctx context.Context, store Store, showID int64) (map[string]Seat, int64, error) {
	p, err := c.get(ctx, store, showID)
	return p.seats, p.version, err
}

// get is plan with the index too.
func (c *seatPlans) get(ctx context.Context, store Store, showID int64) (cachedPlan, error) {
	c.mu.RLock()
	p, ok := c.plans[showID]
	c.mu.RUnlock()
	if ok {
		return p, nil
	}
	c.mu.Lock()
	l, reading := c.loading[showID]
	if !reading {
		if c.loading == nil {
			c.loading = make(map[int64]*planLoad)
		}
		l = &planLoad{done: make(chan struct{})}
		c.loading[showID] = l
	}
	c.mu.Unlock()
	if reading {
		select {
		case <-l.done:
			return l.p, l.err
		case <-ctx.Done():
			return cachedPlan{}, ctx.Err()
		}
	}
	// Not the caller's cancel: the others waiting for this read would share it.
	l.p, l.err = readPlan(context.WithoutCancel(ctx), store, showID)
	c.mu.Lock()
	delete(c.loading, showID)
	if l.err == nil {
		if c.plans == nil || len(c.plans) >= maxCachedPlans {
			c.plans = make(map[int64]cachedPlan)
		}
		c.plans[showID] = l.p
	}
	c.mu.Unlock()
	close(l.done)
	return l.p, l.err
}

func readPlan(ctx context.Context, store Store, showID int64) (cachedPlan, error) {
	show, err := store.Show(ctx, showID)
	if err != nil {
		return cachedPlan{}, err
	}
	seats, err := store.Seats(ctx, showID)
	if err != nil {
		return cachedPlan{}, fmt.Errorf("seat plan of show %d: %w", showID, err)
	}
	p := cachedPlan{version: show.PlanVersion, seats: make(map[string]Seat, len(seats)), ordered: seats,
		index: BuildSeatIndex(seats, show.Best)}
	for _, s := range seats {
		p.seats[s.SeatID] = s
	}
	return p, nil
}

// forget drops a show's cached plan.
func (c *seatPlans) forget(showID int64) {
	c.mu.Lock()
	delete(c.plans, showID)
	c.mu.Unlock()
}
