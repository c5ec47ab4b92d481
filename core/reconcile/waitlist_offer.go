package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"seatflow/core"
	"seatflow/core/store"
)

// WaitlistOffer makes every live waiting-list offer agree with its entry
// and hold its seats (core/handoff.go). The ending and the offer commit in
// one transaction, so the entry and its order always agree unless rows
// were lost (a restore from backup); the step after the commit, the seat
// store's Transfer, can be lost with the instance. Per show on sale:
//
//   - an offered entry whose order does not exist is put back in line at
//     its old place, so a later hand-off offers it again;
//   - an offer's order that is not a waiting-list order of the entry's user
//     is reported (nothing here can tell which side is right);
//   - a pending offer placed before the grace period whose seats the seat
//     store does not hold for it: each seat still held by an order that is
//     no longer live (the one that let it go), or by nobody, is moved to
//     the offer by the same compare-and-move script the hand-off runs, so
//     it is never free in between; a seat held by a live order is left to
//     stale_redis_lock, which runs after this check.
//
// Cost: one indexed read of the show's offered entries with their orders,
// plus the seat-store hash already read for the other checks' snapshot
// only when an offer is found.
type WaitlistOffer struct{}

func (WaitlistOffer) Name() string { return CheckWaitlistOffer }

func (c WaitlistOffer) Run(ctx context.Context, env *Env, dryRun bool) (Result, error) {
	var res Result
	shows, err := env.ShowsOnSale(ctx)
	if err != nil {
		return res, err
	}
	for _, show := range shows {
		offers, err := env.DB.LiveOffers(ctx, show)
		if err != nil {
			return res, fmt.Errorf("show %d: %w", show, err)
		}
		if len(offers) == 0 {
			continue
		}
		holds, err := env.Seats.Holds(ctx, show)
		if err != nil {
			return res, fmt.Errorf("show %d: %w", show, err)
		}
		held := make(map[string]core.SeatHold, len(holds))
		for _, h := range holds {
			held[h.SeatID] = h
		}
		for _, of := range offers {
			if err := c.offer(ctx, env, show, of, held, dryRun, &res); err != nil {
				return res, fmt.Errorf("show %d: %w", show, err)
			}
		}
	}
	return res, nil
}

func (c WaitlistOffer) offer(ctx context.Context, env *Env, show int64, of store.OfferRow, held map[string]core.SeatHold, dryRun bool, res *Result) error {
	switch {
	case !of.OrderFound:
		it := Item{OrderNo: of.OrderNo, ShowID: show, UserID: of.EntryUser, Action: ActionRequeue}
		it.say("the offered entry's order does not exist", core.Say("reconcile.note.offer_missing"))
		if !env.wants(c.Name(), it) {
			return nil
		}
		if !dryRun {
			switch ok, err := env.DB.RequeueWaitEntry(ctx, of.Token, of.OrderNo); {
			case err != nil:
				it.fail(err)
			case ok:
				it.Fixed = true
			default:
				it.sayAlso("the entry changed since it was read: left alone", core.Say("reconcile.note.row_changed"))
			}
		}
		res.add(env, c.Name(), it)
		return nil
	case of.Source != core.OrderSourceWaitlist || of.OrderUser != of.EntryUser:
		it := Item{OrderNo: of.OrderNo, ShowID: show, UserID: of.OrderUser, SeatIDs: of.SeatIDs, Action: ActionReport}
		it.say(fmt.Sprintf("the entry's offer is an order of user %d from %q", of.OrderUser, of.Source),
			core.Say("reconcile.note.offer_mismatch", core.ArgText(fmt.Sprint(of.OrderUser))))
		if env.wants(c.Name(), it) {
			res.add(env, c.Name(), it)
		}
		return nil
	case !of.CreatedAt.Before(env.cutoff()):
		return nil // made moments ago: its own Transfer may be on its way
	}
	var stray []core.SeatHold // the seats to move, with who holds them now
	for _, seat := range of.SeatIDs {
		h, ok := held[seat]
		switch {
		case !ok:
			stray = append(stray, core.SeatHold{SeatID: seat})
		case h.OrderNo != of.OrderNo || h.State != core.SeatLocked:
			stray = append(stray, h)
		}
	}
	if len(stray) == 0 {
		return nil
	}
	live, err := c.liveHolders(ctx, env, stray)
	if err != nil {
		return err
	}
	bySource := make(map[string][]string) // holder → seats to take from it
	for _, h := range stray {
		if h.OrderNo == "" || !live[h.OrderNo] {
			bySource[h.OrderNo] = append(bySource[h.OrderNo], h.SeatID)
		}
	}
	for _, from := range slices.Sorted(maps.Keys(bySource)) {
		seats := bySource[from]
		it := Item{OrderNo: of.OrderNo, ShowID: show, UserID: of.OrderUser, SeatIDs: seats, Action: ActionTransfer}
		holder, arg := from, core.ArgText(from)
		if from == "" {
			holder, arg = "nobody", core.ArgWord("reconcile.word.nobody")
		}
		it.say("the offer's seats are held by "+holder+", whose order is over", core.Say("reconcile.note.offer_seats", arg))
		if !env.wants(c.Name(), it) {
			continue
		}
		if !dryRun {
			n, err := env.Seats.Transfer(ctx, show, from, of.OrderNo, of.OrderUser, seats, of.CreatedAt)
			switch {
			case err != nil:
				it.fail(err)
			case n < len(seats):
				it.sayAlso("some seats changed since they were read: left for the next run", core.Say("reconcile.note.seats_changed"))
				it.Fixed = n > 0
			default:
				it.Fixed = true
			}
			if it.Fixed {
				if err := env.repaired(ctx, c.Name(), of.OrderNo, map[string]any{"action": ActionTransfer,
					"show_id": show, "seat_ids": seats, "from_order": from}); err != nil {
					it.fail(err)
				}
			}
		}
		res.add(env, c.Name(), it)
	}
	return nil
}

// liveHolders reads which of the orders holding stray seats are still
// pending or paid.
func (WaitlistOffer) liveHolders(ctx context.Context, env *Env, stray []core.SeatHold) (map[string]bool, error) {
	var nos []string
	for _, h := range stray {
		if h.OrderNo != "" && !slices.Contains(nos, h.OrderNo) {
			nos = append(nos, h.OrderNo)
		}
	}
	states, err := env.DB.OrderStates(ctx, nos)
	if err != nil {
		return nil, err
	}
	live := make(map[string]bool, len(states))
	for no, o := range states {
		live[no] = o.Status == core.StatusPending || o.Status == core.StatusPaid
	}
	return live, nil
}
