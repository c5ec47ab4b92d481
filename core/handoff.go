// The waiting list's hand-off (issue 33): the step that frees seats — a
// hold ending unpaid (timeout, customer, staff, reconcile), a refund, an
// unblock — hands them to the show's next matching waiting entries instead
// of putting them back on sale. In the database the ending and the offers
// are one transaction: the order_seat rows go from the old order to each
// offer's new pending order (source waitlist) before the commit. In the
// seat store the seats go from the old holder to the new one in one script
// (Transfer) after it, so they are never free in between: until the
// transfer runs they are still held by the order that let them go, and
// should it never run, reconcile's stale_redis_lock frees that hold and
// locks the seats again for the order the DB gives them to.

package core

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// handoffScan bounds the entries one hand-off reads: an entry whose count,
// category or together rule the freed seats cannot meet keeps its place,
// and the next is tried, up to this many.
const handoffScan = 50

// waitlistRefresh is how stale the engine's view of which shows have a
// list enabled may be: a list enabled on another instance is seen within it.
const waitlistRefresh = time.Second

// EventHandedOff is the timeline entry of an order whose seats went to a
// waiting-list offer (detail: seat_ids, to_order).
const EventHandedOff = "handed_off"

// handoff is what an ending handed to the waiting list in its transaction,
// for its after-commit steps.
type handoff struct {
	offers []offer
	rest   []string // the freed seats no entry took: back on sale
	wake   func()   // the offers' first timeout messages, on a TxQueue
}

// offer is one entry's new order.
type offer struct {
	entry    WaitEntry
	order    Order
	firstHop DelayPlan
}

// handed lists the seats the offers took.
func (h handoff) handed() []string {
	var ids []string
	for _, o := range h.offers {
		ids = append(ids, o.order.SeatIDs...)
	}
	return ids
}

// waitlistCache is which shows have their list enabled, with each one's
// plan, read outside any transaction (prepare) so that a
// hand-off in one reads nothing but its entries: on SQLite a read through
// the store inside a write transaction would wait for that transaction.
type waitlistCache struct {
	mu    sync.Mutex
	read  time.Time
	shows map[int64]cachedPlan // by show: its plan, for the choice
}

// prepareHandoff makes sure the view is at most waitlistRefresh old. One
// caller reads while the others go on with the view as it was; a failure to
// read leaves it as it was (a hand-off missed is seats back on sale, never
// seats lost) and the next caller reads again.
func (e *Engine) prepareHandoff(ctx context.Context) {
	c := &e.waitlists
	now := e.clock.Now()
	c.mu.Lock()
	if !c.read.IsZero() && now.Sub(c.read) < waitlistRefresh && !now.Before(c.read) {
		c.mu.Unlock()
		return
	}
	c.read = now
	c.mu.Unlock()
	shows, err := e.readWaitlists(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		e.log.WarnContext(ctx, "waiting lists: reading which are enabled", "err", err)
		c.read = time.Time{}
		return
	}
	c.shows = shows
}

// readWaitlists reads the shows whose list is enabled, with their plans.
func (e *Engine) readWaitlists(ctx context.Context) (map[int64]cachedPlan, error) {
	lists, err := e.store.EnabledWaitlists(ctx)
	if err != nil {
		return nil, err
	}
	shows := make(map[int64]cachedPlan, len(lists))
	for _, id := range lists {
		p, err := e.plans.get(ctx, e.store, id)
		if err != nil {
			return nil, fmt.Errorf("plan of show %d: %w", id, err)
		}
		shows[id] = p
	}
	return shows, nil
}

func (c *waitlistCache) show(id int64) (cachedPlan, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.shows[id]
	return s, ok
}

// forget has the next prepare read the lists again (a setting changed here).
func (c *waitlistCache) forget() {
	c.mu.Lock()
	c.read = time.Time{}
	c.mu.Unlock()
}

// handOff offers the seats from let go (freed, their order_seat rows
// already deleted in tx) to the show's waiting entries, in list order.
// Blocked seats are never handed on: they go back to their block.
func (e *Engine) handOff(ctx context.Context, tx Tx, from Order, freed []string, now time.Time) (handoff, error) {
	h := handoff{rest: freed, wake: func() {}}
	plan, listed := e.waitlists.show(from.ShowID)
	if len(freed) == 0 || !listed {
		return h, nil
	}
	ttl, entries, err := tx.WaitingEntries(ctx, from.ShowID, handoffScan)
	if err != nil || len(entries) == 0 {
		return h, err
	}
	blocked, err := tx.BlockedSeats(ctx, from.ShowID, freed)
	if err != nil {
		return h, err
	}
	avail := make(map[string]bool, len(freed))
	for _, id := range freed {
		if _, inPlan := plan.seats[id]; inPlan && !blocked[id] {
			avail[id] = true
		}
	}
	var events []Event
	for _, en := range entries {
		if len(avail) < en.Count {
			continue
		}
		c, _, ok := ChooseBest(plan.index, BestRequest{Count: en.Count, Category: en.Category, Together: en.Together},
			func(id string) bool { return avail[id] }, nil)
		if !ok {
			continue // keeps its place for seats that fit
		}
		seats := make([]Seat, len(c.SeatIDs))
		for i, id := range c.SeatIDs {
			seats[i] = plan.seats[id]
			delete(avail, id)
		}
		of := e.offerOrder(en, seats, ttl, now)
		if err := insertWithCode(ctx, tx, &of.order, NewOrderCode); err != nil {
			return h, fmt.Errorf("waiting-list offer to %s: %w", en.Token, err)
		}
		if err := tx.InsertOrderSeats(ctx, of.order); err != nil {
			return h, fmt.Errorf("waiting-list offer to %s: %w", en.Token, err)
		}
		if err := tx.OfferWaitEntry(ctx, en.ID, of.order.OrderNo, now); err != nil {
			return h, err
		}
		events = append(events, offeredEvent(ctx, of, from, now))
		if from.OrderNo != "" { // "" for an unblock
			events = append(events, Event{OrderNo: from.OrderNo, At: now, Kind: EventHandedOff,
				Detail: map[string]any{"seat_ids": of.order.SeatIDs, "to_order": of.order.OrderNo}})
		}
		h.offers = append(h.offers, of)
		if len(avail) == 0 {
			break
		}
	}
	if len(h.offers) == 0 {
		return h, nil
	}
	if h.wake, events, err = e.queueOfferTimeouts(ctx, tx, h.offers, now, events); err != nil {
		return h, err
	}
	handed := make(map[string]bool)
	for _, id := range h.handed() {
		handed[id] = true
	}
	h.rest = slices.DeleteFunc(slices.Clone(freed), func(id string) bool { return handed[id] })
	return h, tx.AddEvents(ctx, events)
}

