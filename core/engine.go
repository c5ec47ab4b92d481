package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Config holds the engine's business rules.
type Config struct {
	HoldTTL          time.Duration // how long seats stay held awaiting payment
	PurchaseLimit    int           // seats one user may hold or own per show; 0 = no limit
	MaxSeatsPerOrder int
	MaxHold          time.Duration // longest a hold may last in all, extensions included; 0 = DefaultMaxHold
	Delay            DelayPolicy
	// MaxHoldsPerClient caps the pending orders one end-user address may
	// have on one show (abuse.go); 0 = no cap.
	MaxHoldsPerClient int
}

// Deps are the engine's adapters. Clock, Logger, Metrics and Notifier may be nil.
type Deps struct {
	Store    Store
	Seats    SeatStore
	Queue    DelayQueue
	Clock    Clock
	Logger   *slog.Logger
	Metrics  *Metrics
	Notifier Notifier
}

// Engine runs the order state machine over its stores.
type Engine struct {
	cfg       Config
	store     Store
	seats     SeatStore
	queue     DelayQueue
	outbox    TxQueue // queue, when it writes messages in the store's transactions
	clock     Clock
	log       *slog.Logger
	metrics   *Metrics
	notify    Notifier
	plans     seatPlans
	placer    *groupCommit[placement]  // Place's transactions (placebatch.go)
	events    *groupCommit[Event]      // after-commit timeline rows (addEvent)
	canceller *groupCommit[*cancelJob] // CancelAndRelease's transactions (cancelbatch.go)
	payer     *groupCommit[*payJob]    // HandlePayment's transactions (paybatch.go)
}

