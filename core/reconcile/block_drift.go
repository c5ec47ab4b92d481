package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"seatflow/core"
)

// BlockDrift makes the seat store's blocks agree with seat_block (the
// truth), in both directions:
//
//   - a seat the seat store blocks with no seat_block row — an unblock
//     committed and its after-commit seat-store step failed, or a block's
//     transaction failed and so did giving its seat-store step back — is
//     unblocked, so the public can buy it again;
//   - a seat_block row the seat store does not block, or blocks for another
//     reason — Redis lost the block, or a step was written by hand — is
//     blocked again with the DB's reason, whatever the seat holds (a
//     blocked seat sold at the box office stays blocked), as a rebuild would.
//
// Work in flight is left alone: BlockSeats writes the seat store before its
// transaction and UnblockSeats after it, so a seat-store block younger than
// the grace period may be one whose row is about to commit, and a row
// younger than it one whose seat-store step is on the way. Both repairs are
// guarded scripts that leave a seat whose block changed since it was read
// alone (UnblockIfBlockedBefore, RestoreBlocks); after blocking again, the
// rows are read once more, and a seat unblocked meanwhile is unblocked again.
// Blocks belong to no order, so the repairs are in the run's items and the
// log, with no order event.
//
// Cost: per show on sale, one HGETALL of its blocked hash and one read of
// its seat_block rows (its primary key), plus that read again for a show
// whose blocks were restored.
type BlockDrift struct{}

func (BlockDrift) Name() string { return CheckBlockDrift }

func (c BlockDrift) Run(ctx context.Context, env *Env, dryRun bool) (Result, error) {
	var res Result
	shows, err := env.ShowsOnSale(ctx)
	if err != nil {
		return res, err
	}
	for _, id := range shows {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := c.show(ctx, env, id, dryRun, &res); err != nil {
			return res, fmt.Errorf("show %d: %w", id, err)
		}
	}
	return res, nil
}

// show compares and repairs one show's blocks. The seat store is read
// before the DB, as in snapshot.go.
func (c BlockDrift) show(ctx context.Context, env *Env, showID int64, dryRun bool, res *Result) error {
	entries, err := env.Seats.BlockEntries(ctx, showID)
	if err != nil {
		return err
	}
	rows, err := env.DB.Blocks(ctx, showID)
	if err != nil {
		return err
	}
	cutoff := env.cutoff()
	inRedis := make(map[string]core.SeatBlock, len(entries))
	for _, b := range entries {
		inRedis[b.SeatID] = b
	}
	restore := make(map[string][]core.SeatBlock) // DB reason → rows to block again
	seenAs := make(map[string][]string)          // DB reason → what the seat store shows of them
	for _, row := range rows {
		got, blocked := inRedis[row.SeatID]
		delete(inRedis, row.SeatID) // what stays is blocked in the seat store only
		if blocked && got.Reason == row.Reason {
			continue
		}
		if !row.BlockedAt.Before(cutoff) || (blocked && !got.BlockedAt.Before(cutoff)) {
			continue // blocked or re-blocked moments ago: its own steps may be on the way
		}
		restore[row.Reason] = append(restore[row.Reason], row)
		if blocked {
			seenAs[row.Reason] = append(seenAs[row.Reason], row.SeatID+" blocked for "+got.Reason)
		} else {
			seenAs[row.Reason] = append(seenAs[row.Reason], row.SeatID+" not blocked")
		}
	}
	for _, reason := range slices.Sorted(maps.Keys(restore)) {
		blocks := restore[reason]
		it := Item{ShowID: showID, SeatIDs: seatIDsOf(blocks), Action: ActionBlock}
		it.say("DB blocks the seats ("+reason+"), seat store shows "+firstOf(seenAs[reason]),
			core.Say("reconcile.note.block_restore", core.ArgText(firstOf(it.SeatIDs)), core.ArgWord("block.reason."+reason)))
		if !env.wants(c.Name(), it) {
			continue
		}
		if !dryRun {
			c.restore(ctx, env, showID, blocks, entries, &it)
		}
		res.add(env, c.Name(), it)
	}

	var stale []string
	var what []string
	for _, seat := range slices.Sorted(maps.Keys(inRedis)) {
		if b := inRedis[seat]; b.BlockedAt.Before(cutoff) {
			stale = append(stale, seat)
			what = append(what, seat+" ("+b.Reason+")")
		}
	}
	if len(stale) == 0 {
		return nil
	}
	it := Item{ShowID: showID, SeatIDs: stale, Action: ActionUnblock}
	it.say("seat store blocks "+firstOf(what)+", the DB does not",
		core.Say("reconcile.note.block_stale", core.ArgText(firstOf(stale))))
	if !env.wants(c.Name(), it) {
		return nil
	}
	if !dryRun {
		freed, err := env.Seats.UnblockIfBlockedBefore(ctx, showID, stale, cutoff)
		switch {
		case err != nil:
			it.fail(err)
		case len(freed) < len(stale):
			it.Fixed = len(freed) > 0
			it.sayAlso(fmt.Sprintf("unblocked %d, the others were blocked again since they were read: left alone", len(freed)),
				core.Say("reconcile.note.unblocked_some", core.ArgText(strconv.Itoa(len(freed)))))
		default:
			it.Fixed = true
		}
	}
	res.add(env, c.Name(), it)
	return nil
}

// restore blocks the seats again as the DB blocks them, then reads the
// DB's blocks again: a seat unblocked between the first read and the write
// (UnblockSeats committed, its own seat-store step already done) is
// unblocked again, unless it was blocked anew meanwhile.
func (c BlockDrift) restore(ctx context.Context, env *Env, showID int64, blocks, seen []core.SeatBlock, it *Item) {
	was := make(map[string]core.SeatBlock, len(seen))
	for _, b := range seen {
		was[b.SeatID] = b
	}
	written, err := env.Seats.RestoreBlocks(ctx, showID, blocks, was)
	if err != nil {
		it.fail(err)
		return
	}
	rows, err := env.DB.Blocks(ctx, showID)
	if err != nil {
		it.fail(fmt.Errorf("read the blocks again: %w", err))
		return
	}
	still := make(map[string]bool, len(rows))
	for _, r := range rows {
		still[r.SeatID] = true
	}
	var gone []string
	for _, seat := range written {
		if !still[seat] {
			gone = append(gone, seat)
		}
	}
	if len(gone) > 0 {
		if _, err := env.Seats.UnblockIfBlockedBefore(ctx, showID, gone, env.cutoff()); err != nil {
			it.fail(fmt.Errorf("unblock %s, unblocked meanwhile: %w", strings.Join(gone, ", "), err))
			return
		}
	}
	if n := len(written) - len(gone); n < len(blocks) {
		it.sayAlso(fmt.Sprintf("blocked %d again, the others changed since they were read: left alone", n),
			core.Say("reconcile.note.blocked_some", core.ArgText(strconv.Itoa(n))))
		it.Fixed = n > 0
		return
	}
	it.Fixed = true
}

func seatIDsOf(blocks []core.SeatBlock) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i] = b.SeatID
	}
	slices.Sort(out)
	return out
}

// maxDetailSeats caps the seats an item's detail names; SeatIDs has them all.
const maxDetailSeats = 10

// firstOf joins the first maxDetailSeats of list.
func firstOf(list []string) string {
	if len(list) <= maxDetailSeats {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:maxDetailSeats], ", ") + fmt.Sprintf(" and %d more", len(list)-maxDetailSeats)
}
