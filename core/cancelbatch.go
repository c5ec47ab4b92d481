package core

import (
	"context"
	"fmt"
	"time"
)

// cancelJob is one CancelAndRelease on its way into the DB.
type cancelJob struct {
	e      *Engine // for the waiting list's hand-off (handoff.go)
	ctx    context.Context
	r      CancelRequest
	now    time.Time
	expiry bool // an expiry path (timeout, sweep, reconcile): never before expire_at

	// What it did, for CancelAndRelease to act on after the commit.
	won      bool
	order    Order    // as it stands afterwards
	released []string // the seats whose order_seat rows it deleted
	hand     handoff  // what of released went to waiting-list offers
}

func (j *cancelJob) orderNo() string { return j.r.OrderNo }

func (j *cancelJob) caller() context.Context { return j.ctx }

// write cancels the order in tx, one statement at a time.
func (j *cancelJob) write(ctx context.Context, tx Tx) error {
	r, now := j.r, j.now
	j.won, j.order, j.released, j.hand = false, Order{}, nil, handoff{}
	// Lock the row before the conditional update, in the same order as
	// the payment path: InnoDB deadlocks when one transaction upgrades
	// the UPDATE's lock to a locking read while another waits on it.
	var err error
	if j.order, err = tx.OrderForUpdate(ctx, r.OrderNo); err != nil {
		return err
	}
	if j.order.OrderNo != r.OrderNo {
		// Found only by the collation (MariaDB's ignores case): the
		// results are keyed by the stored number, so this is no order of
		// the caller's, as on SQLite.
		return fmt.Errorf("order %s (stored as %s): %w", r.OrderNo, j.order.OrderNo, ErrOrderNotFound)
	}
	if j.expiry && now.Before(j.order.ExpireAt) {
		return nil // an expiry cancel of a hold extended since its caller looked
	}
	if j.won, err = tx.TransitionPending(ctx, r.OrderNo, StatusCancelled,
		Transition{At: now, Reason: r.Reason, Actor: r.Actor}); err != nil {
		return err
	}
	if !j.won {
		return r.audit(ctx, tx, now, j.order, false)
	}
	j.order.Status, j.order.ClosedAt, j.order.CancelReason, j.order.CancelActor = StatusCancelled, now, r.Reason, r.Actor
	if j.released, err = tx.DeleteOrderSeats(ctx, r.OrderNo); err != nil {
		return err
	}
	if err := tx.AddEvent(ctx, j.cancelledEvent()); err != nil {
		return err
	}
	if j.hand, err = j.e.handOff(ctx, tx, j.order, j.released, now); err != nil {
		return err
	}
	if err := j.e.expiredOfferHooks(ctx, tx, []Order{j.order}); err != nil {
		return err
	}
	return r.audit(ctx, tx, now, j.order, true)
}

// landed: a win is in the database when the order is cancelled at this
// job's time, for its reason, by its actor; nothing else writes those
// together. A cancel that lost wrote nothing to find (or an audit row).
func (j *cancelJob) landed(ctx context.Context, tx Tx) (wrote, landed bool, err error) {
	if !j.won {
		return false, false, nil
	}
	o, err := tx.OrderForUpdate(ctx, j.r.OrderNo)
	if err != nil {
		return true, false, err
	}
	return true, o.Status == StatusCancelled && o.ClosedAt.UnixMilli() == j.now.UnixMilli() &&
		o.CancelReason == j.r.Reason && o.CancelActor == j.r.Actor, nil
}

func (j *cancelJob) cancelledEvent() Event {
	d := map[string]any{"reason": j.r.Reason, "actor": j.r.Actor, "seat_ids": j.released}
	if j.r.Note != "" {
		d["note"] = j.r.Note
	}
	return Event{OrderNo: j.r.OrderNo, At: j.now, Kind: EventCancelled, Detail: withVia(j.ctx, d)}
}

// cancelTogether writes a batch of cancels in five statements whatever
// its size: the orders locked with one read in order-number order, the
// pending ones cancelled with one conditional UPDATE, their order_seat
// rows read and deleted, their events inserted; and, on a show with a
// waiting list, the seats handed on (handOffAll: a few more statements per
// batch). A cancel that finds its
// order ended, or (on an expiry path) extended past now, writes nothing,
// as alone. A staff cancel (it writes an audit row), an order that does
// not exist, or two cancels of one order have the batch written cancel by
// cancel instead (false), in the same transaction; so does an order
// stored under another spelling of its number.
func cancelTogether(ctx context.Context, tx Tx, jobs []*cancelJob) (bool, error) {
	nos := make([]string, len(jobs))
	seen := make(map[string]bool, len(jobs))
	for i, j := range jobs {
		if j.r.Audit != nil || seen[j.r.OrderNo] {
			return false, nil
		}
		seen[j.r.OrderNo] = true
		nos[i] = j.r.OrderNo
	}
	orders, err := tx.OrdersForUpdate(ctx, nos)
	if err != nil {
		return false, err
	}
	for _, j := range jobs {
		if _, ok := orders[j.r.OrderNo]; !ok {
			// Missing, or stored under another spelling: cancel by cancel,
			// where it fails alone, never as an empty order.
			return false, nil
		}
	}
	cancel := make(map[string]Transition, len(jobs))
	var winners []*cancelJob
	for _, j := range jobs {
		j.won, j.order, j.released, j.hand = false, orders[j.r.OrderNo], nil, handoff{}
		if j.order.Status != StatusPending || (j.expiry && j.now.Before(j.order.ExpireAt)) {
			continue
		}
		cancel[j.r.OrderNo] = Transition{At: j.now, Reason: j.r.Reason, Actor: j.r.Actor}
		winners = append(winners, j)
	}
	if len(winners) == 0 {
		return true, nil
	}
	if n, err := tx.TransitionPendings(ctx, StatusCancelled, cancel); err != nil {
		return false, err
	} else if n != len(cancel) {
		// The rows are locked: a pending order cannot be lost to anyone.
		return false, fmt.Errorf("cancels: %d of %d pending orders cancelled under their row locks", n, len(cancel))
	}
	won := make([]string, len(winners))
	for i, j := range winners {
		won[i] = j.r.OrderNo
	}
	seats, err := tx.DeleteSeatsOfOrders(ctx, won)
	if err != nil {
		return false, err
	}
	events := make([]Event, len(winners))
	for i, j := range winners {
		j.won, j.released = true, seats[j.r.OrderNo]
		j.order.Status, j.order.ClosedAt, j.order.CancelReason, j.order.CancelActor = StatusCancelled, j.now, j.r.Reason, j.r.Actor
		events[i] = j.cancelledEvent()
	}
	if err := tx.AddEvents(ctx, events); err != nil {
		return false, err
	}
	fs := make([]freeing, len(winners))
	ended := make([]Order, len(winners))
	for i, j := range winners {
		fs[i] = freeing{from: j.order, freed: j.released, at: j.now}
		ended[i] = j.order
	}
	if err := winners[0].e.expiredOfferHooks(ctx, tx, ended); err != nil {
		return false, err
	}
	hands, err := winners[0].e.handOffAll(ctx, tx, fs)
	if err != nil {
		return false, err
	}
	for i, j := range winners {
		j.hand = hands[i]
	}
	return true, nil
}
