package seats

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"seatflow/core"
)

// Block implements core.SeatStore (block.lua): every seat or none, refused
// when any is locked or sold; it returns the seats not blocked before.
func (m *Memory) Block(ctx context.Context, showID int64, seatIDs []string, reason string, now time.Time) ([]string, error) {
	if len(seatIDs) == 0 || len(seatIDs) > MaxLockSeats {
		return nil, core.Invalidf("%d seats to block, want 1 to %d", len(seatIDs), MaxLockSeats)
	}
	if strings.Contains(reason, "|") {
		return nil, core.Invalidf("block reason %q may not contain |", reason)
	}
	if err := interrupted(ctx, fmt.Sprintf("block seats of show %d", showID)); err != nil {
		return nil, err
	}
	sh := m.lockShow(showID, true)
	defer sh.mu.Unlock()
	var taken []string
	for _, id := range seatIDs {
		if _, held := sh.seats[id]; held {
			taken = append(taken, id)
		}
	}
	if taken != nil {
		return nil, core.SeatsUnavailable(taken)
	}
	// Whether each seat was blocked is read before any is written, as the
	// script does: a seat named twice is reported twice.
	added := make([]string, 0, len(seatIDs))
	for _, id := range seatIDs {
		if _, was := sh.blocked[id]; !was {
			added = append(added, id)
		}
	}
	b := memBlock{reason: reason, ms: now.UnixMilli()}
	for _, id := range seatIDs {
		sh.blocked[id] = b
	}
	sh.forgetBounds()
	return added, nil
}

// Unblock implements core.SeatStore.
func (m *Memory) Unblock(ctx context.Context, showID int64, seatIDs []string) error {
	if len(seatIDs) == 0 {
		return nil
	}
	if err := interrupted(ctx, fmt.Sprintf("unblock seats of show %d", showID)); err != nil {
		return err
	}
	sh := m.lockShow(showID, false)
	if sh == nil {
		return nil
	}
	defer sh.mu.Unlock()
	for _, id := range seatIDs {
		delete(sh.blocked, id)
		sh.forgetBounds()
	}
	return nil
}

// Blocks implements core.SeatStore.
func (m *Memory) Blocks(ctx context.Context, showID int64) (map[string]string, error) {
	if err := interrupted(ctx, fmt.Sprintf("read blocked seats of show %d", showID)); err != nil {
		return nil, err
	}
	out := map[string]string{}
	sh := m.lockShow(showID, false)
	if sh == nil {
		return out, nil
	}
	defer sh.mu.Unlock()
	for id, b := range sh.blocked {
		out[id] = b.reason
	}
	return out, nil
}

// BlockEntries returns the show's blocked seats with their reasons and
// block times (zero for none), sorted by seat id (byte-wise).
func (m *Memory) BlockEntries(ctx context.Context, showID int64) ([]core.SeatBlock, error) {
	if err := interrupted(ctx, fmt.Sprintf("read blocked seats of show %d", showID)); err != nil {
		return nil, err
	}
	sh := m.lockShow(showID, false)
	if sh == nil {
		return []core.SeatBlock{}, nil
	}
	out := make([]core.SeatBlock, 0, len(sh.blocked))
	for id, b := range sh.blocked {
		out = append(out, b.entry(id))
	}
	sh.mu.Unlock()
	slices.SortFunc(out, func(a, b core.SeatBlock) int { return strings.Compare(a.SeatID, b.SeatID) })
	return out, nil
}

// entry is the block as decodeBlock reads the Redis store's value: a time
// that is not positive reads as none.
func (b memBlock) entry(seatID string) core.SeatBlock {
	e := core.SeatBlock{SeatID: seatID, Reason: b.reason}
	if b.ms > 0 {
		e.BlockedAt = time.UnixMilli(b.ms).UTC()
	}
	return e
}

func blockOf(b core.SeatBlock) memBlock { return memBlock{reason: b.Reason, ms: blockMS(b.BlockedAt)} }

// ReplaceBlocks implements core.SeatStore.
func (m *Memory) ReplaceBlocks(ctx context.Context, showID int64, blocks []core.SeatBlock) error {
	blocked := make(map[string]memBlock, len(blocks))
	for _, b := range blocks {
		blocked[b.SeatID] = blockOf(b)
	}
	if err := interrupted(ctx, fmt.Sprintf("replace blocked seats of show %d", showID)); err != nil {
		return err
	}
	sh := m.lockShow(showID, true)
	defer sh.mu.Unlock()
	sh.blocked = blocked
	sh.forgetBounds()
	return nil
}

// RestoreBlocks writes blocks back, each only if the seat's block is still
// seen[seat] (absent: not blocked), and returns the seats written
// (restore_block.lua; see Store.RestoreBlocks).
func (m *Memory) RestoreBlocks(ctx context.Context, showID int64, blocks []core.SeatBlock, seen map[string]core.SeatBlock) ([]string, error) {
	if len(blocks) == 0 {
		return nil, nil
	}
	if err := interrupted(ctx, fmt.Sprintf("restore blocked seats of show %d", showID)); err != nil {
		return nil, err
	}
	sh := m.lockShow(showID, true)
	defer sh.mu.Unlock()
	var written []string
	for _, b := range blocks {
		was := seen[b.SeatID]
		cur, blocked := sh.blocked[b.SeatID]
		same := was.Reason == ""
		if blocked {
			same = cur.reason == was.Reason && cur.ms == blockMS(was.BlockedAt)
		}
		if same {
			sh.blocked[b.SeatID] = blockOf(b)
			sh.forgetBounds()
			written = append(written, b.SeatID)
		}
	}
	return written, nil
}

// UnblockIfBlockedBefore unblocks the seats still blocked since before
// before and returns them (unblock_before.lua); a block without a time
// counts as old.
func (m *Memory) UnblockIfBlockedBefore(ctx context.Context, showID int64, seatIDs []string, before time.Time) ([]string, error) {
	if len(seatIDs) == 0 {
		return nil, nil
	}
	if err := interrupted(ctx, fmt.Sprintf("unblock stale blocks of show %d", showID)); err != nil {
		return nil, err
	}
	sh := m.lockShow(showID, false)
	if sh == nil {
		return nil, nil
	}
	defer sh.mu.Unlock()
	var freed []string
	cutoff := before.UnixMilli()
	for _, id := range seatIDs {
		if b, ok := sh.blocked[id]; ok && b.ms < cutoff {
			delete(sh.blocked, id)
			sh.forgetBounds()
			freed = append(freed, id)
		}
	}
	return freed, nil
}
