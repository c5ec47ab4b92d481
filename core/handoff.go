// The waiting list's hand-off (issue 33): the step that frees seats — a
// hold ending unpaid (timeout, customer, staff, reconcile), a refund, an
// unblock — hands them to the show's next matching waiting entries instead
// of putting them back on sale. In the database the ending and the offers
// are one transaction: the order_seat rows go from the old order to each
// offer's new pending order (source waitlist) before the commit. In the
// seat store the seats go from the old holder to the new one in one script
// (Transfer) after it, so they are never free in between: until the
// transfer runs they are still held by the order that let them go, and
// should it never run (the instance died), reconcile's waitlist_offer
// check moves them to the offer the same way.

package core

import (
	"context"
	"errors"
	"fmt"
	"maps"
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

// notHanded returns a copy of ids without the seats the offers took.
func (h handoff) notHanded(ids []string) []string {
	handed := h.handed()
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(handed, id) })
}

// waitlistCache is which shows have their list enabled, with each one's
// plan, read outside any transaction (prepareHandoff) so that a hand-off
// in one reads nothing but its entries: on SQLite a read through the store
// inside a write transaction would wait for that transaction.
type waitlistCache struct {
	mu      sync.Mutex
	shows   map[int64]cachedPlan // by show: its plan, for the choice
	read    time.Time            // when shows was read
	valid   bool                 // false until read, and after forget
	gen     int                  // forget's count: a read older than the last forget is not valid
	loading chan struct{}        // closed when the read in flight ends
}

// prepareHandoff makes sure the view is at most waitlistRefresh old. One
// caller reads while the others go on with the view as it was; only while
// there is no valid view (never read, or a setting changed here since) do
// they wait for the read. A failure to read is logged and read again by
// the next caller: a hand-off missed is seats back on sale, never seats
// lost.
func (e *Engine) prepareHandoff(ctx context.Context) {
	c := &e.waitlists
	for {
		now := e.clock.Now()
		c.mu.Lock()
		if c.valid && now.Sub(c.read) < waitlistRefresh && !now.Before(c.read) {
			c.mu.Unlock()
			return
		}
		if ch := c.loading; ch != nil {
			wait := !c.valid
			c.mu.Unlock()
			if !wait {
				return
			}
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return
			}
		}
		ch, gen := make(chan struct{}), c.gen
		c.loading = ch
		c.mu.Unlock()
		shows, err := e.readWaitlists(ctx)
		c.mu.Lock()
		c.loading = nil
		close(ch)
		if err == nil {
			c.shows = shows
			c.read, c.valid = now, c.gen == gen
		}
		c.mu.Unlock()
		if err != nil {
			e.log.WarnContext(ctx, "waiting lists: reading which are enabled", "err", err)
		}
		return
	}
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

// forget has the next prepareHandoff read the lists again, and every
// caller wait for that read (a setting changed here).
func (c *waitlistCache) forget() {
	c.mu.Lock()
	c.valid = false
	c.gen++
	c.mu.Unlock()
}

// freeing is one ending's seats for the waiting list: from let them go
// (their order_seat rows already deleted in the transaction) at at.
type freeing struct {
	from  Order // OrderNo "" for an unblock
	freed []string
	at    time.Time
}

// handOff is handOffAll for one ending.
func (e *Engine) handOff(ctx context.Context, tx Tx, from Order, freed []string, at time.Time) (handoff, error) {
	hs, err := e.handOffAll(ctx, tx, []freeing{{from: from, freed: freed, at: at}})
	if err != nil {
		return handoff{}, err
	}
	return hs[0], nil
}

