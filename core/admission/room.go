package admission

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core/fault"
)

// The answers to an order on a show whose queue requires an admission.
var (
	ErrAdmissionRequired = &fault.Error{Kind: fault.KindForbidden, Code: "admission_required",
		Message: "this show sells through its waiting room: join it and send the admission you are given"}
	ErrAdmissionInvalid = &fault.Error{Kind: fault.KindForbidden, Code: "admission_invalid",
		Message: "the admission is forged, expired, for another show or buyer, or already used"}
	// ErrAdmissionBusy: another placement with the same admission is in
	// flight; retry once it is answered.
	ErrAdmissionBusy = &fault.Error{Kind: fault.KindConflict, Code: "admission_in_use",
		Message: "another order with this admission is being placed; retry when it is answered"}
	// ErrQueueNotFound: the show has no enabled queue (joins and polls).
	ErrQueueNotFound = &fault.Error{Kind: fault.KindNotFound, Code: "queue_not_found",
		Message: "the show has no enabled waiting room"}
	// ErrTicketNotFound: a ticket this fleet did not sign. Forged and
	// unknown alike, so tickets cannot be probed.
	ErrTicketNotFound = &fault.Error{Kind: fault.KindNotFound, Code: "ticket_not_found",
		Message: "no such queue ticket"}
)

// State is where a buyer stands in a show's queue.
type State string

const (
	StateWaiting  State = "waiting"
	StateAdmitted State = "admitted"
	// StateExpired: admitted, but the admission window has ended unused.
	StateExpired State = "expired"
)

// View is what a joining or polling buyer is told.
type View struct {
	Show     int64
	Ticket   string
	State    State
	Position int64 // 1-based; 0 while the pre-queue is not drawn
	// PollAfter is when to ask again: sooner near the head.
	PollAfter time.Duration
	// Admission (signed, token.go) and AdmittedUntil are set when admitted.
	Admission     string
	AdmittedUntil time.Time
	OpensAt       time.Time // zero: no pre-queue
}

// Poll pacing: near the head a buyer asks every minPollAfter, further back
// about ten times a wait, never less often than maxPollAfter.
const (
	minPollAfter = 500 * time.Millisecond
	maxPollAfter = 5 * time.Second
)

// RoomConfig are the Room's settings (SEATFLOW_QUEUE_*).
type RoomConfig struct {
	Tick       time.Duration // how often Run steps every show
	Controller ControllerConfig
}

// Signals are the engine's live measures the Room reads each step. Each
// may be nil (never overloaded, no backlog). They are closures so the Room
// stays free of HTTP: the server hands in its limiter's state.
type Signals struct {
	// Overloaded says whether the API sheds work right now: mode overload
	// engages the queue only then, and it slows the controller.
	Overloaded func() bool
	// Backlog is the timeout backlog and the bound it should stay under.
	Backlog func() (n, bound int64)
}

// Room is one instance's side of every show's waiting room: joins, polls,
// admission checks and the admission loop. The queue itself lives in the
// Store, shared by every instance.
type Room struct {
	store   Store
	keys    *Keys
	cfg     RoomConfig
	sig     Signals
	latency *LatencyWindow
	logger  *slog.Logger
	m       roomMetrics

	mu    sync.Mutex
	shows map[int64]*roomShow // the enabled shows as the last step saw them
}

// roomShow is one show's admission loop state on this instance.
type roomShow struct {
	ctrl *Controller
	last time.Time // the previous step, for the controller's dt
	snap Snapshot
}

// Snapshot is one show's queue as this instance's last step saw it: what
// the console shows.
type Snapshot struct {
	Show       int64
	Status     Status
	Controller ControllerState // the controller's input (Signal) and output (Rate)
	At         time.Time
}

// Waiting is how many have joined and are not admitted.
func (s Snapshot) Waiting() int64 { return max(s.Status.Joined-s.Status.Admitted, 0) }

// EstimatedWait is how long the buyer at position will wait at this
// instance's admission rate: (position - admitted) / rate. -1 when the
// rate is 0 (paused or stalled: no estimate).
func (s Snapshot) EstimatedWait(position int64) time.Duration {
	ahead := position - s.Status.Admitted
	if ahead <= 0 {
		return 0
	}
	if s.Controller.Rate <= 0 {
		return -1
	}
	return time.Duration(float64(ahead) / s.Controller.Rate * float64(time.Second))
}

type roomMetrics struct {
	joins, polls, admissions prometheus.Counter
	rate, p99                prometheus.Gauge
}