// offerOrder is the pending order an entry is offered, held for ttl.
func (e *Engine) offerOrder(en WaitEntry, seats []Seat, ttl time.Duration, now time.Time) offer {
	first := e.cfg.Delay.Plan(ttl)
	o := Order{OrderNo: newOrderNo(now), Code: NewOrderCode(), ShowID: en.ShowID, UserID: en.UserID,
		Status: StatusPending, CreatedAt: now, ExpireAt: now.Add(ttl), TimeoutHop: 1,
		TimeoutDueAt: now.Add(first.Delay), Customer: en.Customer, Source: OrderSourceWaitlist}
	for _, s := range seats {
		o.AmountCents += s.PriceCents
		o.SeatIDs = append(o.SeatIDs, s.SeatID)
	}
	slices.Sort(o.SeatIDs)
	return offer{entry: en, order: o, firstHop: first}
}

func offeredEvent(ctx context.Context, of offer, from Order, now time.Time) Event {
	ev := placedEvent(ctx, of.order, now)
	ev.Detail["waitlist_entry"] = of.entry.Token
	if from.OrderNo != "" {
		ev.Detail["from_order"] = from.OrderNo
	}
	return ev
}

// queueOfferTimeouts writes the offers' first timeout messages in tx on a
// TxQueue, as a placement's (placebatch.go); without one they are sent
// after the commit (afterHandOff).
func (e *Engine) queueOfferTimeouts(ctx context.Context, tx Tx, offers []offer, now time.Time, events []Event) (func(), []Event, error) {
	ps := make([]placement, len(offers))
	for i := range offers {
		ps[i] = placement{ctx: ctx, o: &offers[i].order, now: now, firstHop: offers[i].firstHop}
	}
	return e.queueTimeouts(ctx, tx, ps, events)
}

// afterHandOff runs after the commit of an ending that made offers: the
// seats go from the old holder to each offer's order in the seat store,
// and each offer's timeout chain starts. freedAt is when the hold ended
// (its expiry for an expired one), for the hand-off's latency.
func (e *Engine) afterHandOff(ctx context.Context, from Order, h handoff, freedAt time.Time) {
	if len(h.offers) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	h.wake()
	for _, of := range h.offers {
		o := of.order
		if err := e.transferSeats(ctx, from.OrderNo, o); err != nil {
			e.metrics.SeatStoreFailure.WithLabelValues("transfer").Inc()
			e.log.ErrorContext(ctx, "waiting-list offer committed but the seat store still names the old holder; reconcile (stale_redis_lock) moves them",
				"order_no", o.OrderNo, "from_order", from.OrderNo, "err", err)
		} else {
			e.notify.SeatsChanged(o.ShowID, o.SeatIDs, SeatLocked, o.OrderNo)
		}
		e.metrics.WaitlistOffers.WithLabelValues(string(WaitOffered)).Inc()
		e.metrics.WaitlistHandoff.Observe(e.clock.Now().Sub(freedAt).Seconds())
		if e.outbox != nil {
			e.metrics.RearmHops.WithLabelValues(fmt.Sprint(of.firstHop.Level)).Inc()
		} else {
			e.sendTimeout(ctx, o.OrderNo, 1, of.firstHop, o.CreatedAt)
		}
	}
}

// transferSeats is the seat store's Transfer, sent once more when its reply
// is lost: it is idempotent (a seat already the offer's stays so).
func (e *Engine) transferSeats(ctx context.Context, from string, o Order) error {
	_, err := e.seats.Transfer(ctx, o.ShowID, from, o.OrderNo, o.UserID, o.SeatIDs, o.CreatedAt)
	if err != nil && replyLost(err) {
		_, err = e.seats.Transfer(ctx, o.ShowID, from, o.OrderNo, o.UserID, o.SeatIDs, o.CreatedAt)
	}
	return err
}

// offerEnded counts what became of an offer's order when it ended unpaid.
func (e *Engine) offerEnded(o Order) {
	if o.Source == OrderSourceWaitlist {
		e.metrics.WaitlistOffers.WithLabelValues(string(WaitExpired)).Inc()
	}
}