// NewEngine checks cfg and fills defaults for the optional deps.
func NewEngine(cfg Config, d Deps) (*Engine, error) {
	if d.Store == nil || d.Seats == nil || d.Queue == nil {
		return nil, errors.New("engine: store, seats and queue are required")
	}
	if cfg.HoldTTL <= 0 {
		return nil, fmt.Errorf("engine: hold TTL %v must be positive", cfg.HoldTTL)
	}
	if cfg.MaxSeatsPerOrder <= 0 {
		cfg.MaxSeatsPerOrder = 6
	}
	if err := cfg.Delay.Validate(); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e := &Engine{cfg: cfg, store: d.Store, seats: d.Seats, queue: d.Queue,
		clock: d.Clock, log: d.Logger, metrics: d.Metrics, notify: d.Notifier}
	if e.clock == nil {
		e.clock = SystemClock{}
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.metrics == nil {
		e.metrics = NewMetrics(nil)
	}
	e.outbox, _ = d.Queue.(TxQueue)
	e.metrics.zeroHops(cfg.Delay)
	if e.notify == nil {
		e.notify = nopNotifier{}
	}
	e.placer = e.newPlaceWriter()
	e.events = newGroupCommit(eventWriters, eventMaxBatch, e.writeEvents)
	e.canceller = newEndWriter(e, WriterCancel, cancelTogether)
	e.payer = newEndWriter(e, WriterPay, payTogether)
	return e, nil
}

// Config returns the rules the engine runs with.
func (e *Engine) Config() Config { return e.cfg }

// Store returns the engine's system of record, for read-only views.
func (e *Engine) Store() Store { return e.store }

type nopNotifier struct{}

func (nopNotifier) SeatsChanged(int64, []string, SeatState, string) {}

// PlaceRequest asks to hold seats for a user.
type PlaceRequest struct {
	UserID   int64
	ShowID   int64
	SeatIDs  []string
	Customer Customer // optional; checked and normalized by Place
	// BoxOffice is a counter sale (counter.go): it may take blocked seats,
	// which the public API may not, and no purchase limit applies, as the
	// counter sells for many people under BoxOfficeUserID.
	BoxOffice bool
	// ClientIP is the end-user address the API placed it from: capped by
	// Config.MaxHoldsPerClient, and stored with the order.
	ClientIP string
}

var seatIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,15}$`)

func (e *Engine) validatePlace(r PlaceRequest) error {
	switch {
	case r.BoxOffice && r.UserID != BoxOfficeUserID:
		return Invalidf("a box-office sale is placed for user %d", BoxOfficeUserID)
	case !r.BoxOffice && r.UserID <= 0:
		return Invalidf("user_id must be a positive integer")
	case r.ShowID <= 0:
		return Invalidf("show_id must be a positive integer")
	case len(r.SeatIDs) == 0:
		return Invalidf("seat_ids must name at least one seat")
	case len(r.SeatIDs) > e.cfg.MaxSeatsPerOrder:
		return Invalidf("seat_ids may name at most %d seats", e.cfg.MaxSeatsPerOrder)
	}
	seen := make(map[string]bool, len(r.SeatIDs))
	for _, id := range r.SeatIDs {
		if !seatIDPattern.MatchString(id) {
			return Invalidf("seat id %q is not a valid seat id", id)
		}
		if seen[id] {
			return Invalidf("seat id %q is listed twice", id)
		}
		seen[id] = true
	}
	return nil
}

// Place holds the seats in the seat store, then records the order in one DB
// transaction, then (only after commit) schedules its timeout. A failed
// transaction, or a Lock whose reply was lost, gives the seats back; a
// failed send does not fail the order: the reconcile sweep ends it when it
// expires.
func (e *Engine) Place(ctx context.Context, r PlaceRequest) (Order, error) {
	if err := e.validatePlace(r); err != nil {
		return Order{}, err
	}
	customer, err := r.Customer.Normalize()
	if err != nil {
		return Order{}, err
	}
	r.Customer = customer
	o, err := e.place(ctx, r)
	if errors.Is(err, ErrPlanChanged) {
		// Priced from a plan replaced since it was cached: once more with
		// the new one.
		e.plans.forget(r.ShowID)
		o, err = e.place(ctx, r)
	}
	return o, err
}

// place is Place with r.Customer already normalized.
func (e *Engine) place(ctx context.Context, r PlaceRequest) (Order, error) {
	showPlan, planVersion, err := e.plans.plan(ctx, e.store, r.ShowID)
	if err != nil {
		return Order{}, err
	}
	var unknown []string
	plan := make([]Seat, 0, len(r.SeatIDs))
	for _, id := range r.SeatIDs {
		if s, ok := showPlan[id]; ok {
			plan = append(plan, s)
		} else {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		return Order{}, Invalidf("unknown seats for show %d: %v", r.ShowID, unknown)
	}
	now := e.clock.Now()
	o := Order{
		OrderNo:    newOrderNo(now),
		Code:       NewOrderCode(),
		Customer:   r.Customer,
		ShowID:     r.ShowID,
		UserID:     r.UserID,
		Status:     StatusPending,
		SeatIDs:    slices.Sorted(slices.Values(r.SeatIDs)),
		CreatedAt:  now,
		ExpireAt:   now.Add(e.cfg.HoldTTL),
		TimeoutHop: 1,
		ClientIP:   r.ClientIP,
	}
	for _, s := range plan {
		o.AmountCents += s.PriceCents
	}
	firstHop := e.cfg.Delay.Plan(e.cfg.HoldTTL)
	o.TimeoutDueAt = now.Add(firstHop.Delay)

	if err := e.checkClientHolds(ctx, r); err != nil {
		return Order{}, err
	}
	lock, limit := e.seats.Lock, e.cfg.PurchaseLimit
	if r.BoxOffice {
		lock, limit = e.seats.LockBlocked, 0
	}
	if err := lock(ctx, o.ShowID, o.UserID, o.OrderNo, o.SeatIDs, limit, now); err != nil {
		e.countRejected(err)
		if lockMayHaveRun(err) {
			// No answer from the script (a timeout, a reset after the
			// command went out): it may have locked the seats and charged
			// the counter for an order that will never exist.
			e.compensate(ctx, o, "place: releasing seats after an ambiguous lock reply", err)
		}
		return Order{}, err
	}
	err = e.placer.do(ctx, placement{ctx: ctx, o: &o, planVersion: planVersion, now: now, firstHop: firstHop})
	if err != nil {
		// Compensation: the order does not exist, so its Redis locks must go.
		e.compensate(ctx, o, "place: releasing seats after a failed transaction", err)
		e.countRejected(err)
		if errors.Is(err, ErrSeatUnavailable) || errors.Is(err, ErrPlanChanged) ||
			errors.Is(err, ErrShowCancelled) || errors.Is(err, ErrSalesEnded) {
			return Order{}, err
		}
		return Order{}, fmt.Errorf("place: record order: %w", err)
	}
	e.metrics.OrdersPlaced.Inc()
	e.notify.SeatsChanged(o.ShowID, o.SeatIDs, SeatLocked, o.OrderNo)
	// The order is committed: from here on nothing may fail the request.
	if e.outbox != nil {
		// Its timeout message committed with it (TxQueue).
		e.metrics.RearmHops.WithLabelValues(fmt.Sprint(firstHop.Level)).Inc()
	} else {
		e.sendTimeout(context.WithoutCancel(ctx), o.OrderNo, 1, firstHop, now)
	}
	return o, nil
}

// lockMayHaveRun reports whether a failed Lock may still have locked the
// seats: every failure but the script's own refusals and a request it
// rejected before sending leaves that open.
func lockMayHaveRun(err error) bool {
	return !errors.Is(err, ErrSeatUnavailable) && !errors.Is(err, ErrPurchaseLimit) && ErrorKind(err) != KindInvalid
}

// compensate gives back whatever the seat store holds for o, an order that
// was never recorded. The release is holder-guarded, and o's number is new,
// so it touches no other order's seats and is harmless when nothing was
// locked. It runs whatever became of the request: a client that hung up
// must not leave seats locked. What it cannot free, stale_redis_lock frees
// after the grace period.
func (e *Engine) compensate(ctx context.Context, o Order, what string, cause error) {
	ctx = context.WithoutCancel(ctx)
	if _, err := e.releaseSeats(ctx, o.ShowID, o.UserID, o.OrderNo, o.SeatIDs); err != nil {
		e.metrics.SeatStoreFailure.WithLabelValues("compensate").Inc()
		e.log.ErrorContext(ctx, what, "order_no", o.OrderNo, "cause", cause, "err", err)
	}
}

// replyLost reports whether a seat store call failed without an answer
// (the store was out of reach or timed out): it may or may not have run.
func replyLost(err error) bool { return ErrorKind(err) == KindUnavailable }

// releaseSeats is the holder-guarded Release, sent once more when its reply
// is lost: a second release frees only what the first did not, so the retry
// is safe whether or not the first one ran.
func (e *Engine) releaseSeats(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) (int, error) {
	n, err := e.seats.Release(ctx, showID, userID, orderNo, seatIDs)
	if err != nil && replyLost(err) {
		e.log.WarnContext(ctx, "seat release: no reply, sending it again", "order_no", orderNo, "err", err)
		var m int
		m, err = e.seats.Release(ctx, showID, userID, orderNo, seatIDs)
		n += m
	}
	return n, err
}

// markSold is MarkSold, sent once more when its reply is lost: selling the
// seats to the same order again changes nothing (sell.lua).
func (e *Engine) markSold(ctx context.Context, o Order) error {
	err := e.seats.MarkSold(ctx, o.ShowID, o.UserID, o.OrderNo, o.SeatIDs)
	if err != nil && replyLost(err) {
		e.log.WarnContext(ctx, "marking seats sold: no reply, sending it again", "order_no", o.OrderNo, "err", err)
		err = e.seats.MarkSold(ctx, o.ShowID, o.UserID, o.OrderNo, o.SeatIDs)
	}
	return err
}

func (e *Engine) countRejected(err error) {
	switch {
	case errors.Is(err, ErrSeatUnavailable):
		e.metrics.PlaceRejected.WithLabelValues("seat_unavailable").Inc()
	case errors.Is(err, ErrPurchaseLimit):
		e.metrics.PlaceRejected.WithLabelValues("purchase_limit").Inc()
	}
}

// newOrderNo is time-ordered (readable, index-friendly) and unguessable.
func newOrderNo(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "SF" + now.UTC().Format("20060102150405") + hex.EncodeToString(b[:])
}

// sendTimeout sends hop's message and records the outcome on the timeline.
// It reports whether the message went out.
func (e *Engine) sendTimeout(ctx context.Context, orderNo string, hop int, plan DelayPlan, now time.Time) bool {
	msg := timeoutMsg(ctx, orderNo, hop, plan, now)
	if err := e.queue.Send(ctx, msg, plan.Level, plan.Delay); err != nil {
		e.metrics.TimeoutSendFail.Inc()
		e.log.ErrorContext(ctx, "timeout message not sent; the expiry sweep will end the order",
			"order_no", orderNo, "hop", hop, "err", err)
		e.addEvent(ctx, Event{OrderNo: orderNo, At: now, Kind: EventTimeoutSendFailed,
			Detail: map[string]any{"hop": hop, "level": plan.Level, "error": err.Error()}})
		return false
	}
	e.metrics.RearmHops.WithLabelValues(fmt.Sprint(plan.Level)).Inc()
	e.addEvent(ctx, scheduledEvent(msg, plan))
	return true
}

// timeoutMsg is hop's timeout message of orderNo, sent at now.
func timeoutMsg(ctx context.Context, orderNo string, hop int, plan DelayPlan, now time.Time) TimeoutMsg {
	return TimeoutMsg{OrderNo: orderNo, Hop: hop, DueAt: now.Add(plan.Delay), SentAt: now, TraceID: TraceID(ctx)}
}

// scheduledEvent is the timeline entry of a timeout message that went out.
func scheduledEvent(msg TimeoutMsg, plan DelayPlan) Event {
	return Event{OrderNo: msg.OrderNo, At: msg.SentAt, Kind: EventTimeoutScheduled, Detail: map[string]any{
		"hop": msg.Hop, "level": plan.Level, "delay_ms": plan.Delay.Milliseconds(),
		"due_at": msg.DueAt.Format(time.RFC3339Nano),
	}}
}

// addEvent writes a timeline entry outside any transaction, group-committed
// with those of other orders; losing one is logged, never fatal, because
// the state it describes is already committed.
func (e *Engine) addEvent(ctx context.Context, ev Event) {
	if err := e.events.do(ctx, ev); err != nil {
		e.log.ErrorContext(ctx, "recording order event", "order_no", ev.OrderNo, "kind", ev.Kind, "err", err)
	}
}

// Timeout outcomes, as recorded on timeout_fired events and metrics.
const (
	OutcomeIgnored   = "ignored"
	OutcomeRearmed   = "rearmed"
	OutcomeCancelled = "cancelled"
	OutcomeResent    = "resent"   // sent a hop whose claimer never confirmed its send
	OutcomeDeferred  = "deferred" // arrived early: the next hop waits until this one was due
)

// HandleTimeout decides what one delivered timeout message does. It is
// idempotent by the order's state alone (no dedupe table): a missing or
// ended order ignores it; an order not yet expired re-arms with the time
// left; an expired one is cancelled. An error asks for redelivery.
func (e *Engine) HandleTimeout(ctx context.Context, msg TimeoutMsg) error {
	_, err := e.handleTimeout(ctx, msg)
	return err
}

// TimeoutHandler is HandleTimeout for the consumer of the named queue
// (DeadLetterDBQueue, DeadLetterRocketMQ): it also times every message
// into seatflow_timeout_handle_seconds by outcome, whose series for this
// queue it creates at 0.
func (e *Engine) TimeoutHandler(queue string) TimeoutHandler {
	for _, o := range timeoutOutcomes {
		e.metrics.TimeoutHandle.WithLabelValues(o, queue)
	}
	e.metrics.TimeoutHandle.WithLabelValues(OutcomeFailed, queue)
	return func(ctx context.Context, msg TimeoutMsg) error {
		start := time.Now() // the wall clock, not e.clock: this is a duration, not a due time
		outcome, err := e.handleTimeout(ctx, msg)
		if err != nil {
			outcome = OutcomeFailed
		}
		e.metrics.TimeoutHandle.WithLabelValues(outcome, queue).Observe(time.Since(start).Seconds())
		return err
	}
}

// handleTimeout is HandleTimeout, also returning the outcome it recorded
// (undefined with an error).
func (e *Engine) handleTimeout(ctx context.Context, msg TimeoutMsg) (outcome string, err error) {
	if msg.TraceID != "" && TraceID(ctx) == "" {
		ctx = WithTraceID(ctx, msg.TraceID)
	}
	o, err := e.store.Order(ctx, msg.OrderNo)
	if errors.Is(err, ErrOrderNotFound) {
		e.metrics.TimeoutFired.WithLabelValues(OutcomeIgnored).Inc()
		e.log.InfoContext(ctx, "timeout for unknown order ignored", "order_no", msg.OrderNo)
		return OutcomeIgnored, nil
	}
	if err != nil {
		return "", fmt.Errorf("timeout %s: load order: %w", msg.OrderNo, err)
	}
	now := e.clock.Now()
	fired := func(out string, extra map[string]any) {
		outcome = out
		e.metrics.TimeoutFired.WithLabelValues(out).Inc()
		d := map[string]any{"hop": msg.Hop, "outcome": out}
		for k, v := range extra {
			d[k] = v
		}
		e.addEvent(ctx, Event{OrderNo: o.OrderNo, At: now, Kind: EventTimeoutFired, Detail: d})
	}
	if o.Status != StatusPending {
		// Due, but someone else ended the order after it expired: the
		// timeout lost a race (an order ended before its expiry was not one).
		if o.CancelReason != ReasonTimeout && !o.ClosedAt.Before(o.ExpireAt) {
			e.recordLostAttempt(ctx, o, ActorSystem, ReasonTimeout, now)
		}
		fired(OutcomeIgnored, map[string]any{"status": o.Status.String()})
		return outcome, nil
	}
	if now.Before(o.ExpireAt) {
		err = e.rearm(ctx, o, msg, now, fired)
		return outcome, err
	}
	res, err := e.CancelAndRelease(ctx, CancelRequest{OrderNo: o.OrderNo, Reason: ReasonTimeout, Actor: ActorSystem})
	if err != nil {
		return "", fmt.Errorf("timeout %s: %w", o.OrderNo, err)
	}
	if !res.Won {
		if res.Order.Status == StatusPending {
			// Extended since the read above: the chain goes on to the new expiry.
			err = e.rearm(ctx, res.Order, msg, now, fired)
			return outcome, err
		}
		fired(OutcomeIgnored, map[string]any{"status": res.Order.Status.String()})
		return outcome, nil
	}
	fired(OutcomeCancelled, map[string]any{"late_ms": now.Sub(o.ExpireAt).Milliseconds()})
	return outcome, nil
}

// rearm sends the next hop of the chain. Only the delivery of the latest hop
// may re-arm (ClaimTimeoutHop), so a duplicated message cannot fork the
// chain. The claim records the send as unconfirmed: if this process dies
// before the send, the redelivery of msg or the sweep sends the hop.
func (e *Engine) rearm(ctx context.Context, o Order, msg TimeoutMsg, now time.Time, fired func(string, map[string]any)) error {
	if early, ok := e.cfg.Delay.deliveredEarly(msg, now); ok {
		return e.deferEarly(ctx, o, msg, now, early, fired)
	}
	remaining := o.ExpireAt.Sub(now)
	plan := e.cfg.Delay.Plan(remaining)
	next := msg.Hop + 1
	won, err := e.store.ClaimTimeoutHop(ctx, o.OrderNo, msg.Hop, next,
		HopSend{DueAt: now.Add(plan.Delay), State: HopSending, ResendAt: now.Add(TimeoutSendLease)})
	if err != nil {
		return fmt.Errorf("timeout %s: claim hop %d: %w", o.OrderNo, next, err)
	}
	if !won {
		return e.redelivered(ctx, o.OrderNo, msg, now, fired)
	}
	if err := e.sendHop(ctx, o.OrderNo, next, plan, now); err != nil {
		return err
	}
	fired(OutcomeRearmed, map[string]any{"remaining_ms": remaining.Milliseconds(), "next_level": plan.Level})
	return nil
}

// redelivered handles a message the chain has moved past: a duplicate, or
// the redelivery of a message whose handler claimed the next hop and died
// before sending it. Only the latter sends anything.
func (e *Engine) redelivered(ctx context.Context, orderNo string, msg TimeoutMsg, now time.Time, fired func(string, map[string]any)) error {
	o, err := e.store.Order(ctx, orderNo)
	if err != nil {
		return fmt.Errorf("timeout %s: reload order: %w", orderNo, err)
	}
	stale := map[string]any{"reason": "stale hop", "current_hop": o.TimeoutHop}
	switch {
	case o.Status != StatusPending || o.TimeoutHop != msg.Hop+1 || o.TimeoutSend == HopSent:
		fired(OutcomeIgnored, stale)
		return nil
	case o.TimeoutSend == HopDeferred && now.Before(o.TimeoutResendAt):
		fired(OutcomeIgnored, stale) // the sweep sends the deferred hop when it is due
		return nil
	case now.Before(o.TimeoutResendAt):
		// Its claimer may still be sending: come back, and send the hop
		// then if the claimer never confirmed it.
		return fmt.Errorf("timeout %s: hop %d claimed at %s, its send not yet confirmed", orderNo, o.TimeoutHop,
			o.TimeoutResendAt.Add(-TimeoutSendLease).Format(time.RFC3339Nano))
	}
	sent, err := e.resendHop(ctx, o, now)
	if err != nil {
		return err
	}
	if !sent {
		fired(OutcomeIgnored, stale)
		return nil
	}
	fired(OutcomeResent, map[string]any{"resent_hop": o.TimeoutHop})
	return nil
}

// deferEarly claims the next hop for a message that arrived well before it
// was due, and sends nothing now: a broker that ignores the delay (or a
// level table that differs from the broker's) would otherwise bounce the
// chain in a tight loop until expiry. The hop waits until the message was
// due, and the sweep sends it then (ResendTimeout): one hop per order per
// sweep at most, whatever the broker does.
func (e *Engine) deferEarly(ctx context.Context, o Order, msg TimeoutMsg, now time.Time, early time.Duration, fired func(string, map[string]any)) error {
	e.metrics.TimeoutEarly.Inc()
	e.log.ErrorContext(ctx, "timeout message delivered before its due time: the broker ignores the delay, "+
		"or its messageDelayLevel differs from SEATFLOW_DELAY_LEVELS; the next hop waits until it was due",
		"order_no", o.OrderNo, "hop", msg.Hop, "early", early, "due_at", msg.DueAt)
	next := msg.Hop + 1
	won, err := e.store.ClaimTimeoutHop(ctx, o.OrderNo, msg.Hop, next,
		HopSend{DueAt: msg.DueAt, State: HopDeferred, ResendAt: msg.DueAt})
	if err != nil {
		return fmt.Errorf("timeout %s: claim hop %d: %w", o.OrderNo, next, err)
	}
	if !won {
		fired(OutcomeIgnored, map[string]any{"reason": "stale hop", "current_hop": o.TimeoutHop, "early_ms": early.Milliseconds()})
		return nil
	}
	fired(OutcomeDeferred, map[string]any{"early_ms": early.Milliseconds(), "resend_at": msg.DueAt.Format(time.RFC3339Nano)})
	return nil
}

// ResendTimeout sends the latest hop of a pending order whose send was
// claimed and never confirmed (a crash between claim and send, a failed
// send) or deferred (an early delivery), once its resend time has come. It
// reports whether it sent the hop; the reconcile sweep calls it.
func (e *Engine) ResendTimeout(ctx context.Context, orderNo string) (bool, error) {
	o, err := e.store.Order(ctx, orderNo)
	if err != nil {
		return false, fmt.Errorf("resend timeout %s: %w", orderNo, err)
	}
	now := e.clock.Now()
	if o.Status != StatusPending || o.TimeoutSend == HopSent || now.Before(o.TimeoutResendAt) {
		return false, nil
	}
	return e.resendHop(ctx, o, now)
}

// resendHop takes over o's unconfirmed send of its latest hop and sends it
// with the time now left; false when another resender took it first.
func (e *Engine) resendHop(ctx context.Context, o Order, now time.Time) (bool, error) {
	plan := e.cfg.Delay.Plan(o.ExpireAt.Sub(now))
	won, err := e.store.ClaimTimeoutResend(ctx, o.OrderNo, o.TimeoutHop, now,
		HopSend{DueAt: now.Add(plan.Delay), State: HopSending, ResendAt: now.Add(TimeoutSendLease)})
	if err != nil {
		return false, fmt.Errorf("timeout %s: claim resend of hop %d: %w", o.OrderNo, o.TimeoutHop, err)
	}
	if !won {
		return false, nil
	}
	return true, e.sendHop(ctx, o.OrderNo, o.TimeoutHop, plan, now)
}

// sendHop sends a claimed hop and confirms it. A failed send gives the
// claim up, so the redelivery this error asks for sends it at once.
func (e *Engine) sendHop(ctx context.Context, orderNo string, hop int, plan DelayPlan, now time.Time) error {
	if !e.sendTimeout(ctx, orderNo, hop, plan, now) {
		if err := e.store.ReleaseTimeoutSend(ctx, orderNo, hop, now); err != nil {
			e.log.ErrorContext(ctx, "timeout: giving up the send of a hop", "order_no", orderNo, "hop", hop, "err", err)
		}
		return fmt.Errorf("timeout %s: hop %d not sent", orderNo, hop)
	}
	if err := e.store.MarkTimeoutSent(ctx, orderNo, hop); err != nil {
		// The message is out; unconfirmed, it may go out once more after
		// the lease, and only one of the two can claim the hop after it.
		e.log.WarnContext(ctx, "timeout: confirming a sent hop", "order_no", orderNo, "hop", hop, "err", err)
	}
	return nil
}

// CancelRequest asks to end a pending order unpaid.
type CancelRequest struct {
	OrderNo string
	Reason  string // timeout | customer | staff | reconcile
	Actor   string // system | user:<id> | staff:<name>
	Note    string // free text from staff
	// Audit, for a staff force-cancel, writes its audit row with what came
	// of it (cancelled, or what a loser found) in the cancel's transaction.
	Audit *StaffAction
}

// CancelResult reports whether this call won the conditional update, and the
// order as it stands afterwards (paid or cancelled when the call lost).
type CancelResult struct {
	Won   bool
	Order Order
}

// CancelAndRelease is the one cancel path for timeout, customer, staff and
// reconcile. The transaction (cancelJob.write in cancelbatch.go; a batch of
// cancels that come together: cancelTogether) owns the conditional update
// and the order_seat delete; Redis is released strictly after commit,
// because Redis cannot roll back: a seat freed for an order that then
// stayed alive could be sold twice.
func (e *Engine) CancelAndRelease(ctx context.Context, r CancelRequest) (CancelResult, error) {
	now := e.clock.Now()
	path := ExpiryPath(r.Reason, r.Actor)
	j := &cancelJob{ctx: ctx, r: r, now: now, expiry: path != ""}
	err := e.canceller.do(ctx, j)
	if err != nil {
		return CancelResult{}, fmt.Errorf("cancel %s: %w", r.OrderNo, err)
	}
	won, order, released := j.won, j.order, j.released
	if !won {
		e.recordLostAttempt(ctx, order, r.Actor, r.Reason, now)
		return CancelResult{Order: order}, nil
	}
	e.metrics.OrdersEnded.WithLabelValues(StatusCancelled.String(), r.Reason).Inc()
	if path != "" {
		e.metrics.CancelLateness.WithLabelValues(path).Observe(now.Sub(order.ExpireAt).Seconds())
	}
	// Committed. A failed release leaves a stale lock that reconcile frees.
	ctx = context.WithoutCancel(ctx)
	n, rerr := e.releaseSeats(ctx, order.ShowID, order.UserID, order.OrderNo, released)
	if rerr != nil {
		e.metrics.SeatStoreFailure.WithLabelValues("release").Inc()
		e.log.ErrorContext(ctx, "cancel committed but seat release failed; reconcile will free them",
			"order_no", order.OrderNo, "err", rerr)
		e.addEvent(ctx, Event{OrderNo: order.OrderNo, At: e.clock.Now(), Kind: EventSeatReleaseFailed,
			Detail: map[string]any{"seat_ids": released, "error": rerr.Error()}})
	} else {
		e.addEvent(ctx, Event{OrderNo: order.OrderNo, At: e.clock.Now(), Kind: EventSeatsReleased,
			Detail: map[string]any{"seat_ids": released, "released": n}})
		e.notify.SeatsChanged(order.ShowID, released, SeatAvailable, "")
	}
	return CancelResult{Won: true, Order: order}, nil
}

// customerOrder reads an order a customer acts on: another user's order,
// and a counter sale, are "not found", so a caller can neither act on nor
// probe orders that are not its user's.
func (e *Engine) customerOrder(ctx context.Context, orderNo string, userID int64) (Order, error) {
	o, err := e.store.Order(ctx, orderNo)
	if err != nil {
		return Order{}, err
	}
	if o.UserID != userID || userID == BoxOfficeUserID {
		return Order{}, ErrOrderNotFound
	}
	return o, nil
}

// Cancel is the customer's cancel: only the owner may cancel, a repeat is a
// success, and a paid order cannot be cancelled here.
func (e *Engine) Cancel(ctx context.Context, orderNo string, userID int64) (Order, error) {
	o, err := e.customerOrder(ctx, orderNo, userID)
	if err != nil {
		return Order{}, err
	}
	actor := fmt.Sprintf("%s%d", ActorCustomerPrefix, userID)
	if o.Status == StatusPending {
		res, err := e.CancelAndRelease(ctx, CancelRequest{OrderNo: orderNo, Reason: ReasonCustomer, Actor: actor})
		if err != nil {
			return Order{}, err
		}
		o = res.Order
	} else {
		e.recordLostAttempt(ctx, o, actor, ReasonCustomer, e.clock.Now())
	}
	if o.Status == StatusPaid || o.Status == StatusRefunded {
		return o, ErrOrderNotPending
	}
	return o, nil
}

// Payment results recorded on the payment row besides PaymentResult values.
const paymentAmountMismatch = "amount_mismatch"

// actor is who the paid transition records: the clerk for a counter payment.
func (p Payment) actor() string {
	if p.Actor != "" {
		return p.Actor
	}
	return "payment"
}

// detail is the paid event's detail; a counter payment adds how and by whom.
func (p Payment) detail() map[string]any {
	d := map[string]any{"txn_id": p.TxnID, "amount_cents": p.AmountCents}
	if p.Method == PaymentMethodCounter {
		d["method"], d["tender"], d["actor"] = p.Method, string(p.Tender), p.Actor
		if p.Reference != "" {
			d["reference"] = p.Reference
		}
	}
	return d
}

// recordTxnConflict opens a case for a callback whose txn id is already
// recorded for another order or amount, with both in its note, and puts it
// on the order's timeline when the order exists.
func recordTxnConflict(ctx context.Context, tx Tx, p, prev Payment, now time.Time, orderExists bool) error {
	if err := tx.InsertDiscrepancy(ctx, Discrepancy{OrderNo: p.OrderNo, TxnID: p.TxnID, Kind: DiscrepancyTxnConflict,
		AmountCents: p.AmountCents, CreatedAt: now, Status: "open",
		Note: fmt.Sprintf("txn id already recorded for order %s, %d cents", prev.OrderNo, prev.AmountCents)}); err != nil {
		return err
	}
	if !orderExists {
		return nil
	}
	return tx.AddEvent(ctx, Event{OrderNo: p.OrderNo, At: now, Kind: EventDiscrepancy, Detail: map[string]any{
		"txn_id": p.TxnID, "kind": DiscrepancyTxnConflict, "amount_cents": p.AmountCents,
		"other_order_no": prev.OrderNo, "other_amount_cents": prev.AmountCents}})
}

// paymentRefPattern is what a callback's order reference may look like
// (our order numbers and codes). Money for an unknown order is recorded
// under it, so it must be something a person can read back and search for;
// the provider's txn id is its own business and is stored as sent.
var paymentRefPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/+=-]*$`)

