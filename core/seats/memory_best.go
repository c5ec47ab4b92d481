package seats

import (
	"context"
	"fmt"
	"time"

	"seatflow/core"
)

// ChooseAndLock implements core.SeatStore (best.lua): core.ChooseBest on
// the show's state and the lock, under the show's mutex.
func (m *Memory) ChooseAndLock(ctx context.Context, showID, userID int64, orderNo string, idx *core.SeatIndex, req core.BestRequest, limit int, now time.Time) (core.BestChoice, error) {
	if err := checkBest(orderNo, req); err != nil {
		return core.BestChoice{}, err
	}
	if err := interrupted(ctx, fmt.Sprintf("choose seats of show %d for order %s", showID, orderNo)); err != nil {
		return core.BestChoice{}, err
	}
	sh := m.lockShow(showID, true)
	defer sh.mu.Unlock()
	if limit > 0 && sh.limits[userID]+req.Count > limit {
		return core.BestChoice{}, limitErr(showID, userID, req.Count, limit)
	}
	if sh.bounds == nil || sh.boundsTag != idx.Tag {
		sh.bounds, sh.boundsTag = core.NewRowBounds(idx), idx.Tag
	}
	c, left, ok := core.ChooseBest(idx, req, func(id string) bool {
		_, held := sh.seats[id]
		_, blocked := sh.blocked[id]
		return !held && !blocked
	}, sh.bounds)
	if !ok {
		return core.BestChoice{}, notEnough(left)
	}
	h := memHold{state: core.SeatLocked, orderNo: orderNo, userID: userID, lockMS: now.UnixMilli()}
	for _, id := range c.SeatIDs {
		sh.seats[id] = h
	}
	sh.limits[userID] += len(c.SeatIDs)
	return c, nil
}
