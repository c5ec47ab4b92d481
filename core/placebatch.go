package core

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"
)

// Placement writers: Place's transactions, group-committed (groupcommit.go).
// An order arriving alone is written exactly as before, in a transaction of
// its own. Orders arriving together are written in one transaction of
// multi-row statements: one sale check per show, one INSERT each for the
// orders, their placed seats, their order_seat rows and their placed
// events, one commit. Each order still decides alone whether it exists:
// a show that refuses the sale refuses only its own orders, and a batch
// that breaks a constraint (a seat already taken in the DB while Redis said
// free, a drawn code already in use) is rolled back and written order by
// order, so one bad order never fails the others. Everything after the
// commit but the first timeout messages (Redis, the live map) stays each
// caller's own, after do returns. The batch's first timeout messages go out
// as one message once it committed (firstHops); on a TxQueue (the DB queue)
// they and their events are rows of the same transaction instead.
//
// One writer: a batch is then everything that arrived while the previous
// one committed and sent its message, so batches grow with the load. With
// four, a CPU-bound host wrote batches of one or two orders, and every
// order paid for a transaction and a share of a timeout message of its own
// (bench place, real stack, 64 clients: 4 writers 0.28–0.34 of raw commit,
// 0.12–0.13 messages an order; 1 writer 0.36–0.45, 0.03). Writers more
// than one only queue for the same locks and the same sender.
const (
	placeWriters  = 1
	placeMaxBatch = 256 // orders per transaction: all a rush's admitted placements (server/overload.go)
)

// PlacementsInFlight is how many placements the group commit takes in one
// round, every writer's batch full: a placement waits in its queue holding
// no database connection, so this, not the pool, bounds the placements an
// instance should have in flight (server/overload.go).
const PlacementsInFlight = placeWriters * placeMaxBatch

// placement is one order on its way into the DB.
type placement struct {
	ctx         context.Context // the caller's: its trace id, and its cancel when written alone
	o           *Order
	planVersion int64
	now         time.Time
	firstHop    DelayPlan // its first timeout message (firstHops; in the transaction on a TxQueue)
}

// errBatchConstraint rolls a batch back so its orders are written one by one.
var errBatchConstraint = errors.New("group commit: a constraint failed; writing the batch order by order")

func (e *Engine) newPlaceWriter() *groupCommit[placement] {
	return newGroupCommit(placeWriters, placeMaxBatch, e.writePlacements)
}

// writePlacements is the placement writer of the group commit.
func (e *Engine) writePlacements(ctx context.Context, batch []*gcJob[placement]) {
	defer func() {
		for _, j := range batch {
			close(j.done)
		}
	}()
	defer func() { // after the commit, before the answers: the batch's first timeouts
		placed := make([]placement, 0, len(batch))
		for _, j := range batch {
			if j.err == nil {
				placed = append(placed, j.v)
			}
		}
		e.firstHops(ctx, placed)
	}()
	if len(batch) == 1 {
		if batch[0].err = e.recordPlacement(batch[0].v); batch[0].err == nil {
			e.metrics.GroupCommitBatch.WithLabelValues(WriterPlace).Observe(1)
		}
		return
	}
	var (
		live []*gcJob[placement]
		wake func()
	)
	err := e.store.InTx(ctx, func(tx Tx) error {
		wake = func() {}
		var err error
		if live, err = e.checkSales(ctx, tx, batch); err != nil || len(live) == 0 {
			return err
		}
		orders := make([]Order, len(live))
		ps := make([]placement, len(live))
		events := make([]Event, len(live), 2*len(live))
		for i, j := range live {
			orders[i], ps[i] = *j.v.o, j.v
			events[i] = placedEvent(j.v.ctx, orders[i], j.v.now)
		}
		err = tx.InsertOrders(ctx, orders)
		if err == nil {
			err = tx.InsertSeatsOfOrders(ctx, orders)
		}
		if errors.Is(err, ErrCodeTaken) || errors.Is(err, ErrSeatUnavailable) {
			return errBatchConstraint
		}
		if err != nil {
			return err
		}
		if wake, events, err = e.queueTimeouts(ctx, tx, ps, events); err != nil {
			return err
		}
		return tx.AddEvents(ctx, events)
	})
	if errors.Is(err, ErrCommitUnknown) {
		e.settlePlacements(ctx, live, wake, err)
		return
	}
	if errors.Is(err, errBatchConstraint) {
		e.metrics.GroupCommitFallbacks.WithLabelValues(WriterPlace).Inc()
		for _, j := range live {
			j.err = e.recordPlacement(j.v)
		}
		return
	}
	if err != nil {
		for _, j := range batch {
			if j.err == nil {
				j.err = err
			}
		}
		return
	}
	wake()
	e.metrics.GroupCommitBatch.WithLabelValues(WriterPlace).Observe(float64(len(live)))
}

// queueTimeouts writes, on a TxQueue, the first timeout message of each of
// ps in tx and appends their timeout_scheduled events to events. wake is
// for after the commit; without a TxQueue it does nothing and the messages
// are sent after the commit (Place).
func (e *Engine) queueTimeouts(ctx context.Context, tx Tx, ps []placement, events []Event) (wake func(), _ []Event, err error) {
	if e.outbox == nil {
		return func() {}, events, nil
	}
	msgs := make([]QueuedMsg, len(ps))
	for i, p := range ps {
		msg := timeoutMsg(p.ctx, p.o.OrderNo, 1, p.firstHop, p.now)
		msgs[i] = QueuedMsg{Msg: msg, Level: p.firstHop.Level, Delay: p.firstHop.Delay}
		events = append(events, scheduledEvent(msg, p.firstHop))
	}
	if wake, err = e.outbox.SendTx(ctx, tx, msgs); err != nil {
		return nil, nil, err
	}
	return wake, events, nil
}