// handOffAll offers the seats endings of one transaction freed to their
// shows' waiting entries, in list order, ending after ending: one read of
// each show's first entries (locked until the commit, so endings of the
// show in other transactions wait for this one and no entry is offered
// twice) and one write of all the offers, however many endings, so a burst
// of expiries holds those locks for one batch's statements, not one
// ending's each. Blocked seats are never handed on: they go back to their
// block. The handoff of fs[i] is at index i.
func (e *Engine) handOffAll(ctx context.Context, tx Tx, fs []freeing) ([]handoff, error) {
	hands := make([]handoff, len(fs))
	byShow := make(map[int64][]int)
	for i, f := range fs {
		hands[i] = handoff{rest: f.freed, wake: func() {}}
		if _, listed := e.waitlists.show(f.from.ShowID); listed && len(f.freed) > 0 {
			byShow[f.from.ShowID] = append(byShow[f.from.ShowID], i)
		}
	}
	var (
		offers []offer
		owners []int // the ending each offer's seats came from
	)
	for _, show := range slices.Sorted(maps.Keys(byShow)) {
		of, ow, err := e.matchShow(ctx, tx, show, fs, byShow[show])
		if err != nil {
			return nil, err
		}
		offers, owners = append(offers, of...), append(owners, ow...)
	}
	if len(offers) == 0 {
		return hands, nil
	}
	wake, err := e.writeOffers(ctx, tx, fs, offers, owners)
	if err != nil {
		return nil, err
	}
	for k, of := range offers {
		h := &hands[owners[k]]
		h.offers, h.wake = append(h.offers, of), wake
	}
	for i := range hands {
		if len(hands[i].offers) > 0 {
			hands[i].rest = hands[i].notHanded(fs[i].freed)
		}
	}
	return hands, nil
}

// matchShow chooses the offers of one show's endings (fs at idx): each
// ending's seats go to the first entries they fit (by the best-available
// rules), an entry that does not fit keeping its place.
func (e *Engine) matchShow(ctx context.Context, tx Tx, show int64, fs []freeing, idx []int) ([]offer, []int, error) {
	plan, _ := e.waitlists.show(show)
	var freed []string
	for _, i := range idx {
		freed = append(freed, fs[i].freed...)
	}
	ttl, entries, err := tx.WaitingEntries(ctx, show, handoffScan+len(freed))
	if err != nil || len(entries) == 0 {
		return nil, nil, err
	}
	blocked, err := tx.BlockedSeats(ctx, show, freed)
	if err != nil {
		return nil, nil, err
	}
	var (
		offers  []offer
		owners  []int
		offered = make(map[int64]bool)
	)
	for _, i := range idx {
		avail := make(map[string]bool, len(fs[i].freed))
		for _, id := range fs[i].freed {
			if _, inPlan := plan.seats[id]; inPlan && !blocked[id] {
				avail[id] = true
			}
		}
		for _, en := range entries {
			if len(avail) == 0 {
				break
			}
			if offered[en.ID] || len(avail) < en.Count {
				continue
			}
			c, _, ok := ChooseBest(plan.index, BestRequest{Count: en.Count, Category: en.Category, Together: en.Together},
				func(id string) bool { return avail[id] }, nil)
			if !ok {
				continue // keeps its place for seats that fit
			}
			seats := make([]Seat, len(c.SeatIDs))
			for k, id := range c.SeatIDs {
				seats[k] = plan.seats[id]
				delete(avail, id)
			}
			offered[en.ID] = true
			offers, owners = append(offers, e.offerOrder(en, seats, ttl, fs[i].at)), append(owners, i)
		}
	}
	return offers, owners, nil
}

// writeOffers writes the offers' orders, seats, entries, events and first
// timeout messages in tx, each kind in one statement.
func (e *Engine) writeOffers(ctx context.Context, tx Tx, fs []freeing, offers []offer, owners []int) (wake func(), _ error) {
	orders := make([]Order, len(offers))
	entries := make(map[int64]EntryOffer, len(offers))
	var events []Event
	for k, of := range offers {
		orders[k] = of.order
		entries[of.entry.ID] = EntryOffer{OrderNo: of.order.OrderNo, At: of.order.CreatedAt}
		from := fs[owners[k]].from
		events = append(events, offeredEvent(ctx, of, from, of.order.CreatedAt))
		if from.OrderNo != "" { // "" for an unblock
			events = append(events, Event{OrderNo: from.OrderNo, At: of.order.CreatedAt, Kind: EventHandedOff,
				Detail: map[string]any{"seat_ids": of.order.SeatIDs, "to_order": of.order.OrderNo}})
		}
	}
	if err := insertOffers(ctx, tx, orders); err != nil {
		return nil, fmt.Errorf("waiting-list offers: %w", err)
	}
	for k := range offers {
		offers[k].order.Code = orders[k].Code // drawn again on a clash
	}
	if err := tx.InsertSeatsOfOrders(ctx, orders); err != nil {
		return nil, fmt.Errorf("waiting-list offers: %w", err)
	}
	if err := tx.OfferWaitEntries(ctx, entries); err != nil {
		return nil, err
	}
	ps := make([]placement, len(offers))
	for k := range offers {
		ps[k] = placement{ctx: ctx, o: &offers[k].order, now: offers[k].order.CreatedAt, firstHop: offers[k].firstHop}
	}
	wake, events, err := e.queueTimeouts(ctx, tx, ps, events)
	if err != nil {
		return nil, err
	}
	if err := tx.AddEvents(ctx, events); err != nil {
		return nil, err
	}
	if !e.cfg.Webhooks {
		return wake, nil
	}
	hooks := make([]WebhookEvent, len(offers))
	for k, of := range offers {
		o := of.order
		hooks[k] = WebhookEvent{ID: NewWebhookEventID(), Kind: WebhookOffered, At: o.CreatedAt, Data: map[string]any{
			"entry": of.entry.Token, "show_id": o.ShowID, "user_id": o.UserID, "order_no": o.OrderNo, "code": o.Code,
			"seat_ids": o.SeatIDs, "amount_cents": o.AmountCents, "expires_at": o.ExpireAt.Format(time.RFC3339Nano)}}
	}
	return wake, tx.AddWebhookEvents(ctx, hooks)
}

