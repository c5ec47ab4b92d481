package reconcile

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"seatflow/core"
	"seatflow/core/store"
)

// CheckRedelivery checks DESIGN.md's fifth invariant: delivering any timeout
// message again, any number of times, changes nothing. For every order it
// delivers, twice, each hop the chain has already consumed (every hop of a
// closed order; every hop but the one in flight of a pending order) to
// eng.HandleTimeout, and compares the orders, the seat store and the money
// tables before and after. A pending order past its expiry is skipped: its
// timeout is due, not a redelivery (CheckInvariants reports it).
//
// It leaves what a redelivery leaves (timeout_fired events, a lost-race
// end_attempt) and reads everything: it is for tests on a quiet system.
func CheckRedelivery(ctx context.Context, eng *core.Engine, db *store.DB, seatStore SeatReader, now time.Time) error {
	before, err := takeRedeliveryState(ctx, db, seatStore)
	if err != nil {
		return fmt.Errorf("redelivery: %w", err)
	}
	for _, no := range slices.Sorted(maps.Keys(before.orders)) {
		o := before.orders[no]
		last := o.TimeoutHop
		if o.Status == core.StatusPending {
			if !now.Before(o.ExpireAt) {
				continue
			}
			last-- // the hop in flight re-arms when it comes: that is its job
		}
		for hop := 1; hop <= last; hop++ {
			for range 2 {
				if err := eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: no, Hop: hop}); err != nil {
					return fmt.Errorf("redelivery: order %s hop %d: %w", no, hop, err)
				}
			}
		}
	}
	after, err := takeRedeliveryState(ctx, db, seatStore)
	if err != nil {
		return fmt.Errorf("redelivery: %w", err)
	}
	v := &violations{}
	for _, no := range slices.Sorted(maps.Keys(before.orders)) {
		if a := after.orders[no]; !reflect.DeepEqual(before.orders[no], a) {
			v.addf("redelivering the timeouts of order %s changed it: %+v became %+v", no, before.orders[no], a)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(before.seats)) {
		if before.seats[id] != after.seats[id] {
			v.addf("redelivering timeouts changed show %d's seat store: %s became %s", id, before.seats[id], after.seats[id])
		}
	}
	if !maps.Equal(before.money, after.money) {
		v.addf("redelivering timeouts changed the money tables: %v became %v", before.money, after.money)
	}
	return v.err()
}

// redeliveryState is what a redelivery must leave as it was.
type redeliveryState struct {
	orders map[string]core.Order
	seats  map[int64]string // a show's holds, purchase counters and blocks, printed
	money  map[string]int
}

func takeRedeliveryState(ctx context.Context, db *store.DB, seatStore SeatReader) (redeliveryState, error) {
	s := redeliveryState{orders: map[string]core.Order{}, seats: map[int64]string{}}
	var nos []string
	if err := db.EachOrder(ctx, core.OrderSearch{}, func(o core.Order) error {
		nos = append(nos, o.OrderNo)
		return nil
	}); err != nil {
		return s, err
	}
	for _, no := range nos {
		o, err := db.Order(ctx, no)
		if err != nil {
			return s, err
		}
		s.orders[no] = o
	}
	shows, err := db.Shows(ctx)
	if err != nil {
		return s, err
	}
	for _, show := range shows {
		holds, err := seatStore.Holds(ctx, show.ID)
		if err != nil {
			return s, err
		}
		limits, err := seatStore.Limits(ctx, show.ID)
		if err != nil {
			return s, err
		}
		blocks, err := seatStore.Blocks(ctx, show.ID)
		if err != nil {
			return s, err
		}
		s.seats[show.ID] = fmt.Sprintf("holds %v counters %v blocks %v", holds, limits, blocks)
	}
	s.money, err = db.MoneyRows(ctx)
	return s, err
}