func newRoomMetrics(reg prometheus.Registerer) roomMetrics {
	m := roomMetrics{
		joins: prometheus.NewCounter(prometheus.CounterOpts{Name: "seatflow_queue_joins_total",
			Help: "Waiting-room joins answered by this instance (a repeated join counts again)."}),
		polls: prometheus.NewCounter(prometheus.CounterOpts{Name: "seatflow_queue_polls_total",
			Help: "Waiting-room polls answered by this instance."}),
		admissions: prometheus.NewCounter(prometheus.CounterOpts{Name: "seatflow_queue_admissions_total",
			Help: "Buyers this instance moved past the head of a waiting room (admitted)."}),
		rate: prometheus.NewGauge(prometheus.GaugeOpts{Name: "seatflow_queue_admission_rate",
			Help: "Admissions per second this instance grants, summed over the shows whose queue is enabled (the controller's output)."}),
		p99: prometheus.NewGauge(prometheus.GaugeOpts{Name: "seatflow_queue_placement_p99_seconds",
			Help: "Placement latency p99 of this instance, the admission controller's input (objective: SEATFLOW_QUEUE_OBJECTIVE)."}),
	}
	if reg != nil {
		reg.MustRegister(m.joins, m.polls, m.admissions, m.rate, m.p99)
	}
	return m
}

// NewRoom returns the Room over store, signing with keys. reg (may be nil)
// gets its metrics, every one at 0 from the start.
func NewRoom(store Store, keys *Keys, cfg RoomConfig, sig Signals, reg prometheus.Registerer, logger *slog.Logger) *Room {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Room{store: store, keys: keys, cfg: cfg, sig: sig, latency: NewLatencyWindow(0, nil), logger: logger,
		m: newRoomMetrics(reg), shows: map[int64]*roomShow{}}
}

// Store is the Room's store, for the console and the verify command.
func (r *Room) Store() Store { return r.store }

func (r *Room) overloaded() bool { return r.sig.Overloaded != nil && r.sig.Overloaded() }

// Configure writes a show's settings and makes this instance apply them at
// once (others within a tick, see Step).
func (r *Room) Configure(ctx context.Context, show int64, s Settings) (Status, error) {
	st, err := r.store.Configure(ctx, show, s)
	if err != nil {
		return Status{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if st.Enabled {
		rs := r.showLocked(show)
		rs.snap.Status = st
	} else {
		delete(r.shows, show)
	}
	return st, nil
}

// Snapshot is the show's queue as this instance's last step saw it; false
// when the queue is not enabled (or no step has seen it yet).
func (r *Room) Snapshot(show int64) (Snapshot, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rs, ok := r.shows[show]
	if !ok {
		return Snapshot{}, false
	}
	return rs.snap, true
}

// Snapshots are every enabled show's snapshot, for the console's dashboard.
func (r *Room) Snapshots() []Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Snapshot, 0, len(r.shows))
	for _, rs := range r.shows {
		out = append(out, rs.snap)
	}
	return out
}

func (r *Room) showLocked(show int64) *roomShow {
	rs, ok := r.shows[show]
	if !ok {
		rs = &roomShow{ctrl: NewController(r.cfg.Controller), snap: Snapshot{Show: show}}
		r.shows[show] = rs
	}
	return rs
}

// Join puts the user in the show's queue (or finds the entry it has) and
// says where it stands. created is false for a repeated join.
func (r *Room) Join(ctx context.Context, show, user int64, now time.Time) (v View, created bool, err error) {
	r.m.joins.Inc()
	// The ticket names the entry's Seq, which the Store assigns: the entry
	// is stored without one and the ticket signed from it. Signing is
	// deterministic, so a repeated join gets the same ticket.
	e, created, err := r.store.Join(ctx, show, user, "", now)
	if errors.Is(err, ErrNoQueue) {
		return View{}, false, ErrQueueNotFound
	}
	if err != nil {
		return View{}, false, err
	}
	st, err := r.store.Status(ctx, show)
	if err != nil {
		return View{}, false, r.noQueue(err)
	}
	// Mode overload while the engine copes: everyone who joined is
	// admitted at once (the head moves to the end of the line).
	if st.Mode == ModeOverload && !st.Paused && !r.overloaded() && st.Admitted < e.Seq {
		head, err := r.store.Advance(ctx, show, e.Seq)
		if err != nil {
			return View{}, false, err
		}
		r.m.admissions.Add(float64(max(head-st.Admitted, 0)))
		st.Admitted = head
	}
	v, err = r.view(ctx, st, Ticket{Show: show, User: user, Seq: e.Seq}, now)
	return v, created, err
}

