package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"
)

// Config holds the engine's business rules.
type Config struct {
	HoldTTL          time.Duration // how long seats stay held awaiting payment
	PurchaseLimit    int           // seats one user may hold or own per show; 0 = no limit
	MaxSeatsPerOrder int
	MaxHold          time.Duration // longest a hold may last in all, extensions included; 0 = DefaultMaxHold
	Delay            DelayPolicy
	// MaxHoldsPerClient caps one end-user address's pending orders on one show (abuse.go); 0 = no cap.
	MaxHoldsPerClient int
	Webhooks          bool // SEATFLOW_WEBHOOK_URL is set: the engine writes webhook events
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
	sender    *groupCommit[outgoing]   // timeout messages (timeoutsend.go)
	waitlists waitlistCache            // the shows a hand-off looks at (handoff.go)
	holds     holdsSeen                // addresses' hold counts carried between reads (holdscache.go)
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
	e.sender = newGroupCommit(senders, sendMaxBatch, e.sendMerged)
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
	// ClientIP is the end-user address the API placed it from, as
	// ClientNet counts it (an IPv6 one by its network): capped by
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
	o, now := e.newOrder(r, plan)
	if err := e.checkClientHolds(ctx, r); err != nil {
		return Order{}, err
	}
	lock, limit := e.seats.Lock, e.cfg.PurchaseLimit
	if r.BoxOffice {
		lock, limit = e.seats.LockBlocked, 0
	}
	return e.record(ctx, o, planVersion, now, lock(ctx, o.ShowID, o.UserID, o.OrderNo, o.SeatIDs, limit, now))
}

// record follows the seat store's claim of o's seats (err its
// outcome): the order's transaction, then its timeout message.
func (e *Engine) record(ctx context.Context, o Order, planVersion int64, now time.Time, err error) (Order, error) {
	if err != nil {
		e.countRejected(err)
		if lockMayHaveRun(err) {
			// No answer from the script (a timeout, a reset after the
			// command went out): it may have locked the seats and charged
			// the counter for an order that will never exist.
			e.compensate(ctx, o, "place: releasing seats after an ambiguous lock reply", err)
		}
		return Order{}, err
	}
	err = e.placer.do(ctx, placement{ctx: ctx, o: &o, planVersion: planVersion, now: now, firstHop: e.cfg.Delay.Plan(e.cfg.HoldTTL)})
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
	// The order and its first timeout message (placebatch.go) are out:
	// from here on nothing may fail the request.
	e.notify.SeatsChanged(o.ShowID, o.SeatIDs, SeatLocked, o.OrderNo)
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

// addEvent writes a timeline entry outside any transaction, group-committed
// with those of other orders; losing one is logged, never fatal, because
// the state it describes is already committed.
func (e *Engine) addEvent(ctx context.Context, ev Event) {
	if err := e.events.do(ctx, ev); err != nil {
		e.log.ErrorContext(ctx, "recording order event", "order_no", ev.OrderNo, "kind", ev.Kind, "err", err)
	}
}
