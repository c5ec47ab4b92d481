package seats

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
)

//go:embed release_order.lua
var releaseOrderLua string

// releaseOrder holds no state but the script: one serves every Store.
var releaseOrder = redis.NewScript(counterLua + releaseOrderLua)

// ReleaseOrder implements core.SeatStore (release_order.lua).
func (s *Store) ReleaseOrder(ctx context.Context, showID int64, orderNo string) (int, error) {
	if err := checkOrderNo(orderNo); err != nil {
		return 0, err
	}
	n, err := releaseOrder.Run(ctx, s.rdb, changeKeys(showID), orderNo).Int()
	if err != nil {
		return 0, wrap(fmt.Sprintf("release the seats of show %d locked by order %s", showID, orderNo), err)
	}
	return n, nil
}

// ReleaseOrder implements core.SeatStore: release.lua on every seat the
// order holds locked.
func (m *Memory) ReleaseOrder(ctx context.Context, showID int64, orderNo string) (int, error) {
	if err := checkOrderNo(orderNo); err != nil {
		return 0, err
	}
	what := fmt.Sprintf("release the seats of show %d locked by order %s", showID, orderNo)
	if err := interrupted(ctx, what); err != nil {
		return 0, err
	}
	sh := m.lockShow(showID, false)
	if sh == nil {
		return 0, nil
	}
	defer sh.mu.Unlock()
	released := 0
	for id, h := range sh.seats {
		if h.state == core.SeatLocked && h.orderNo == orderNo {
			delete(sh.seats, id)
			sh.forgetBounds()
			sh.uncount(h.userID)
			released++
		}
	}
	return released, nil
}
