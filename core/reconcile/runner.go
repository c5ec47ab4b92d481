// Package reconcile repairs what lost messages and crashes leave behind:
// nine checks (one file each) that compare the DB (the truth) with the seat
// store and the clock, run on a schedule and on demand, one instance at a
// time across a cluster (lease.go), every run recorded in reconcile_run.
//
// A run is: take the lease → record the run → run the checks in order →
// record the outcome → free the lease. The order matters: expired orders
// are cancelled first (their seats then count as free), orphan rows are
// deleted before locks are judged, and counters are judged last, once the
// seats they count have been put right.
package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/store"
)

// Triggers: what started a run.
const (
	TriggerSchedule = "schedule" // the full run of the scheduler
	TriggerSweep    = "sweep"    // the scheduler's fast run: expired_pending, unsent_timeout
	TriggerManual   = "manual"   // "run now" in the console or the API
	TriggerCLI      = "cli"      // seatflow reconcile --once
)

// Run statuses.
const (
	StatusRunning   = "running"
	StatusOK        = "ok"        // every check ran without an error
	StatusErrors    = "errors"    // some check or repair failed
	StatusAborted   = "aborted"   // the run was stopped (shutdown, lease lost)
	StatusAbandoned = "abandoned" // the instance running it died
)

// ErrBusy means another run holds the lease; try again later.
var ErrBusy = &core.Error{Kind: core.KindConflict, Code: "reconcile_busy", Message: "a reconcile run is already in progress"}

// ErrRunNotFound means no stored run has the id asked for (it never
// existed, or it was pruned).
var ErrRunNotFound = &core.Error{Kind: core.KindNotFound, Code: "reconcile_run_not_found", Message: "reconcile run not found"}

// Deps are what a Reconciler works on. Queues, Clock, Logger and Metrics
// may be nil; retention deletes a show's waiting room (Queues) with its
// seat keys.
type Deps struct {
	Engine  *core.Engine
	DB      *store.DB
	Seats   SeatStore
	Queues  QueueStore
	Clock   core.Clock
	Logger  *slog.Logger
	Metrics prometheus.Registerer
}

// Options tune a Reconciler; zero fields take the defaults.
type Options struct {
	Every      time.Duration // full runs of the scheduler; default 5m
	SweepEvery time.Duration // expired_pending sweeps; default 30s
	// Grace protects work in flight (see Env.Grace); default 2m. It must
	// exceed the longest a placement's transaction can take plus the clock
	// skew between instances (lock times are the placing instance's clock).
	Grace time.Duration
	Owner string // names this instance in the lease and the runs; default host-pid
	// LeaseTTL is how long the lease lasts without renewal: the longest a
	// dead holder blocks reconcile. Default 30s.
	LeaseTTL time.Duration
	// ShowRetention: a show that started longer ago than this is over and
	// its seats are not compared any more. Default 24h.
	ShowRetention time.Duration
	// RunRetention: runs older than this are deleted after each full run.
	// Default 7 days.
	RunRetention time.Duration
	PageSize     int // rows per query page; default 500
	SampleSize   int // items kept per check and run; default 100
}