// Webhook event kinds of the waiting list (core/webhook.go).
const (
	WebhookOffered = "waitlist.offered" // an entry's offer: its order to pay
	WebhookExpired = "waitlist.expired" // an offer that ended unpaid
)

// expiredOfferHooks writes, with the cancels of ended that won, a
// waitlist.expired webhook event for each that was an offer.
func (e *Engine) expiredOfferHooks(ctx context.Context, tx Tx, ended []Order) error {
	if !e.cfg.Webhooks {
		return nil
	}
	var nos []string
	for _, o := range ended {
		if o.Source == OrderSourceWaitlist {
			nos = append(nos, o.OrderNo)
		}
	}
	if len(nos) == 0 {
		return nil
	}
	entries, err := tx.EntriesOfOffers(ctx, nos)
	if err != nil {
		return err
	}
	var hooks []WebhookEvent
	for _, o := range ended {
		if o.Source != OrderSourceWaitlist {
			continue
		}
		hooks = append(hooks, WebhookEvent{ID: NewWebhookEventID(), Kind: WebhookExpired, At: o.ClosedAt, Data: map[string]any{
			"entry": entries[o.OrderNo], "show_id": o.ShowID, "user_id": o.UserID, "order_no": o.OrderNo,
			"reason": o.CancelReason}})
	}
	return tx.AddWebhookEvents(ctx, hooks)
}

// insertOffers inserts the offers' orders in one statement, their codes
// drawn again should one clash with an order's (a failed statement
// changes nothing).
func insertOffers(ctx context.Context, tx Tx, orders []Order) error {
	for i := 1; ; i++ {
		err := tx.InsertOrders(ctx, orders)
		if !errors.Is(err, ErrCodeTaken) || i == codeAttempts {
			return err
		}
		for k := range orders {
			orders[k].Code = NewOrderCode()
		}
	}
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
	ps := make([]placement, 0, len(h.offers))
	for _, of := range h.offers {
		o := of.order
		if err := e.transferSeats(ctx, from.OrderNo, o); err != nil {
			e.metrics.SeatStoreFailure.WithLabelValues("transfer").Inc()
			e.log.ErrorContext(ctx, "waiting-list offer committed but the seat store still names the old holder; reconcile (waitlist_offer) moves them",
				"order_no", o.OrderNo, "from_order", from.OrderNo, "err", err)
		} else {
			e.notify.SeatsChanged(o.ShowID, o.SeatIDs, SeatLocked, o.OrderNo)
		}
		e.metrics.WaitlistOffers.WithLabelValues(string(WaitOffered)).Inc()
		e.metrics.WaitlistHandoff.Observe(e.clock.Now().Sub(freedAt).Seconds())
		ps = append(ps, placement{ctx: ctx, o: &of.order, now: o.CreatedAt, firstHop: of.firstHop})
	}
	e.firstHops(ctx, ps)
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

// countOfferExpired counts what became of an offer's order when it ended unpaid.
func (e *Engine) countOfferExpired(o Order) {
	if o.Source == OrderSourceWaitlist {
		e.metrics.WaitlistOffers.WithLabelValues(string(WaitExpired)).Inc()
	}
}