// Poll answers a buyer's ticket with where it stands, from the seat store
// alone (no database).
func (r *Room) Poll(ctx context.Context, ticket string, now time.Time) (View, error) {
	r.m.polls.Inc()
	t, err := r.keys.ParseTicket(ticket)
	if err != nil {
		return View{}, ErrTicketNotFound
	}
	st, err := r.store.Status(ctx, t.Show)
	if err != nil {
		return View{}, r.noQueue(err)
	}
	if !st.Enabled {
		return View{}, ErrQueueNotFound
	}
	return r.view(ctx, st, t, now)
}

func (r *Room) noQueue(err error) error {
	if errors.Is(err, ErrNoQueue) {
		return ErrQueueNotFound
	}
	return err
}

// view is the buyer's standing: its position, and once the head passed it
// the admission, valid for the window from the moment first seen admitted.
func (r *Room) view(ctx context.Context, st Status, t Ticket, now time.Time) (View, error) {
	ticket := r.keys.SignTicket(t)
	// Pre-queue entries are exactly Seq 1..PreJoined (queue.go).
	pos, err := r.store.Position(ctx, Entry{Show: t.Show, User: t.User, Seq: t.Seq, Pre: t.Seq <= st.PreJoined})
	if err != nil {
		return View{}, err
	}
	v := View{Show: t.Show, Ticket: ticket, State: StateWaiting, Position: pos, OpensAt: st.OpensAt}
	if pos == 0 || pos > st.Admitted {
		v.PollAfter = r.pollAfter(t.Show, pos)
		return v, nil
	}
	at, err := r.store.AdmittedAt(ctx, t.Show, t.User, now)
	if err != nil {
		return View{}, err
	}
	v.AdmittedUntil = at.Add(windowOf(st.Settings))
	v.PollAfter = maxPollAfter
	if !now.Before(v.AdmittedUntil) {
		v.State = StateExpired
		return v, nil
	}
	v.State = StateAdmitted
	v.Admission = r.keys.SignAdmission(Grant{Show: t.Show, User: t.User, Seq: t.Seq, Until: v.AdmittedUntil})
	return v, nil
}

func windowOf(s Settings) time.Duration {
	if s.Window > 0 {
		return s.Window
	}
	return DefaultWindow
}

// pollAfter is about a tenth of the estimated wait, within its bounds.
func (r *Room) pollAfter(show, pos int64) time.Duration {
	snap, _ := r.Snapshot(show)
	wait := snap.EstimatedWait(pos)
	if pos == 0 || wait < 0 {
		return maxPollAfter
	}
	return min(max(wait/10, minPollAfter), maxPollAfter)
}

// Required says whether an order on the show must carry an admission: its
// queue is enabled, in mode always or while the engine is overloaded. It
// reads what the last step (or a Configure here) saw, so no store call is
// made per order; another instance's change is seen within a tick.
func (r *Room) Required(show int64) bool {
	r.mu.Lock()
	rs, ok := r.shows[show]
	var st Status
	if ok {
		st = rs.snap.Status
	}
	r.mu.Unlock()
	if !ok || !st.Enabled {
		return false
	}
	return st.Mode != ModeOverload || r.overloaded()
}

// BeginPlacement verifies the admission an order carries: its signature,
// show, user and window with no store call (any instance can); then claims
// it for this placement in one O(1) seat-store step, refused when a
// placement with it succeeded already, or while another one with it is in
// flight (two sent at the same instant get one claim: ErrAdmissionBusy).
// The returned end must be called with whether the placement succeeded:
// the admission is then used, or stays valid for a 409 retry until its
// window ends. A claim whose end never came (the instance died) lapses
// after placementClaimTTL.
func (r *Room) BeginPlacement(ctx context.Context, show, user int64, token string, now time.Time) (end func(ctx context.Context, placed bool) error, err error) {
	if token == "" {
		return nil, ErrAdmissionRequired
	}
	if _, err := r.keys.VerifyAdmission(token, show, user, now); err != nil {
		return nil, ErrAdmissionInvalid
	}
	holder := rand.Text()
	claim, err := r.store.ClaimPlacement(ctx, show, user, holder, now.Add(placementClaimTTL), now)
	switch {
	case err != nil:
		return nil, err
	case claim == ClaimUsed:
		return nil, ErrAdmissionInvalid
	case claim == ClaimBusy:
		return nil, ErrAdmissionBusy
	}
	return func(ctx context.Context, placed bool) error {
		_, err := r.store.EndPlacement(ctx, show, user, holder, placed)
		return err
	}, nil
}

