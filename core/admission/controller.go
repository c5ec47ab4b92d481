package admission

import (
	"sync"
	"time"
)

// The admission rate controller decides how many waiting buyers to admit
// per second from what the engine is measured to sustain, not from a
// number an operator guesses.
//
// Input (Signal), read on every tick: the placement p99 of the last two
// seconds (LatencyWindow), the timeout backlog and its bound, whether the
// instance is shedding work, and how many buyers wait. Output: the rate
// (buyers a second) and, per tick, how many to admit.
//
// It is AIMD, as TCP congestion control, for the same reason: the capacity
// is unknown and moves (other shows, the database, the number of
// instances), and AIMD finds it and shares it without a model of it.
//
//   - Healthy (p99 within the objective, backlog within its bound, no
//     shedding): the rate grows by Increase buyers a second, every second.
//     It grows only while the queue has the buyers to use it, so a quiet
//     spell does not bank a rate nobody measured.
//   - Unhealthy: the rate is multiplied by Decrease at once, and then at
//     most once per Cooldown. The p99 is of a two-second window, so after a
//     cut the signal stays bad for up to two seconds while the window still
//     holds the slow placements: cutting on every tick of that would answer
//     one slow spell many times over and drive the rate to the floor.
//   - Shedding outranks the backlog, which outranks the p99, in the
//     Reason: each is a later, stronger sign of the same overload.
//   - The rate never falls below MinRate (the queue must keep moving: a
//     stalled queue looks broken to the buyers in it) nor rises above
//     MaxRate (admitted buyers cannot be taken back, so a burst past what
//     any engine sustains must not be possible).
//   - A rate of 2.5 a second on ticks of 100 ms admits 1 or 0 per tick:
//     the fraction is carried to the next tick, never rounded away.
//
// The defaults: the objective is the (placement p99 at most 250
// ms). Decrease 0.5 halves as TCP does: admissions are irreversible, so
// the cut must be deep enough to end an overload in one step. Increase
// 20/s a second from 20/s reaches the few hundred holds a second one
// instance was measured to place in a rush (397 on the real stack, issue
// 29) in about 20 seconds, and after a cut from a rate r regains it in
// r/40 seconds. The Cooldown is the span of the LatencyWindow. MinRate
// 1/s keeps the queue moving; MaxRate 1000/s sits below the best goodput
// measured (1,488 holds a second, embedded), so a long healthy spell
// cannot build a rate that two cuts do not bring back to what a stack
// sustains.

// Controller defaults (ControllerConfig zero values).
const (
	DefaultPlaceObjective = 250 * time.Millisecond
	DefaultMinRate        = 1.0
	DefaultMaxRate        = 1000.0
	DefaultInitialRate    = 20.0
	DefaultIncrease       = 20.0
	DefaultDecrease       = 0.5
	DefaultCooldown       = DefaultLatencySpan
)

// The reasons a controller gives for its last tick.
const (
	ReasonWithinObjective = "placements within objective"
	ReasonP99             = "p99 above objective"
	ReasonBacklog         = "timeout backlog"
	ReasonShedding        = "shedding"
	ReasonIdle            = "no one waiting"
)

// Signal is what the controller reads on a tick.
type Signal struct {
	// PlaceP99 is the placement p99 of the recent past (LatencyWindow).
	PlaceP99 time.Duration
	// Backlog is the timeout backlog; above BacklogBound it counts as
	// overload. BacklogBound 0 or less: no bound.
	Backlog, BacklogBound int64
	// Shedding: the instance refuses work (limiter.go) right now.
	Shedding bool
	// Waiting is the buyers in line not yet admitted.
	Waiting int64
}

// ControllerConfig tunes a Controller; zero fields take the Default*.
type ControllerConfig struct {
	Objective                     time.Duration // the placement p99 to stay within
	MinRate, MaxRate, InitialRate float64       // buyers a second
	Increase                      float64       // buyers a second gained per healthy second
	Decrease                      float64       // the factor of a cut, between 0 and 1
	Cooldown                      time.Duration // the least time between two cuts
}

// ControllerState is the controller's input and output at its last tick,
// for the console and the metrics.
type ControllerState struct {
	Rate      float64 // buyers a second
	Objective time.Duration
	Signal    Signal
	Reason    string
	Admitted  int64 // by the last tick
}

// Controller is the admission rate controller. Safe for concurrent use.
type Controller struct {
	cfg ControllerConfig

	mu            sync.Mutex
	rate, carry   float64
	sinceDecrease time.Duration
	last          ControllerState
}

// NewController makes a controller; cfg's zero fields take the defaults,
// and MaxRate is raised to MinRate if below it.
func NewController(cfg ControllerConfig) *Controller {
	if cfg.Objective <= 0 {
		cfg.Objective = DefaultPlaceObjective
	}
	if cfg.MinRate <= 0 {
		cfg.MinRate = DefaultMinRate
	}
	if cfg.MaxRate <= 0 {
		cfg.MaxRate = DefaultMaxRate
	}
	cfg.MaxRate = max(cfg.MaxRate, cfg.MinRate)
	if cfg.InitialRate <= 0 {
		cfg.InitialRate = DefaultInitialRate
	}
	if cfg.Increase <= 0 {
		cfg.Increase = DefaultIncrease
	}
	if cfg.Decrease <= 0 || cfg.Decrease >= 1 {
		cfg.Decrease = DefaultDecrease
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = DefaultCooldown
	}
	rate := min(max(cfg.InitialRate, cfg.MinRate), cfg.MaxRate)
	return &Controller{
		cfg:           cfg,
		rate:          rate,
		sinceDecrease: cfg.Cooldown, // the first overload is answered at once
		last:          ControllerState{Rate: rate, Objective: cfg.Objective, Reason: ReasonIdle},
	}
}

// Tick reads the signal of the dt that passed and returns how many buyers
// to admit now. A cut applies to this tick's admissions already; growth
// applies from the next tick, once this one has shown the demand for it.
func (c *Controller) Tick(sig Signal, dt time.Duration) (admit int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dt = max(dt, 0)
	c.sinceDecrease += dt
	reason := ReasonWithinObjective
	switch {
	case sig.Shedding:
		reason = ReasonShedding
	case sig.BacklogBound > 0 && sig.Backlog > sig.BacklogBound:
		reason = ReasonBacklog
	case sig.PlaceP99 > c.cfg.Objective:
		reason = ReasonP99
	}
	healthy := reason == ReasonWithinObjective
	if !healthy && c.sinceDecrease >= c.cfg.Cooldown {
		c.rate = max(c.rate*c.cfg.Decrease, c.cfg.MinRate)
		c.sinceDecrease = 0
	}
	if sig.Waiting <= 0 {
		c.carry = 0
		if healthy {
			reason = ReasonIdle
		}
	} else {
		owed := c.carry + c.rate*dt.Seconds()
		admit = int64(owed)
		if admit >= sig.Waiting {
			// The line, not the rate, bounded this tick: nothing to carry
			// and no evidence that a higher rate is sustained.
			admit, c.carry = sig.Waiting, 0
		} else {
			c.carry = owed - float64(admit)
			if healthy {
				c.rate = min(c.rate+c.cfg.Increase*dt.Seconds(), c.cfg.MaxRate)
			}
		}
	}
	c.last = ControllerState{Rate: c.rate, Objective: c.cfg.Objective, Signal: sig, Reason: reason, Admitted: admit}
	return admit
}

// Snapshot returns the state at the last tick.
func (c *Controller) Snapshot() ControllerState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}
