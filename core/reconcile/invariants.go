package reconcile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"seatflow/core"
	"seatflow/core/store"
)

// maxViolations caps the violations CheckInvariants lists.
const maxViolations = 50

// CheckInvariants checks DESIGN.md's invariants over every show, seat by
// seat, and returns an error listing the violations (nil when none):
//
//   - every order_seat row belongs to a live (pending or paid) order;
//   - the seat store equals the state derived from the DB: a seat is locked
//     to its pending order or sold to its paid order exactly when an
//     order_seat row says so, and each user's purchase counter equals the
//     seats the DB gives them;
//   - the seat store blocks exactly the seats seat_block blocks, for the
//     same reason;
//   - no seat is sold to two paid orders, and every seat of a paid order is
//     in order_seat under that order;
//   - no order is still pending with expire_at at or before now: pass the
//     start of the last reconcile run (or the time minus one interval);
//   - every payment row was applied (its order paid by it) or recorded as
//     a discrepancy, and every paid order's txn has an applied payment row.
//
// The fifth, that delivering a timeout again changes nothing, needs an
// engine to deliver with: CheckRedelivery.
//
// It reads everything it checks (paged): it is for tests and for ops
// checking a quiet system, not for the hot path. Work in flight shows up as
// a violation.
func CheckInvariants(ctx context.Context, db *store.DB, seatStore SeatReader, now time.Time) error {
	v := &violations{}
	shows, err := db.Shows(ctx)
	if err != nil {
		return fmt.Errorf("invariants: %w", err)
	}
	for _, show := range shows {
		// A show over for longer than retention's grace may have lost its
		// seat-store keys by design (Reconciler.Prune): only its DB side
		// is checked.
		over := !show.StartsAt.IsZero() && show.StartsAt.Before(now.Add(-core.DefaultRetention.ShowGrace))
		if err := checkShow(ctx, db, seatStore, show.ID, !over, v); err != nil {
			return fmt.Errorf("invariants: show %d: %w", show.ID, err)
		}
	}
	var cur store.ExpiredRef
	for {
		page, err := db.ExpiredPendingAfter(ctx, now, cur, 500)
		if err != nil {
			return fmt.Errorf("invariants: %w", err)
		}
		for _, o := range page {
			v.addf("order %s still pending, expired at %s (checked at %s)", o.OrderNo,
				o.ExpireAt.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
		}
		if len(page) < 500 {
			break
		}
		cur = page[len(page)-1]
	}
	bad, err := db.PaymentViolations(ctx, maxViolations)
	if err != nil {
		return fmt.Errorf("invariants: %w", err)
	}
	for _, b := range bad {
		v.addf("%s", b)
	}
	return v.err()
}

// checkShow checks one show's seats in the DB and, with withSeatStore, the
// seat store against them.
func checkShow(ctx context.Context, db *store.DB, seatStore SeatReader, showID int64, withSeatStore bool, v *violations) error {
	var (
		holds  = map[string]core.SeatHold{}
		limits = map[int64]int{}
	)
	if withSeatStore {
		holdList, err := seatStore.Holds(ctx, showID)
		if err != nil {
			return err
		}
		if limits, err = seatStore.Limits(ctx, showID); err != nil {
			return err
		}
		for _, h := range holdList {
			holds[h.SeatID] = h
		}
	}
	rows := make(map[string]store.SeatRow)
	for after := ""; ; {
		page, err := db.ShowSeatRows(ctx, showID, after, 500)
		if err != nil {
			return err
		}
		for _, r := range page {
			rows[r.SeatID] = r
		}
		if len(page) < 500 {
			break
		}
		after = page[len(page)-1].SeatID
	}
	perUser := make(map[int64]int)
	for _, seat := range slices.Sorted(maps.Keys(rows)) {
		r := rows[seat]
		if !r.Live() {
			state := "missing"
			if r.OrderFound {
				state = r.Status.String()
			}
			v.addf("show %d seat %s: order_seat row of order %s, which is %s", showID, seat, r.OrderNo, state)
			continue
		}
		perUser[r.UserID]++
		if !withSeatStore {
			continue
		}
		want := core.SeatLocked
		if r.Status == core.StatusPaid {
			want = core.SeatSold
		}
		h, ok := holds[seat]
		switch {
		case !ok:
			v.addf("show %d seat %s: DB says %s to %s, seat store says available", showID, seat, want, r.OrderNo)
		case h.State != want || h.OrderNo != r.OrderNo || h.UserID != r.UserID:
			v.addf("show %d seat %s: DB says %s to %s (user %d), seat store says %s to %s (user %d)",
				showID, seat, want, r.OrderNo, r.UserID, h.State, h.OrderNo, h.UserID)
		}
	}
	for _, seat := range slices.Sorted(maps.Keys(holds)) {
		if _, ok := rows[seat]; !ok {
			h := holds[seat]
			v.addf("show %d seat %s: seat store says %s to %s, DB has no order_seat row", showID, seat, h.State, h.OrderNo)
		}
	}
	if withSeatStore {
		users := maps.Clone(perUser)
		maps.Copy(users, limits)
		for _, u := range slices.Sorted(maps.Keys(users)) {
			if limits[u] != perUser[u] {
				v.addf("show %d user %d: purchase counter %d, DB gives the user %d seats", showID, u, limits[u], perUser[u])
			}
		}
		if err := checkBlocks(ctx, db, seatStore, showID, v); err != nil {
			return err
		}
	}
	return checkPaid(ctx, db, showID, rows, v)
}

// checkBlocks: the seat store's blocks equal the DB's.
func checkBlocks(ctx context.Context, db *store.DB, seatStore SeatReader, showID int64, v *violations) error {
	inRedis, err := seatStore.Blocks(ctx, showID)
	if err != nil {
		return err
	}
	inDB, err := db.Blocks(ctx, showID)
	if err != nil {
		return err
	}
	for _, b := range inDB {
		switch reason, ok := inRedis[b.SeatID]; {
		case !ok:
			v.addf("show %d seat %s: DB blocks it (%s), seat store does not", showID, b.SeatID, b.Reason)
		case reason != b.Reason:
			v.addf("show %d seat %s: DB blocks it for %s, seat store for %s", showID, b.SeatID, b.Reason, reason)
		}
		delete(inRedis, b.SeatID)
	}
	for _, seat := range slices.Sorted(maps.Keys(inRedis)) {
		v.addf("show %d seat %s: seat store blocks it (%s), DB does not", showID, seat, inRedis[seat])
	}
	return nil
}

// checkPaid: no seat sold to two paid orders; every seat of a paid order is
// in order_seat under that order.
func checkPaid(ctx context.Context, db *store.DB, showID int64, rows map[string]store.SeatRow, v *violations) error {
	soldTo := make(map[string]string)
	for after := int64(0); ; {
		page, err := db.PaidOrdersAfter(ctx, showID, after, 500)
		if err != nil {
			return err
		}
		for _, o := range page {
			for _, seat := range o.SeatIDs {
				if other, dup := soldTo[seat]; dup {
					v.addf("show %d seat %s: sold to two paid orders, %s and %s", showID, seat, other, o.OrderNo)
				}
				soldTo[seat] = o.OrderNo
				if r, ok := rows[seat]; !ok || r.OrderNo != o.OrderNo {
					v.addf("show %d seat %s: paid order %s has no order_seat row for it", showID, seat, o.OrderNo)
				}
			}
		}
		if len(page) < 500 {
			return nil
		}
		after = page[len(page)-1].ID
	}
}

// violations collects what CheckInvariants found, up to maxViolations.
type violations struct {
	list []string
	n    int
}

func (v *violations) addf(format string, args ...any) {
	v.n++
	if len(v.list) < maxViolations {
		v.list = append(v.list, fmt.Sprintf(format, args...))
	}
}

func (v *violations) err() error {
	if v.n == 0 {
		return nil
	}
	errs := make([]error, 0, len(v.list)+1)
	for _, s := range v.list {
		errs = append(errs, errors.New(s))
	}
	if v.n > len(v.list) {
		errs = append(errs, fmt.Errorf("and %d more", v.n-len(v.list)))
	}
	return fmt.Errorf("%d invariant violations:\n%w", v.n, errors.Join(errs...))
}
