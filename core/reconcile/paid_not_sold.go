package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"seatflow/core"
)

// PaidNotSold finds paid orders whose seats the seat store does not show
// sold to them — the after-commit MarkSold of a payment failed, or Redis lost
// its data — and marks them sold, as the payment path would have.
//
// Cost and trade-off: per show on sale, one HGETALL of its seat hash and a
// primary-key range of its order_seat rows (each joined to its order by
// uk_order_no), paged. That is proportional to the seats taken in shows on
// sale — bounded by the venues' capacity — and not to the order history
// (paid orders of past shows are never read). The alternative, reading only
// recently paid orders by idx_status_closed, would be cheaper still but
// could not see a paid seat lost with a flushed Redis; comparing whole shows
// catches both and feeds stale_redis_lock and limit_drift from the same reads.
type PaidNotSold struct{}

func (PaidNotSold) Name() string { return CheckPaidNotSold }

func (c PaidNotSold) Run(ctx context.Context, env *Env, dryRun bool) (Result, error) {
	var res Result
	err := env.eachShow(ctx, false, func(s snapshot) error {
		type paid struct {
			user  int64
			seats []string
			seen  []string // what the seat store shows, for the item detail
		}
		orders := make(map[string]*paid)
		for seat, r := range s.rows {
			if !r.OrderFound || r.Status != core.StatusPaid {
				continue
			}
			h, held := s.holds[seat]
			if held && h.State == core.SeatSold && h.OrderNo == r.OrderNo && h.UserID == r.UserID {
				continue
			}
			if !r.ClosedAt.Before(env.cutoff()) {
				continue // paid moments ago: the payment's own MarkSold may be on its way
			}
			p := orders[r.OrderNo]
			if p == nil {
				p = &paid{user: r.UserID}
				orders[r.OrderNo] = p
			}
			p.seats = append(p.seats, seat)
			if held {
				p.seen = append(p.seen, fmt.Sprintf("%s %s by %s", seat, h.State, h.OrderNo))
			} else {
				p.seen = append(p.seen, seat+" available")
			}
		}
		// A refund may have committed since the snapshot: MarkSold would
		// sell its seats again, so each order is read again and only the
		// ones still paid are repaired (refunded_sold frees a seat a refund
		// landing after this read leaves sold).
		nos := slices.Sorted(maps.Keys(orders))
		stillPaid := make(map[string]bool, len(nos))
		for chunk := range slices.Chunk(nos, env.PageSize) {
			states, err := env.DB.OrderStates(ctx, chunk)
			if err != nil {
				return err
			}
			for no, o := range states {
				stillPaid[no] = o.Status == core.StatusPaid
			}
		}
		for _, no := range nos {
			if !stillPaid[no] {
				continue
			}
			p := orders[no]
			slices.Sort(p.seats)
			slices.Sort(p.seen)
			it := Item{OrderNo: no, ShowID: s.showID, UserID: p.user, SeatIDs: p.seats, Action: ActionMarkSold}
			it.say("seat store shows "+strings.Join(p.seen, ", "),
				core.Say("reconcile.note.paid_not_sold", core.ArgText(strings.Join(p.seen, ", "))))
			if !env.wants(c.Name(), it) {
				continue
			}
			if !dryRun {
				if err := env.Seats.MarkSold(ctx, s.showID, p.user, no, p.seats); err != nil {
					it.fail(err)
				} else {
					it.Fixed = true
					if err := env.repaired(ctx, c.Name(), no, map[string]any{"action": ActionMarkSold,
						"show_id": s.showID, "seat_ids": p.seats}); err != nil {
						it.fail(err)
					}
				}
			}
			res.add(env, c.Name(), it)
		}
		return nil
	})
	return res, err
}
