package seats

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
)

// Block implements core.SeatStore (see block.lua).
func (s *Store) Block(ctx context.Context, showID int64, seatIDs []string, reason string, now time.Time) ([]string, error) {
	if len(seatIDs) == 0 || len(seatIDs) > MaxLockSeats {
		return nil, core.Invalidf("%d seats to block, want 1 to %d", len(seatIDs), MaxLockSeats)
	}
	if strings.Contains(reason, "|") {
		return nil, core.Invalidf("block reason %q may not contain |", reason)
	}
	args := make([]any, 0, 2+len(seatIDs))
	args = append(args, reason, now.UnixMilli())
	for _, id := range seatIDs {
		args = append(args, id)
	}
	res, err := s.block.Run(ctx, s.rdb, []string{KeySeats(showID), KeyBlocked(showID), KeyBestBounds(showID)}, args...).StringSlice()
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

// Unblock implements core.SeatStore: the HDEL and the drop of the
// best-available bounds it makes stale in one MULTI/EXEC.
func (s *Store) Unblock(ctx context.Context, showID int64, seatIDs []string) error {
	if len(seatIDs) == 0 {
		return nil
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, KeyBlocked(showID), seatIDs...)
		p.Del(ctx, KeyBestBounds(showID))
		return nil
	})
	if err != nil {
		return wrap(fmt.Sprintf("unblock seats of show %d", showID), err)
	}
	return nil
}

// Blocks implements core.SeatStore.
func (s *Store) Blocks(ctx context.Context, showID int64) (map[string]string, error) {
	blocks, err := s.BlockEntries(ctx, showID)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(blocks))
	for _, b := range blocks {
		m[b.SeatID] = b.Reason
	}
	return m, nil
}

// BlockEntries returns the show's blocked seats with their reasons and the
// time each was blocked (zero for a block stored without one), sorted by
// seat id (byte-wise).
func (s *Store) BlockEntries(ctx context.Context, showID int64) ([]core.SeatBlock, error) {
	m, err := s.rdb.HGetAll(ctx, KeyBlocked(showID)).Result()
	if err != nil {
		return nil, wrap(fmt.Sprintf("read blocked seats of show %d", showID), err)
	}
	out := make([]core.SeatBlock, 0, len(m))
	for seat, v := range m {
		out = append(out, decodeBlock(seat, v))
	}
	slices.SortFunc(out, func(a, b core.SeatBlock) int { return strings.Compare(a.SeatID, b.SeatID) })
	return out, nil
}

// encodeBlock is a blocked seat's value: "reason|blockMs".
func encodeBlock(b core.SeatBlock) string {
	return b.Reason + "|" + strconv.FormatInt(blockMS(b.BlockedAt), 10)
}

// blockMS is a block's time as stored: 0 for the zero time.
func blockMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// decodeBlock reads a value encodeBlock wrote, or a bare reason.
func decodeBlock(seat, v string) core.SeatBlock {
	b := core.SeatBlock{SeatID: seat, Reason: v}
	if i := strings.LastIndexByte(v, '|'); i >= 0 {
		if ms, err := strconv.ParseInt(v[i+1:], 10, 64); err == nil {
			b.Reason = v[:i]
			if ms > 0 {
				b.BlockedAt = time.UnixMilli(ms).UTC()
			}
		}
	}
	return b
}

// ReplaceBlocks implements core.SeatStore in one MULTI/EXEC.
func (s *Store) ReplaceBlocks(ctx context.Context, showID int64, blocks []core.SeatBlock) error {
	args := make([]any, 0, 2*len(blocks))
	for _, b := range blocks {
		args = append(args, b.SeatID, encodeBlock(b))
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, KeyBlocked(showID))
		p.Del(ctx, KeyBestBounds(showID))
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

// RestoreBlocks writes the DB's blocks (reason and time) back to the seat
// store, whatever the seats hold, as a rebuild would: reconcile's repair of
// blocks the seat store lost or keeps for another reason. Each seat is
// written only if its block is still seen[seat] (absent: not blocked), as
// read before; a block or unblock that ran meanwhile is left alone (see
// restore_block.lua). It returns the seats written.
func (s *Store) RestoreBlocks(ctx context.Context, showID int64, blocks []core.SeatBlock, seen map[string]core.SeatBlock) ([]string, error) {
	var written []string
	for chunk := range slices.Chunk(blocks, MaxLockSeats) {
		args := make([]any, 0, 4*len(chunk))
		for _, b := range chunk {
			was := seen[b.SeatID]
			args = append(args, b.SeatID, was.Reason, blockMS(was.BlockedAt), encodeBlock(b))
		}
		w, err := s.restoreBlock.Run(ctx, s.rdb, []string{KeyBlocked(showID), KeyBestBounds(showID)}, args...).StringSlice()
		if err != nil {
			return written, wrap(fmt.Sprintf("restore blocked seats of show %d", showID), err)
		}
		written = append(written, w...)
	}
	return written, nil
}

// UnblockIfBlockedBefore unblocks the seats still blocked since before
// before and returns those it unblocked; the check runs inside the script
// (unblock_before.lua), so a block taken meanwhile is never touched.
func (s *Store) UnblockIfBlockedBefore(ctx context.Context, showID int64, seatIDs []string, before time.Time) ([]string, error) {
	var freed []string
	for chunk := range slices.Chunk(seatIDs, MaxLockSeats) {
		args := make([]any, 0, 1+len(chunk))
		args = append(args, before.UnixMilli())
		for _, id := range chunk {
			args = append(args, id)
		}
		f, err := s.unblockBefore.Run(ctx, s.rdb, []string{KeyBlocked(showID), KeyBestBounds(showID)}, args...).StringSlice()
		if err != nil {
			return freed, wrap(fmt.Sprintf("unblock stale blocks of show %d", showID), err)
		}
		freed = append(freed, f...)
	}
	return freed, nil
}
