package reconcile

import (
	"context"

	"seatflow/core"
	"seatflow/core/store"
)

// OrphanOrderSeat finds order_seat rows whose order is cancelled or missing.
// Such a row keeps a seat taken in the DB (the truth) with nobody to pay for
// it; cancel-and-release deletes an order's rows in its own transaction, so
// they only come from bugs, manual edits or restores. The delete re-checks
// the order in the same statement, so a live order never loses its row.
//
// Cost: per show on sale, a primary-key range of its order_seat rows, each
// joined to its order by uk_order_no (a LEFT JOIN, so a missing order shows
// up), paged by seat_id. Rows of past shows are not read: they hold no seat
// anyone could still buy.
type OrphanOrderSeat struct{}

func (OrphanOrderSeat) Name() string { return CheckOrphanOrderSeat }

func (c OrphanOrderSeat) Run(ctx context.Context, env *Env, dryRun bool) (Result, error) {
	var res Result
	shows, err := env.ShowsOnSale(ctx)
	if err != nil {
		return res, err
	}
	for _, show := range shows {
		after := ""
		for {
			page, err := env.DB.ShowSeatRows(ctx, show, after, env.PageSize)
			if err != nil {
				return res, err
			}
			for _, r := range page {
				if r.Live() {
					continue
				}
				state, word := "missing", core.ArgWord("reconcile.word.missing")
				if r.OrderFound {
					state, word = r.Status.String(), statusWord(r.Status)
				}
				it := Item{OrderNo: r.OrderNo, ShowID: show, SeatIDs: []string{r.SeatID}, UserID: r.UserID,
					Action: ActionDelete}
				it.say("order is "+state, core.Say("reconcile.note.orphan", word))
				if !env.wants(c.Name(), it) {
					continue
				}
				if !dryRun {
					c.delete(ctx, env, store.OrphanSeat{ShowID: show, SeatID: r.SeatID, OrderNo: r.OrderNo,
						UserID: r.UserID, Missing: !r.OrderFound}, &it)
				}
				res.add(env, c.Name(), it)
			}
			if len(page) < env.PageSize {
				break
			}
			after = page[len(page)-1].SeatID
		}
	}
	return res, nil
}

// delete removes one orphan row and records the repair on its order (even
// a missing one: the timeline of that order number is where ops will look).
func (c OrphanOrderSeat) delete(ctx context.Context, env *Env, o store.OrphanSeat, it *Item) {
	deleted, err := env.DB.DeleteOrphanSeat(ctx, o)
	switch {
	case err != nil:
		it.fail(err)
	case !deleted:
		it.sayAlso("the row changed since it was read: left alone", core.Say("reconcile.note.row_changed"))
	default:
		it.Fixed = true
		if err := env.repaired(ctx, c.Name(), o.OrderNo, map[string]any{"action": ActionDelete,
			"show_id": o.ShowID, "seat_id": o.SeatID, "reason": it.Detail}); err != nil {
			it.fail(err)
		}
	}
}
