package reconcile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"seatflow/core"
	"seatflow/core/store"
)

// StaleRedisLock makes the seat store's locks agree with the DB's pending
// orders, in both directions:
//
//   - a lock with no live pending order behind it — the order was cancelled
//     but its release failed, or the process died between commit and
//     release, or a placement died between Lock and its transaction — is
//     freed once it is older than the grace period, by a compare-and-release
//     script (ReleaseIfLockedBefore) that leaves a lock taken meanwhile alone.
//     A lock younger than the grace period is never touched: it may be an
//     order being placed right now, whose transaction has not committed.
//   - a pending order, placed before the grace period, whose seats the seat
//     store does not hold at all (Redis lost its data) is locked again, so
//     the seat map and the purchase limit see it.
//
// Seats the DB gives to a paid order are paid_not_sold's business and left
// alone here. Cost: the same per-show reads as paid_not_sold, plus one
// uk_order_no lookup per stale lock found.
type StaleRedisLock struct{}

func (StaleRedisLock) Name() string { return CheckStaleRedisLock }

func (c StaleRedisLock) Run(ctx context.Context, env *Env, dryRun bool) (Result, error) {
	var res Result
	err := env.eachShow(ctx, false, func(s snapshot) error {
		freed, err := c.release(ctx, env, s, dryRun, &res)
		if err != nil {
			return err
		}
		c.relock(ctx, env, s, freed, dryRun, &res)
		return nil
	})
	return res, err
}

// release frees the stale locks of one show and returns the seats it freed.
func (c StaleRedisLock) release(ctx context.Context, env *Env, s snapshot, dryRun bool, res *Result) (map[string]bool, error) {
	cutoff := env.cutoff()
	var stale []core.SeatHold
	for seat, h := range s.holds {
		if h.State != core.SeatLocked || !h.LockedAt.Before(cutoff) {
			continue // sold, or young: possibly an order being placed right now
		}
		if r, ok := s.rows[seat]; ok && r.OrderFound &&
			(r.Status == core.StatusPaid || (r.Status == core.StatusPending && r.OrderNo == h.OrderNo)) {
			continue
		}
		stale = append(stale, h)
	}
	freed := make(map[string]bool)
	if len(stale) == 0 {
		return freed, nil
	}
	slices.SortFunc(stale, func(a, b core.SeatHold) int { return strings.Compare(a.SeatID, b.SeatID) })
	holders, err := c.holders(ctx, env, stale)
	if err != nil {
		return nil, err
	}
	for _, h := range stale {
		o, exists := holders[h.OrderNo]
		if exists && !o.ClosedAt.IsZero() && !o.ClosedAt.Before(cutoff) {
			continue // closed moments ago: its own release may be on its way
		}
		age := env.Now.Sub(h.LockedAt).Round(time.Second)
		why, note := "no such order", core.Say("reconcile.note.stale_no_order", core.ArgDuration(age))
		switch {
		case exists && o.Status == core.StatusPending:
			owner, ownerArg := rowOwner(s, h.SeatID)
			why = "order pending but the DB gives the seat to " + owner
			note = core.Say("reconcile.note.stale_pending", ownerArg, core.ArgDuration(age))
		case exists:
			why = "order " + o.Status.String()
			note = core.Say("reconcile.note.stale_closed", statusWord(o.Status), core.ArgDuration(age))
		}
		it := Item{OrderNo: h.OrderNo, ShowID: s.showID, SeatIDs: []string{h.SeatID}, UserID: h.UserID,
			Action: ActionRelease}
		it.say(why+", locked "+age.String()+" ago", note)
		if !env.wants(c.Name(), it) {
			continue
		}
		if !dryRun {
			ok, err := env.Seats.ReleaseIfLockedBefore(ctx, s.showID, h.SeatID, h.OrderNo, cutoff)
			switch {
			case err != nil:
				it.fail(err)
			case !ok:
				it.sayAlso("the lock changed since it was read: left alone", core.Say("reconcile.note.lock_changed"))
			default:
				it.Fixed = true
				freed[h.SeatID] = true
				// Recorded on the order the seat store named, even when the DB has no such order.
				if err := env.repaired(ctx, c.Name(), h.OrderNo, map[string]any{"action": ActionRelease,
					"show_id": s.showID, "seat_id": h.SeatID, "reason": why}); err != nil {
					it.fail(err)
				}
			}
		}
		res.add(env, c.Name(), it)
	}
	return freed, nil
}