func (o Options) withDefaults() (Options, error) {
	for name, d := range map[string]time.Duration{"Every": o.Every, "SweepEvery": o.SweepEvery, "Grace": o.Grace,
		"LeaseTTL": o.LeaseTTL, "ShowRetention": o.ShowRetention, "RunRetention": o.RunRetention} {
		if d < 0 {
			return o, fmt.Errorf("reconcile: option %s is %v: it may not be negative", name, d)
		}
	}
	if o.PageSize < 0 || o.SampleSize < 0 {
		return o, fmt.Errorf("reconcile: PageSize %d and SampleSize %d may not be negative", o.PageSize, o.SampleSize)
	}
	o.Every = orDefault(o.Every, 5*time.Minute)
	o.SweepEvery = orDefault(o.SweepEvery, 30*time.Second)
	o.Grace = orDefault(o.Grace, 2*time.Minute)
	o.LeaseTTL = orDefault(o.LeaseTTL, 30*time.Second)
	o.ShowRetention = orDefault(o.ShowRetention, 24*time.Hour)
	o.RunRetention = orDefault(o.RunRetention, 7*24*time.Hour)
	o.PageSize = orDefault(o.PageSize, 500)
	o.SampleSize = orDefault(o.SampleSize, 100)
	if o.Owner == "" {
		host, _ := os.Hostname()
		o.Owner = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	return o, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Reconciler runs the checks.
type Reconciler struct {
	deps    Deps
	opts    Options
	log     *slog.Logger
	metrics *metrics
	full    []Check // a full run, in order
	sweep   []Check // the fast sweep
}

// New returns a Reconciler; Start schedules it, RunOnce runs it now.
func New(d Deps, o Options) (*Reconciler, error) {
	if d.Engine == nil || d.DB == nil || d.Seats == nil {
		return nil, errors.New("reconcile: engine, DB and seat store are required")
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if d.Clock == nil {
		d.Clock = core.SystemClock{}
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(d.Metrics)
	if err != nil {
		return nil, err
	}
	r := &Reconciler{deps: d, opts: o, log: log.With("component", "reconcile"), metrics: m,
		full:  []Check{ExpiredPending{}, UnsentTimeout{}, PaidNotSold{}, OrphanOrderSeat{}, RefundedSold{}, WaitlistOffer{}, StaleRedisLock{}, BlockDrift{}, LimitDrift{}, OpenDiscrepancy{}},
		sweep: []Check{ExpiredPending{}, UnsentTimeout{}},
	}
	m.zero(r.full) // the sweep's checks are among the full run's
	return r, nil
}

// CheckResult is one check's outcome in a stored run.
type CheckResult struct {
	Name       string `json:"name"`
	Found      int    `json:"found"`
	Fixed      int    `json:"fixed"`
	Errors     int    `json:"errors"`
	Error      string `json:"error,omitempty"` // why the check could not finish
	DurationMS int64  `json:"duration_ms"`
	Items      []Item `json:"items,omitempty"`
}

// Run is one reconcile run as stored in reconcile_run.
type Run struct {
	ID         int64         `json:"id"`
	Trigger    string        `json:"trigger"`
	Owner      string        `json:"owner"`
	StartedAt  time.Time     `json:"started_at"`
	FinishedAt time.Time     `json:"finished_at,omitzero"`
	DryRun     bool          `json:"dry_run"`
	Status     string        `json:"status"`
	Error      string        `json:"error,omitempty"`
	Checks     []CheckResult `json:"checks"`
}

// OK reports whether the run finished with no error: `seatflow reconcile
// --once` exits non-zero otherwise.
func (r Run) OK() bool { return r.Status == StatusOK }

// Check returns the named check's result, if the run has it.
func (r Run) Check(name string) (CheckResult, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return CheckResult{}, false
}

// RunOnce runs reconcile now, if no other run holds the lease (ErrBusy
// otherwise). Trigger "sweep" runs expired_pending and unsent_timeout; the others run
// every check. With dryRun the checks find and report but change nothing.
// The returned error is about the run as a whole (busy, lease, the run
// record); failures of checks are in the Run and its Status.
func (r *Reconciler) RunOnce(ctx context.Context, trigger string, dryRun bool) (Run, error) {
	return r.run(ctx, trigger, dryRun, nil)
}

// Apply is RunOnce repairing only the items only returns true for — say
// the ones ops picked from a dry run (match them by check and Item.Key).
// Each check still looks at everything, but repairs and reports just those;
// the other anomalies are left for later runs. The run is stored like any
// other, not dry.
func (r *Reconciler) Apply(ctx context.Context, trigger string, only func(check string, it Item) bool) (Run, error) {
	if only == nil {
		return Run{}, core.Invalidf("reconcile: Apply needs the items to apply")
	}
	return r.run(ctx, trigger, false, only)
}

// run is RunOnce limited to the items only returns true for (nil: all).
func (r *Reconciler) run(ctx context.Context, trigger string, dryRun bool, only func(string, Item) bool) (Run, error) {
	checks := r.full
	switch trigger {
	case TriggerSweep:
		checks = r.sweep
	case TriggerSchedule, TriggerManual, TriggerCLI:
	default:
		return Run{}, core.Invalidf("unknown reconcile trigger %q (want schedule, sweep, manual or cli)", trigger)
	}
	lease, runCtx, ok, err := acquireLease(ctx, r.deps.DB, r.opts.Owner, r.opts.LeaseTTL, r.log)
	if err != nil {
		return Run{}, fmt.Errorf("reconcile: %w", err)
	}
	if !ok {
		r.metrics.busy.Inc()
		return Run{}, r.busy(ctx)
	}
	defer func() {
		if err := lease.release(ctx); err != nil {
			r.log.Error("releasing the reconcile lease; it lapses by itself", "err", err)
		}
	}()
	now := r.deps.Clock.Now()
	if n, err := r.deps.DB.AbandonReconcileRuns(runCtx, now); err != nil {
		return Run{}, fmt.Errorf("reconcile: %w", err)
	} else if n > 0 {
		r.log.Warn("marked runs of a stopped instance abandoned", "runs", n)
	}
	run := Run{Trigger: trigger, Owner: r.opts.Owner, StartedAt: now, DryRun: dryRun, Status: StatusRunning, Checks: []CheckResult{}}
	if run.ID, err = r.deps.DB.InsertReconcileRun(runCtx, r.record(run)); err != nil {
		return Run{}, fmt.Errorf("reconcile: %w", err)
	}
	log := r.log.With("run_id", run.ID, "trigger", trigger, "dry_run", dryRun)
	r.runChecks(runCtx, log, &run, checks, only)
	run.FinishedAt = r.deps.Clock.Now()
	// The outcome is recorded even when ctx ended (shutdown): that is when it matters.
	if err := r.deps.DB.FinishReconcileRun(context.WithoutCancel(ctx), r.record(run)); err != nil {
		return run, fmt.Errorf("reconcile: %w", err)
	}
	r.metrics.runs.WithLabelValues(trigger, run.Status).Inc()
	log.Info("reconcile run finished", "status", run.Status, "took", run.FinishedAt.Sub(run.StartedAt))
	if trigger != TriggerSweep && run.Status != StatusAborted {
		if _, err := r.deps.DB.PruneReconcileRuns(runCtx, now.Add(-r.opts.RunRetention)); err != nil {
			log.Error("pruning old reconcile runs", "err", err)
		}
	}
	return run, nil
}

// busy is ErrBusy naming the holder when it can be read.
func (r *Reconciler) busy(ctx context.Context) error {
	owner, until, err := r.deps.DB.LeaseHolder(ctx, leaseName)
	if err != nil || owner == "" {
		return ErrBusy
	}
	return &core.Error{Kind: ErrBusy.Kind, Code: ErrBusy.Code,
		Message: fmt.Sprintf("%s (held by %s until %s)", ErrBusy.Message, owner, until.Format(time.RFC3339))}
}

// runChecks runs checks in order into run, on the items only returns true
// for (nil: all). A check that fails is recorded and the next one runs; a
// run whose context ends stops.
func (r *Reconciler) runChecks(ctx context.Context, log *slog.Logger, run *Run, checks []Check, only func(string, Item) bool) {
	env := &Env{Engine: r.deps.Engine, DB: r.deps.DB, Seats: r.deps.Seats, Log: log, Now: run.StartedAt,
		Grace: r.opts.Grace, OnSaleSince: run.StartedAt.Add(-r.opts.ShowRetention),
		PageSize: r.opts.PageSize, SampleSize: r.opts.SampleSize, Trigger: run.Trigger, only: only}
	run.Status = StatusOK
	for _, c := range checks {
		if ctx.Err() != nil {
			run.Status = StatusAborted
			run.Error = fmt.Sprintf("stopped before %s: %v", c.Name(), context.Cause(ctx))
			return
		}
		start := time.Now()
		res, err := c.Run(ctx, env, run.DryRun)
		took := time.Since(start)
		cr := CheckResult{Name: c.Name(), Found: res.Found, Fixed: res.Fixed, Errors: res.Errors,
			DurationMS: took.Milliseconds(), Items: res.Items}
		if err != nil {
			cr.Errors++
			cr.Error = err.Error()
			log.Error("reconcile check failed", "check", c.Name(), "err", err)
		}
		r.metrics.observe(c.Name(), res, took)
		run.Checks = append(run.Checks, cr)
		if cr.Errors > 0 {
			run.Status = StatusErrors
		}
		log.Info("reconcile check done", "check", c.Name(), "found", cr.Found, "fixed", cr.Fixed,
			"errors", cr.Errors, "took", took)
	}
	if ctx.Err() != nil {
		run.Status = StatusAborted
		run.Error = fmt.Sprintf("stopped: %v", context.Cause(ctx))
	}
}

// record is run as a reconcile_run row.
func (r *Reconciler) record(run Run) store.ReconcileRun {
	checks, err := json.Marshal(run.Checks)
	if err != nil { // plain structs of strings and numbers: cannot happen
		checks = []byte("[]")
		r.log.Error("encoding reconcile run checks", "err", err)
	}
	return store.ReconcileRun{ID: run.ID, Trigger: run.Trigger, Owner: run.Owner, StartedAt: run.StartedAt,
		FinishedAt: run.FinishedAt, DryRun: run.DryRun, Status: run.Status, Checks: string(checks), Error: run.Error}
}

// Runs returns the newest runs first, at most limit (1..500, default 20).
func (r *Reconciler) Runs(ctx context.Context, limit int) ([]Run, error) {
	switch {
	case limit < 0:
		return nil, core.Invalidf("limit %d may not be negative", limit)
	case limit == 0:
		limit = 20
	}
	rows, err := r.deps.DB.ReconcileRuns(ctx, min(limit, 500))
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	out := make([]Run, len(rows))
	for i, row := range rows {
		if out[i], err = decodeRun(row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// LastFullRun returns the newest stored run that was not a sweep, and
// false if there is none.
func (r *Reconciler) LastFullRun(ctx context.Context) (Run, bool, error) {
	row, ok, err := r.deps.DB.LastReconcileRunExcept(ctx, TriggerSweep)
	if err != nil {
		return Run{}, false, fmt.Errorf("reconcile: %w", err)
	}
	if !ok {
		return Run{}, false, nil
	}
	run, err := decodeRun(row)
	if err != nil {
		return Run{}, false, err
	}
	return run, true, nil
}

// RunByID returns the stored run with this id, or ErrRunNotFound.
func (r *Reconciler) RunByID(ctx context.Context, id int64) (Run, error) {
	row, err := r.deps.DB.ReconcileRunByID(ctx, id)
	if errors.Is(err, store.ErrRunNotFound) {
		return Run{}, &core.Error{Kind: ErrRunNotFound.Kind, Code: ErrRunNotFound.Code,
			Message: fmt.Sprintf("%s: %d", ErrRunNotFound.Message, id)}
	}
	if err != nil {
		return Run{}, fmt.Errorf("reconcile: %w", err)
	}
	return decodeRun(row)
}

// decodeRun is the run a reconcile_run row records.
func decodeRun(row store.ReconcileRun) (Run, error) {
	run := Run{ID: row.ID, Trigger: row.Trigger, Owner: row.Owner, StartedAt: row.StartedAt,
		FinishedAt: row.FinishedAt, DryRun: row.DryRun, Status: row.Status, Error: row.Error}
	if err := json.Unmarshal([]byte(row.Checks), &run.Checks); err != nil {
		return Run{}, fmt.Errorf("reconcile: run %d: decode checks: %w", row.ID, err)
	}
	return run, nil
}
