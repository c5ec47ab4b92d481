package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"seatflow/core"
)

// LimitDrift finds per-user purchase counters (seat store) that differ from
// the seats the DB gives the user in the show — order_seat rows of the
// user's pending and paid orders — and sets them to the DB's count.
//
// The counters move inside the same scripts that lock, release and sell
// seats, so a counter can only be judged when the user's seats agree in both
// stores: while they disagree a placement, cancel or payment is in flight
// (or a seat-level check has work left) and the counter is left for a later
// run, and a drift is fixed only when two consecutive looks at the show see
// the very same drift. The write is a compare-and-set (SetLimitIf) against
// the counter the looks saw, so a Lock or Release landing between the
// second look and the write is never erased: the counter is left for the
// next run.
//
// Cost: the per-show reads of paid_not_sold plus one HGETALL of the show's
// counters; a second look only for shows where a drift was seen.
type LimitDrift struct{}

func (LimitDrift) Name() string { return CheckLimitDrift }

// drift is one user's counter as stored (have) and as the DB implies (want).
type drift struct{ have, want int }

func (c LimitDrift) Run(ctx context.Context, env *Env, dryRun bool) (Result, error) {
	var res Result
	err := env.eachShow(ctx, true, func(s snapshot) error {
		first := c.observe(s)
		if len(first) == 0 {
			return nil
		}
		again, err := env.readSnapshot(ctx, s.showID, true)
		if err != nil {
			return err
		}
		second := c.observe(again)
		for _, user := range slices.Sorted(maps.Keys(first)) {
			d := first[user]
			if second[user] != d {
				continue // it moved between the looks: something was in flight
			}
			it := Item{ShowID: s.showID, UserID: user, Action: ActionSetLimit}
			it.say(fmt.Sprintf("counter %d, the DB gives the user %d seats", d.have, d.want),
				core.Say("reconcile.note.limit", core.ArgText(strconv.Itoa(d.have)), core.ArgText(strconv.Itoa(d.want))))
			if !env.wants(c.Name(), it) {
				continue
			}
			if !dryRun {
				c.fix(ctx, env, again, user, d, &it)
			}
			res.add(env, c.Name(), it)
		}
		return nil
	})
	return res, err
}

// observe returns the users of the show whose seats agree in both stores but
// whose counter does not count them.
func (LimitDrift) observe(s snapshot) map[int64]drift {
	inDB := make(map[int64][]string)
	for seat, r := range s.rows {
		if r.Live() {
			inDB[r.UserID] = append(inDB[r.UserID], seat)
		}
	}
	inStore := make(map[int64][]string)
	for seat, h := range s.holds {
		inStore[h.UserID] = append(inStore[h.UserID], seat)
	}
	users := make(map[int64]bool)
	for _, m := range []map[int64][]string{inDB, inStore} {
		for u := range m {
			users[u] = true
		}
	}
	for u := range s.limits {
		users[u] = true
	}
	out := make(map[int64]drift)
	for u := range users {
		db, st := slices.Sorted(slices.Values(inDB[u])), slices.Sorted(slices.Values(inStore[u]))
		if !slices.Equal(db, st) {
			continue
		}
		if have := s.limits[u]; have != len(db) {
			out[u] = drift{have: have, want: len(db)}
		}
	}
	return out
}

// fix writes the counter and records the repair on each of the user's
// orders in the show (a counter belongs to no single order).
func (c LimitDrift) fix(ctx context.Context, env *Env, s snapshot, user int64, d drift, it *Item) {
	wrote, err := env.Seats.SetLimitIf(ctx, s.showID, user, d.have, d.want)
	if err != nil {
		it.fail(err)
		return
	}
	if !wrote {
		it.sayAlso("the counter moved since it was read: left for the next run", core.Say("reconcile.note.limit_moved"))
		return
	}
	it.Fixed = true
	orders := make(map[string]bool)
	for _, r := range s.rows {
		if r.Live() && r.UserID == user {
			orders[r.OrderNo] = true
		}
	}
	for _, no := range slices.Sorted(maps.Keys(orders)) {
		if err := env.repaired(ctx, c.Name(), no, map[string]any{"action": ActionSetLimit, "show_id": s.showID,
			"user_id": user, "from": d.have, "to": d.want}); err != nil {
			it.fail(err)
			return
		}
	}
}