// holders reads the state of the orders named by the stale locks, a page
// of order numbers at a time.
func (c StaleRedisLock) holders(ctx context.Context, env *Env, stale []core.SeatHold) (map[string]store.OrderState, error) {
	nos := make(map[string]bool)
	for _, h := range stale {
		nos[h.OrderNo] = true
	}
	out := make(map[string]store.OrderState, len(nos))
	for chunk := range slices.Chunk(slices.Sorted(maps.Keys(nos)), env.PageSize) {
		states, err := env.DB.OrderStates(ctx, chunk)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, states)
	}
	return out, nil
}

func rowOwner(s snapshot, seat string) (string, core.PhraseArg) {
	if r, ok := s.rows[seat]; ok {
		return r.OrderNo, core.ArgText(r.OrderNo)
	}
	return "nobody", core.ArgWord("reconcile.word.nobody")
}

// relock locks again the seats of pending orders that the seat store lost
// (or that release just freed from a stale holder).
func (c StaleRedisLock) relock(ctx context.Context, env *Env, s snapshot, freed map[string]bool, dryRun bool, res *Result) {
	cutoff := env.cutoff()
	type pending struct {
		user    int64
		created time.Time
		seats   []string
	}
	lost := make(map[string]*pending)
	for seat, r := range s.rows {
		if !r.OrderFound || r.Status != core.StatusPending || !r.CreatedAt.Before(cutoff) {
			continue // not pending, or placed moments ago (its Lock precedes its commit)
		}
		if _, held := s.holds[seat]; held && !freed[seat] {
			continue
		}
		p := lost[r.OrderNo]
		if p == nil {
			p = &pending{user: r.UserID, created: r.CreatedAt}
			lost[r.OrderNo] = p
		}
		p.seats = append(p.seats, seat)
	}
	for _, no := range slices.Sorted(maps.Keys(lost)) {
		p := lost[no]
		slices.Sort(p.seats)
		it := Item{OrderNo: no, ShowID: s.showID, SeatIDs: p.seats, UserID: p.user, Action: ActionRelock}
		it.say("pending order's seats are not held in the seat store", core.Say("reconcile.note.relock"))
		if !env.wants(c.Name(), it) {
			continue
		}
		if !dryRun {
			// No purchase limit and blocks do not count: the DB already gave
			// the user these seats (a blocked one sold at the box office).
			// The lock time is the order's, as a rebuild would write it.
			err := env.Seats.LockBlocked(ctx, s.showID, p.user, no, p.seats, 0, p.created)
			switch {
			case errors.Is(err, core.ErrSeatUnavailable):
				it.sayAlso("locked by another order meanwhile: left for the next run", core.Say("reconcile.note.relock_taken"))
			case err != nil:
				it.fail(err)
			default:
				c.confirmRelock(ctx, env, s.showID, p.user, &it)
			}
		}
		res.add(env, c.Name(), it)
	}
}

// confirmRelock checks, once the lock is in place, that the order is still
// live: the snapshot the re-lock came from may be old, and an order ended
// since then has already run its own release, so nothing else would free
// the seats. An order that ends after this read releases them itself (its
// release follows its commit, which follows this lock). A paid order keeps
// the lock: paid_not_sold sells its seats.
func (c StaleRedisLock) confirmRelock(ctx context.Context, env *Env, showID, user int64, it *Item) {
	states, err := env.DB.OrderStates(ctx, []string{it.OrderNo})
	if err != nil {
		it.fail(fmt.Errorf("re-read order %s after locking its seats again: %w", it.OrderNo, err))
		return
	}
	o, exists := states[it.OrderNo]
	if exists && (o.Status == core.StatusPending || o.Status == core.StatusPaid) {
		it.Fixed = true
		if err := env.repaired(ctx, c.Name(), it.OrderNo, map[string]any{"action": ActionRelock,
			"show_id": showID, "seat_ids": it.SeatIDs}); err != nil {
			it.fail(err)
		}
		return
	}
	ended, endedWord := "gone", core.ArgWord("reconcile.word.gone")
	if exists {
		ended, endedWord = o.Status.String(), statusWord(o.Status)
	}
	// The holder-guarded release frees only this order's locks.
	if _, err := env.Seats.Release(ctx, showID, user, it.OrderNo, it.SeatIDs); err != nil {
		it.fail(fmt.Errorf("order %s meanwhile, giving its seats back: %w", ended, err))
		return
	}
	it.sayAlso("order "+ended+" meanwhile: lock given back", core.Say("reconcile.note.ended_meanwhile", endedWord))
}
