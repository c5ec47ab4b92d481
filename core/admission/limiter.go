package admission

import (
	"slices"
	"sync"
	"time"
)

// The limiter bounds the API work one instance has in flight, so that a
// rush is answered at once (admitted, or refused with 503) instead of
// queueing for seconds behind work the engine cannot finish in time.
//
// The controller is AIMD on the latency of the work it admitted, judged
// against an objective (default 250 ms at p99):
//
//   - Every finished piece of work reports its latency. The last
//     limiterWindow latencies form the window whose p99 is Stats().P99.
//   - Decrease: a finished piece slower than the objective, while more than
//     1 % of the window is (the window p99 is over the objective), cuts the
//     limit by limiterBackoff, never below Min. Only once per cohort: work
//     admitted before the last cut was let in under the larger limit, so its
//     slowness is old news and does not cut again (as TCP halves once per
//     round trip, not once per lost packet).
//   - Increase: a piece within the objective, admitted while the limit was
//     at least half used (the limit, not the demand, was what bounded
//     concurrency) and with the window p99 within the objective, adds
//     1/limit, so about one per limit's worth of work, never above Max.
//
// It starts at Initial (default Max): Max is already chosen as safe (the
// server derives one from the database pool for work that holds a
// connection, and one from the group commit's round for placements, which
// wait holding none: server/overload.go), so the limit only needs to come
// down when latency says so. Time is never read: the caller measures,
// so tests inject latencies.

const (
	// limiterWindow is how many recent latencies the p99 is taken over:
	// at 1,000 requests a second a fifth of a second, so it follows a rush.
	limiterWindow = 200
	// limiterBackoff is the cut per cohort: from 28 to the minimum 4 in
	// nine cohorts of about the objective each, a couple of seconds.
	limiterBackoff = 0.8
	// DefaultObjective is the latency objective of admitted work, p99.
	DefaultObjective = 250 * time.Millisecond
	// DefaultMinLimit keeps the engine's four placement writers
	// (core/placebatch.go) fed however slow the store gets.
	DefaultMinLimit = 4
)

// LimiterConfig bounds and aims the limit; zero fields take the defaults.
type LimiterConfig struct {
	Objective time.Duration // p99 latency to stay within; DefaultObjective
	Min, Max  int           // bounds of the limit; Min DefaultMinLimit, Max required (raised to Min)
	Initial   int           // the limit at start; Max
}

// LimiterStats is the limiter at one moment.
type LimiterStats struct {
	InFlight int           // work admitted and not yet done
	Limit    int           // work that may be in flight at once now
	Min, Max int           // the bounds of Limit
	Shed     uint64        // work refused since start
	P99      time.Duration // p99 latency of the recent admitted work (0 before any)
	// Objective is the latency the limit aims to keep P99 within.
	Objective time.Duration
}

// Limiter is an adaptive concurrency limit; safe for concurrent use.
type Limiter struct {
	cfg LimiterConfig

	mu       sync.Mutex
	inFlight int
	limit    float64 // fractional, so increases of 1/limit add up
	admitted uint64  // pieces admitted so far: the next one's sequence number
	cutAt    uint64  // pieces admitted before this were admitted before the last cut
	shed     uint64
	window   [limiterWindow]time.Duration
	filled   int // entries of window in use
	next     int // where the next latency goes
	slow     int // entries of window over the objective
}

// NewLimiter returns a limiter at cfg.Initial.
func NewLimiter(cfg LimiterConfig) *Limiter {
	if cfg.Objective <= 0 {
		cfg.Objective = DefaultObjective
	}
	if cfg.Min <= 0 {
		cfg.Min = DefaultMinLimit
	}
	cfg.Max = max(cfg.Max, cfg.Min)
	if cfg.Initial <= 0 {
		cfg.Initial = cfg.Max
	}
	cfg.Initial = min(max(cfg.Initial, cfg.Min), cfg.Max)
	return &Limiter{cfg: cfg, limit: float64(cfg.Initial)}
}

// Acquire admits one piece of work, or refuses it at once (ok false): it
// never waits. done must be called exactly once, with the work's latency.
func (l *Limiter) Acquire() (done func(latency time.Duration), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight >= int(l.limit) {
		l.shed++
		return nil, false
	}
	return l.admit(), true
}

// Force admits work that must not be refused (a payment callback settles
// money already taken): it counts in InFlight and its latency steers the
// limit like any other, but it passes even at the limit.
func (l *Limiter) Force() (done func(latency time.Duration)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.admit()
}

func (l *Limiter) admit() func(time.Duration) {
	l.inFlight++
	seq := l.admitted
	l.admitted++
	// The limit was what bounded concurrency, so it may be too low.
	busy := float64(l.inFlight*2) >= l.limit
	return func(latency time.Duration) { l.finish(seq, busy, latency) }
}

func (l *Limiter) finish(seq uint64, busy bool, latency time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	if l.filled == limiterWindow && l.window[l.next] > l.cfg.Objective {
		l.slow--
	}
	l.window[l.next] = latency
	l.next = (l.next + 1) % limiterWindow
	l.filled = min(l.filled+1, limiterWindow)
	slow := latency > l.cfg.Objective
	if slow {
		l.slow++
	}
	overObjective := l.slow*100 > l.filled // the window p99 is over the objective
	switch {
	case slow && overObjective && seq >= l.cutAt:
		l.limit = max(float64(l.cfg.Min), l.limit*limiterBackoff)
		l.cutAt = l.admitted
	case !slow && !overObjective && busy:
		l.limit = min(float64(l.cfg.Max), l.limit+1/l.limit)
	}
}

// Stats reads the limiter.
func (l *Limiter) Stats() LimiterStats {
	l.mu.Lock()
	recent := slices.Clone(l.window[:l.filled])
	s := LimiterStats{InFlight: l.inFlight, Limit: int(l.limit), Min: l.cfg.Min, Max: l.cfg.Max,
		Shed: l.shed, Objective: l.cfg.Objective}
	l.mu.Unlock()
	if len(recent) > 0 {
		slices.Sort(recent)
		s.P99 = recent[(len(recent)*99+99)/100-1]
	}
	return s
}
