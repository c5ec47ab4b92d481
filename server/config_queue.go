package server

import (
	"fmt"
	"time"

	"seatflow/core/admission"
)

// QueueConfig are the SEATFLOW_QUEUE_* settings of the waiting rooms
// (core/admission/room.go).
type QueueConfig struct {
	// Tick (SEATFLOW_QUEUE_TICK, default 250ms): how often each instance
	// steps every enabled queue (draw, controller, head).
	Tick time.Duration
	// Objective (SEATFLOW_QUEUE_OBJECTIVE, default 250ms): the placement
	// p99 the admission controller holds the engine to.
	Objective time.Duration
	// MinRate, MaxRate, InitialRate (SEATFLOW_QUEUE_MIN_RATE, default 1;
	// _MAX_RATE, default 1000; _INITIAL_RATE, default 20): admissions a
	// second per show and instance.
	MinRate, MaxRate, InitialRate int
	// BacklogBound (SEATFLOW_QUEUE_BACKLOG_BOUND, default 10; 0: none):
	// expiries later than the delay slack plus a second, within 10 s, past
	// which admissions slow down (queue_signals.go).
	BacklogBound int
	// Window (SEATFLOW_QUEUE_WINDOW, default 10m): how long an admitted
	// buyer may place when a queue does not set its own.
	Window time.Duration
}

// maxQueueRate bounds the rate settings: far past what one instance places.
const maxQueueRate = 1_000_000

// queue reads the SEATFLOW_QUEUE_* settings.
func (p *envParser) queue() QueueConfig {
	q := QueueConfig{
		Tick:        p.positiveDuration("SEATFLOW_QUEUE_TICK", 250*time.Millisecond),
		Objective:   p.positiveDuration("SEATFLOW_QUEUE_OBJECTIVE", admission.DefaultPlaceObjective),
		MinRate:     p.positiveInt("SEATFLOW_QUEUE_MIN_RATE", int(admission.DefaultMinRate)),
		MaxRate:     p.positiveInt("SEATFLOW_QUEUE_MAX_RATE", int(admission.DefaultMaxRate)),
		InitialRate: p.positiveInt("SEATFLOW_QUEUE_INITIAL_RATE", int(admission.DefaultInitialRate)),
		Window:      p.positiveDuration("SEATFLOW_QUEUE_WINDOW", admission.DefaultWindow),
	}
	q.BacklogBound = p.nonNegativeInt("SEATFLOW_QUEUE_BACKLOG_BOUND", 10)
	switch {
	case q.MaxRate > maxQueueRate:
		p.fail("SEATFLOW_QUEUE_MAX_RATE", p.getenv("SEATFLOW_QUEUE_MAX_RATE"), fmt.Sprintf("want at most %d", maxQueueRate))
	case q.MinRate > q.MaxRate:
		p.fail("SEATFLOW_QUEUE_MIN_RATE", p.getenv("SEATFLOW_QUEUE_MIN_RATE"), "must not be above SEATFLOW_QUEUE_MAX_RATE")
	case q.InitialRate < q.MinRate || q.InitialRate > q.MaxRate:
		p.fail("SEATFLOW_QUEUE_INITIAL_RATE", p.getenv("SEATFLOW_QUEUE_INITIAL_RATE"),
			"must be from SEATFLOW_QUEUE_MIN_RATE to SEATFLOW_QUEUE_MAX_RATE")
	case q.Window > maxQueueWindow:
		p.fail("SEATFLOW_QUEUE_WINDOW", p.getenv("SEATFLOW_QUEUE_WINDOW"), "want at most 24h")
	}
	return q
}

// maxQueueWindow bounds an admission window, here and in the API.
const maxQueueWindow = 24 * time.Hour

// queueWindow is a window of whole seconds as the API and the console take
// it; false when it is outside 1 s to maxQueueWindow.
func queueWindow(secs int64) (time.Duration, bool) {
	if secs < 1 || secs > int64(maxQueueWindow/time.Second) {
		return 0, false
	}
	return time.Duration(secs) * time.Second, true
}

// queueConfig is c.Queue, or the defaults for a Config built in code
// without one (LoadConfig always sets it).
func (c Config) queueConfig() QueueConfig {
	if c.Queue.Tick == 0 {
		p := envParser{getenv: func(string) string { return "" }}
		return p.queue()
	}
	return c.Queue
}