// placementClaimTTL outlasts any placement (SEATFLOW_REQUEST_TIMEOUT is
// seconds): a claim left by an instance that died before its end lapses
// after it, and the buyer may place again.
const placementClaimTTL = time.Minute

// Observe records one placement's latency: the controller's p99 input.
func (r *Room) Observe(latency time.Duration) { r.latency.Observe(latency) }

// Run steps every enabled show each Tick until ctx ends.
func (r *Room) Run(ctx context.Context) {
	t := time.NewTicker(r.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if err := r.Step(ctx, now); err != nil && ctx.Err() == nil {
				r.logger.WarnContext(ctx, "waiting room step", "err", err)
			}
		}
	}
}

// Step is one turn of the admission loop at now, for every enabled show:
// draw the pre-queue once opens_at has passed, let the controller turn the
// live signal into this step's admissions, and move the head by them.
//
// Each instance admits its own measured share: its controller reads this
// instance's placement p99 and overload state, and the load balancer
// spreads the admitted buyers' placements over the instances. When the
// shared stores (the database, the seat store) are the bottleneck, every
// instance's latency rises together and every controller slows down, the
// way flows sharing a link back off together; so the sum of the
// instances' rates settles at what the fleet as a whole sustains, and an
// instance that joins or leaves only shifts the shares.
func (r *Room) Step(ctx context.Context, now time.Time) error {
	shows, err := r.store.Shows(ctx)
	if err != nil {
		return err
	}
	enabled := make(map[int64]bool, len(shows))
	var errs []error
	for _, show := range shows {
		enabled[show] = true
		if err := r.stepShow(ctx, show, now); err != nil {
			errs = append(errs, fmt.Errorf("show %d: %w", show, err))
		}
	}
	r.mu.Lock()
	var rate float64
	for show, rs := range r.shows {
		if !enabled[show] {
			delete(r.shows, show)
			continue
		}
		rate += rs.snap.Controller.Rate
	}
	r.mu.Unlock()
	r.m.rate.Set(rate)
	r.m.p99.Set(r.latency.P99().Seconds())
	return errors.Join(errs...)
}

func (r *Room) stepShow(ctx context.Context, show int64, now time.Time) error {
	st, err := r.store.Status(ctx, show)
	if errors.Is(err, ErrNoQueue) {
		return nil // disabled since Shows was read
	}
	if err != nil {
		return err
	}
	if !st.OpensAt.IsZero() && !st.Shuffled && !now.Before(st.OpensAt) {
		if _, err := r.store.Shuffle(ctx, show, now); err != nil {
			return err
		}
		if st, err = r.store.Status(ctx, show); err != nil {
			return err
		}
	}
	r.mu.Lock()
	rs := r.showLocked(show)
	// The first step of a show on this instance only starts its clock.
	var dt time.Duration
	if !rs.last.IsZero() && now.After(rs.last) {
		dt = now.Sub(rs.last)
	}
	rs.last = now
	r.mu.Unlock()

	overloaded := r.overloaded()
	sig := Signal{PlaceP99: r.latency.P99(), Shedding: overloaded, Waiting: max(st.Joined-st.Admitted, 0)}
	if st.PreJoined > 0 && !st.Shuffled {
		sig.Waiting = 0 // nobody can be admitted before the draw
	}
	if r.sig.Backlog != nil {
		sig.Backlog, sig.BacklogBound = r.sig.Backlog()
	}
	// The controller runs while paused too, so its rate (and the console's
	// estimate) stays current; only the head stays put.
	n := rs.ctrl.Tick(sig, dt)
	switch {
	case st.Paused:
		n = 0
	case st.Mode == ModeOverload && !overloaded:
		n = st.Joined - st.Admitted // the queue is not engaged: everyone who joined goes in
	}
	if n > 0 {
		head, err := r.store.Advance(ctx, show, n)
		if err != nil {
			return err
		}
		if moved := head - st.Admitted; moved > 0 {
			r.m.admissions.Add(float64(moved))
		}
		st.Admitted = head
	}
	r.mu.Lock()
	rs.snap = Snapshot{Show: show, Status: st, Controller: rs.ctrl.Snapshot(), At: now}
	r.mu.Unlock()
	return nil
}