// HandlePayment applies a verified payment callback. One transaction records
// the payment (UNIQUE txn_id makes a repeat a no-op "duplicate") and runs the
// same conditional update as every cancel; a payment that loses to a cancel
// becomes a recorded discrepancy and never revives the order. The
// transaction is payJob.write in paybatch.go; callbacks that arrive together
// share one (payTogether, endbatch.go), each still deciding its own order's
// fate.
func (e *Engine) HandlePayment(ctx context.Context, p Payment) (PaymentResult, error) {
	switch {
	case len(p.OrderNo) > 40 || !paymentRefPattern.MatchString(p.OrderNo):
		return "", Invalidf("order_no is required: at most 40 letters, digits or . _ : / + = -")
	case p.TxnID == "" || len(p.TxnID) > 64 || !utf8.ValidString(p.TxnID) || strings.ContainsFunc(p.TxnID, unicode.IsControl):
		return "", Invalidf("txn_id is required: at most 64 bytes of text without control characters")
	case p.AmountCents <= 0:
		return "", Invalidf("amount_cents must be a positive integer")
	}
	now := e.clock.Now()
	if p.ReceivedAt.IsZero() {
		p.ReceivedAt = now
	}
	if p.PaidAt.IsZero() {
		p.PaidAt = now
	}
	j := &payJob{ctx: ctx, p: p, now: now}
	err := e.payer.do(ctx, j)
	if err != nil {
		return "", fmt.Errorf("payment %s for %s: %w", p.TxnID, p.OrderNo, err)
	}
	result, order, discKind := j.out.result, j.out.order, j.out.discKind
	ctx = context.WithoutCancel(ctx)
	if j.out.duplicate {
		e.metrics.Payments.WithLabelValues(string(PaymentDuplicate)).Inc()
		e.addEvent(ctx, Event{OrderNo: p.OrderNo, At: now, Kind: EventPaymentDuplicate, Detail: map[string]any{"txn_id": p.TxnID}})
		return PaymentDuplicate, nil
	}
	if discKind != "" {
		e.metrics.Discrepancies.WithLabelValues(discKind).Inc()
		e.log.WarnContext(ctx, "payment recorded as a discrepancy", "order_no", p.OrderNo, "txn_id", p.TxnID, "kind", discKind)
	}
	if j.out.conflict {
		e.metrics.Payments.WithLabelValues(DiscrepancyTxnConflict).Inc()
		return "", ErrTxnConflict
	}
	if j.out.mismatch {
		e.metrics.Payments.WithLabelValues(paymentAmountMismatch).Inc()
		return PaymentDiscrepancy, ErrAmountMismatch
	}
	e.metrics.Payments.WithLabelValues(string(result)).Inc()
	if result != PaymentApplied {
		return result, nil
	}
	e.metrics.OrdersEnded.WithLabelValues(StatusPaid.String(), "payment").Inc()
	if err := e.markSold(ctx, order); err != nil {
		e.metrics.SeatStoreFailure.WithLabelValues("sell").Inc()
		e.log.ErrorContext(ctx, "payment committed but marking seats sold failed; reconcile will fix them",
			"order_no", order.OrderNo, "err", err)
		e.addEvent(ctx, Event{OrderNo: order.OrderNo, At: e.clock.Now(), Kind: EventSeatSellFailed,
			Detail: map[string]any{"seat_ids": order.SeatIDs, "error": err.Error()}})
	} else {
		e.addEvent(ctx, Event{OrderNo: order.OrderNo, At: e.clock.Now(), Kind: EventSeatsSold,
			Detail: map[string]any{"seat_ids": order.SeatIDs}})
		e.notify.SeatsChanged(order.ShowID, order.SeatIDs, SeatSold, order.OrderNo)
	}
	return PaymentApplied, nil
}
