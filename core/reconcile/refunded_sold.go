package reconcile

import (
	"context"
	"maps"
	"slices"
	"strings"

	"seatflow/core"
)

// RefundedSold frees seats the seat store still shows sold to an order
// that is no longer paid — a refunded order whose after-commit release
// failed (or whose payment's late MarkSold landed after the refund's
// release) — and seats a paid order gave back in a partial refund
// (core/refundseats.go) under the same mishaps, so the refunded seats can
// be sold again. The DB gave the seats
// back in the refund's transaction; the seat store is only catching up.
//
// The release is the refund's own holder-guarded script (ReleaseSold): a
// seat locked or sold to anyone else since the snapshot is never touched,
// and releasing twice frees nothing. Refunds younger than the grace period
// are left alone, as their own release may be on its way.
//
// Cost: the per-show reads of paid_not_sold, plus one uk_order_no lookup
// and one refund idx_order_no lookup per order found (a page at a time).
type RefundedSold struct{}

func (RefundedSold) Name() string { return CheckRefundedSold }

func (c RefundedSold) Run(ctx context.Context, env *Env, dryRun bool) (Result, error) {
	var res Result
	err := env.eachShow(ctx, false, func(s snapshot) error {
		bySeller := make(map[string][]string) // order → seats the seat store sells to it without a live row
		user := make(map[string]int64)
		for seat, h := range s.holds {
			if h.State != core.SeatSold {
				continue
			}
			if r, ok := s.rows[seat]; ok && r.OrderNo == h.OrderNo && r.Live() {
				continue // the DB agrees; a sold seat of a paid order is paid_not_sold's
			}
			bySeller[h.OrderNo] = append(bySeller[h.OrderNo], seat)
			user[h.OrderNo] = h.UserID
		}
		if len(bySeller) == 0 {
			return nil
		}
		nos := slices.Sorted(maps.Keys(bySeller))
		for chunk := range slices.Chunk(nos, env.PageSize) {
			states, err := env.DB.OrderStates(ctx, chunk)
			if err != nil {
				return err
			}
			refundedAt, err := env.DB.RefundedAt(ctx, chunk)
			if err != nil {
				return err
			}
			for _, no := range chunk {
				seatIDs := bySeller[no]
				switch o, ok := states[no]; {
				case !ok:
					continue
				case o.Status == core.StatusPaid:
					// Only the seats a partial refund took from the order.
					if seatIDs, err = givenBack(ctx, env, no, seatIDs); err != nil {
						return err
					}
					if len(seatIDs) == 0 {
						continue
					}
				case o.Status != core.StatusRefunded:
					continue // only refunds are this check's: the others are left for ops to see
				}
				if at, ok := refundedAt[no]; !ok || !at.Before(env.cutoff()) {
					continue // refunded moments ago: its own release may be on its way
				}
				slices.Sort(seatIDs)
				it := Item{OrderNo: no, ShowID: s.showID, UserID: user[no], SeatIDs: seatIDs, Action: ActionReleaseSold}
				it.say("order refunded, seat store shows "+strings.Join(seatIDs, ", ")+" sold to it",
					core.Say("reconcile.note.refunded_sold", core.ArgText(strings.Join(seatIDs, ", "))))
				if !env.wants(c.Name(), it) {
					continue
				}
				if !dryRun {
					c.release(ctx, env, s.showID, &it)
				}
				res.add(env, c.Name(), it)
			}
		}
		return nil
	})
	return res, err
}

func (c RefundedSold) release(ctx context.Context, env *Env, showID int64, it *Item) {
	n, err := env.Seats.ReleaseSold(ctx, showID, it.OrderNo, it.SeatIDs)
	switch {
	case err != nil:
		it.fail(err)
	case n == 0:
		it.sayAlso("the seats changed since they were read: left alone", core.Say("reconcile.note.seats_changed"))
	default:
		it.Fixed = true
		if err := env.repaired(ctx, c.Name(), it.OrderNo, map[string]any{"action": ActionReleaseSold,
			"show_id": showID, "seat_ids": it.SeatIDs, "released": n}); err != nil {
			it.fail(err)
		}
	}
}

// givenBack returns those of seatIDs that paid order no no longer lists:
// seats a partial refund gave back.
func givenBack(ctx context.Context, env *Env, no string, seatIDs []string) ([]string, error) {
	o, err := env.DB.Order(ctx, no)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range seatIDs {
		if !slices.Contains(o.SeatIDs, s) {
			out = append(out, s)
		}
	}
	return out, nil
}