// checkSales runs CheckShowSale for a batch: once per show and plan version
// at the batch's earliest time and, if that passes, at its latest; only an
// order placed across the end of sales has its own check. It sets the
// error of each refused order and returns the others; an error that is not
// a refusal fails the batch.
func (e *Engine) checkSales(ctx context.Context, tx Tx, batch []*gcJob[placement]) ([]*gcJob[placement], error) {
	type sale struct{ show, version int64 }
	groups := make(map[sale][]*gcJob[placement])
	for _, j := range batch {
		j.err = nil // InTx may run the batch again
		k := sale{j.v.o.ShowID, j.v.planVersion}
		groups[k] = append(groups[k], j)
	}
	keys := slices.SortedFunc(func(yield func(sale) bool) {
		for k := range groups {
			if !yield(k) {
				return
			}
		}
	}, func(a, b sale) int { return cmp.Or(cmp.Compare(a.show, b.show), cmp.Compare(a.version, b.version)) })
	live := make([]*gcJob[placement], 0, len(batch))
	for _, k := range keys {
		js := groups[k]
		first := slices.MinFunc(js, func(a, b *gcJob[placement]) int { return a.v.now.Compare(b.v.now) }).v.now
		last := slices.MaxFunc(js, func(a, b *gcJob[placement]) int { return a.v.now.Compare(b.v.now) }).v.now
		err := tx.CheckShowSale(ctx, k.show, k.version, first)
		if err == nil && last.After(first) {
			err = tx.CheckShowSale(ctx, k.show, k.version, last)
		}
		if errors.Is(err, ErrSalesEnded) && last.After(first) {
			for _, j := range js { // some came before the end, some after
				if j.err = tx.CheckShowSale(ctx, k.show, k.version, j.v.now); j.err == nil {
					live = append(live, j)
				} else if !saleRefused(j.err) {
					return nil, j.err
				}
			}
			continue
		}
		switch {
		case err == nil:
			live = append(live, js...)
		case saleRefused(err):
			for _, j := range js {
				j.err = err
			}
		default:
			return nil, err
		}
	}
	return live, nil
}

// saleRefused reports CheckShowSale's answers about the show, as opposed
// to a failure to ask.
func saleRefused(err error) bool {
	return errors.Is(err, ErrShowCancelled) || errors.Is(err, ErrShowDraft) || errors.Is(err, ErrSalesEnded) ||
		errors.Is(err, ErrPlanChanged) || errors.Is(err, ErrShowNotFound)
}

// recordPlacement writes one order in a transaction of its own. A COMMIT
// that goes unanswered is settled by reading: the order is placed if its
// row is there, else written once more.
func (e *Engine) recordPlacement(p placement) error {
	wake, err := e.writePlacement(p)
	if errors.Is(err, ErrCommitUnknown) {
		found, rerr := e.placedOrders(p.ctx, []string{p.o.OrderNo})
		switch _, ok := found[p.o.OrderNo]; {
		case rerr != nil:
			return unsettled(err, rerr)
		case !ok:
			wake, err = e.writePlacement(p)
		default:
			err = nil
		}
	}
	if err != nil {
		return err
	}
	wake()
	return nil
}

// writePlacement is recordPlacement's transaction; wake is for after it
// commits.
func (e *Engine) writePlacement(p placement) (wake func(), _ error) {
	err := e.store.InTx(p.ctx, func(tx Tx) error {
		if err := tx.CheckShowSale(p.ctx, p.o.ShowID, p.planVersion, p.now); err != nil {
			return err
		}
		if err := insertWithCode(p.ctx, tx, p.o, NewOrderCode); err != nil {
			return err
		}
		if err := tx.InsertOrderSeats(p.ctx, *p.o); err != nil {
			return err
		}
		var (
			events []Event
			err    error
		)
		if wake, events, err = e.queueTimeouts(p.ctx, tx, []placement{p}, []Event{placedEvent(p.ctx, *p.o, p.now)}); err != nil {
			return err
		}
		return tx.AddEvents(p.ctx, events)
	})
	return wake, err
}

func placedEvent(ctx context.Context, o Order, now time.Time) Event {
	return Event{OrderNo: o.OrderNo, At: now, Kind: EventPlaced, Detail: withVia(ctx, map[string]any{
		"user_id": o.UserID, "show_id": o.ShowID, "seat_ids": o.SeatIDs, "code": o.Code,
		"amount_cents": o.AmountCents, "expire_at": o.ExpireAt.Format(time.RFC3339Nano),
		"trace_id": TraceID(ctx),
	})}
}

// The after-commit events' writer: one multi-row INSERT for the events of
// every order that committed meanwhile.
const (
	eventWriters  = 2
	eventMaxBatch = 256
)

func (e *Engine) writeEvents(ctx context.Context, batch []*gcJob[Event]) {
	var err error
	if len(batch) == 1 {
		err = e.store.AddEvent(ctx, batch[0].v)
	} else {
		evs := make([]Event, len(batch))
		for i, j := range batch {
			evs[i] = j.v
		}
		err = e.store.AddEvents(ctx, evs)
	}
	if err == nil {
		e.metrics.GroupCommitBatch.WithLabelValues(WriterEvents).Observe(float64(len(batch)))
	}
	for _, j := range batch {
		j.err = err
		close(j.done)
	}
}
