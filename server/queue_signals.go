package server

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"seatflow/core"
	"seatflow/core/admission"
)

// backlogWindow is how far back the timeout backlog looks.
const backlogWindow = 10 * time.Second

// expiryBacklog is the admission controller's timeout-backlog input, read
// from the engine's own expiry-lag histogram (seatflow_expiry_lag_seconds):
// the holds of the last backlogWindow whose expiry (timeout message or
// sweep) came later than the overdue alert's threshold (the delay slack
// plus a second). It costs a histogram read, never a query: the overdue
// COUNT the dashboard and the scrape run would be one more database
// round trip per instance and tick. Expiries running late is how a timeout
// backlog shows first: the consumer falls behind, each hold it handles is
// later than the last.
type expiryBacklog struct {
	lag   *prometheus.HistogramVec
	late  float64 // seconds: the first bucket bound at or past the threshold
	bound int64
	now   func() time.Time

	mu     sync.Mutex
	prev   uint64 // late expiries counted at prevAt
	prevAt time.Time
	recent int64 // late expiries in the last full window
}

func newExpiryBacklog(lag *prometheus.HistogramVec, slack time.Duration, bound int64) *expiryBacklog {
	threshold := (slack + time.Second).Seconds()
	late := core.ExpiryLagBuckets[len(core.ExpiryLagBuckets)-1]
	for _, b := range core.ExpiryLagBuckets {
		if b >= threshold {
			late = b
			break
		}
	}
	b := &expiryBacklog{lag: lag, late: late, bound: bound, now: time.Now}
	b.prev, b.prevAt = b.lateTotal(), b.now()
	return b
}

// lateTotal counts the expiries since start later than b.late.
func (b *expiryBacklog) lateTotal() uint64 {
	var n uint64
	for _, path := range []string{core.PathTimeout, core.PathSweep} {
		var m dto.Metric
		if err := b.lag.WithLabelValues(path).(prometheus.Metric).Write(&m); err != nil {
			continue
		}
		h := m.GetHistogram()
		n += h.GetSampleCount()
		for _, bk := range h.GetBucket() {
			if bk.GetUpperBound() >= b.late {
				n -= bk.GetCumulativeCount()
				break
			}
		}
	}
	return n
}

// Backlog is the late expiries of the last full window and the bound
// (SEATFLOW_QUEUE_BACKLOG_BOUND) past which admissions slow down.
func (b *expiryBacklog) Backlog() (n, bound int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now := b.now(); now.Sub(b.prevAt) >= backlogWindow {
		total := b.lateTotal()
		b.recent, b.prev, b.prevAt = int64(total-b.prev), total, now
	}
	return b.recent, b.bound
}

// shedMemory is how long an instance counts as overloaded after it last
// shed a request: long enough for a waiting room's step to see it.
const shedMemory = time.Second

// overloadSignal says whether the API is overloaded now: one of its limits
// of work in flight is reached, or they shed a request within shedMemory. Mode
// overload engages a queue only then, and the controller slows down.
type overloadSignal struct {
	limiters []*admission.Limiter
	now      func() time.Time

	mu       sync.Mutex
	lastShed uint64
	shedAt   time.Time
}

func (o *overloadSignal) Overloaded() bool {
	full, shed := false, uint64(0)
	for _, l := range o.limiters {
		st := l.Stats()
		full = full || st.InFlight >= st.Limit
		shed += st.Shed
	}
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if shed != o.lastShed {
		o.lastShed, o.shedAt = shed, now
	}
	return full || (!o.shedAt.IsZero() && now.Sub(o.shedAt) < shedMemory)
}
