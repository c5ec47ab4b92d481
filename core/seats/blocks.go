package seats

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
)

// Block implements core.SeatStore (see block.lua).
func (s *Store) Block(ctx context.Context, showID int64, seatIDs []string, reason string) ([]string, error) {
	if len(seatIDs) == 0 || len(seatIDs) > MaxLockSeats {
		return nil, core.Invalidf("%d seats to block, want 1 to %d", len(seatIDs), MaxLockSeats)
	}
	args := make([]any, 0, 1+len(seatIDs))
	args = append(args, reason)
	for _, id := range seatIDs {
		args = append(args, id)
	}
	res, err := s.block.Run(ctx, s.rdb, []string{KeySeats(showID), KeyBlocked(showID)}, args...).StringSlice()
	if err != nil {
		return nil, wrap(fmt.Sprintf("block seats of show %d", showID), err)
	}
	switch res[0] {
	case "ok":
		return res[1:], nil
	case "taken":
		return nil, core.SeatsUnavailable(res[1:])
	}
	return nil, fmt.Errorf("seats: block seats of show %d: unexpected script reply %q", showID, res)
}

// Unblock implements core.SeatStore: one HDEL, atomic by itself.
func (s *Store) Unblock(ctx context.Context, showID int64, seatIDs []string) error {
	if len(seatIDs) == 0 {
		return nil
	}
	if err := s.rdb.HDel(ctx, KeyBlocked(showID), seatIDs...).Err(); err != nil {
		return wrap(fmt.Sprintf("unblock seats of show %d", showID), err)
	}
	return nil
}

// Blocks implements core.SeatStore.
func (s *Store) Blocks(ctx context.Context, showID int64) (map[string]string, error) {
	m, err := s.rdb.HGetAll(ctx, KeyBlocked(showID)).Result()
	if err != nil {
		return nil, wrap(fmt.Sprintf("read blocked seats of show %d", showID), err)
	}
	return m, nil
}

// ReplaceBlocks implements core.SeatStore in one MULTI/EXEC.
func (s *Store) ReplaceBlocks(ctx context.Context, showID int64, blocks []core.SeatBlock) error {
	args := make([]any, 0, 2*len(blocks))
	for _, b := range blocks {
		args = append(args, b.SeatID, b.Reason)
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, KeyBlocked(showID))
		if len(args) > 0 {
			p.HSet(ctx, KeyBlocked(showID), args...)
		}
		return nil
	})
	if err != nil {
		return wrap(fmt.Sprintf("replace blocked seats of show %d", showID), err)
	}
	return nil
}
