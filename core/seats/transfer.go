package seats

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
)

//go:embed transfer.lua
var transferLua string

var transferScript = redis.NewScript(counterLua + transferLua)

// Transfer implements core.SeatStore (transfer.lua).
func (s *Store) Transfer(ctx context.Context, showID int64, from, to string, toUser int64, seatIDs []string, now time.Time) (int, error) {
	if err := checkTransfer(from, to, seatIDs); err != nil {
		return 0, err
	}
	args := make([]any, 0, 4+len(seatIDs))
	args = append(args, from, to, toUser, now.UnixMilli())
	for _, id := range seatIDs {
		args = append(args, id)
	}
	n, err := transferScript.Run(ctx, s.rdb, changeKeys(showID), args...).Int()
	if err != nil {
		return 0, wrap(fmt.Sprintf("hand seats of show %d from order %s to order %s", showID, from, to), err)
	}
	return n, nil
}

// checkTransfer validates a Transfer's arguments: from may be "" (nobody).
func checkTransfer(from, to string, seatIDs []string) error {
	if from != "" {
		if err := checkOrderNo(from); err != nil {
			return err
		}
	}
	return checkLock(to, seatIDs)
}

// Transfer implements core.SeatStore as transfer.lua does.
func (m *Memory) Transfer(ctx context.Context, showID int64, from, to string, toUser int64, seatIDs []string, now time.Time) (int, error) {
	if err := checkTransfer(from, to, seatIDs); err != nil {
		return 0, err
	}
	if err := interrupted(ctx, fmt.Sprintf("hand seats of show %d from order %s to order %s", showID, from, to)); err != nil {
		return 0, err
	}
	sh := m.lockShow(showID, true)
	defer sh.mu.Unlock()
	moved := 0
	for _, id := range seatIDs {
		if h, held := sh.seats[id]; held {
			if h.orderNo != from {
				continue
			}
			sh.uncount(h.userID)
		}
		sh.limits[toUser]++
		sh.seats[id] = memHold{state: core.SeatLocked, orderNo: to, userID: toUser, lockMS: now.UnixMilli()}
		moved++
	}
	sh.forgetBounds()
	return moved, nil
}
