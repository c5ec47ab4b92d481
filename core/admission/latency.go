package admission

import (
	"sync"
	"time"
)

// DefaultLatencySpan is how far back a LatencyWindow looks: long enough to
// hold a few hundred placements at on-sale rates, short enough that the
// controller sees the effect of its last change within a couple of ticks.
const DefaultLatencySpan = 2 * time.Second

// latencySlots is the window's resolution: an observation leaves it
// between (slots-1)/slots and one span after it was made.
const latencySlots = 8

// latencyBounds are the histogram's bucket upper bounds, steps of 20-30 %.
// The objective (250 ms) is one of them, so "p99 within the objective" is
// decided exactly there; elsewhere P99 reports the bound above the true
// value, never below it.
var latencyBounds = [...]time.Duration{
	1 * time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond,
	5 * time.Millisecond, 6 * time.Millisecond, 8 * time.Millisecond, 10 * time.Millisecond,
	12 * time.Millisecond, 15 * time.Millisecond, 20 * time.Millisecond, 25 * time.Millisecond,
	30 * time.Millisecond, 40 * time.Millisecond, 50 * time.Millisecond, 60 * time.Millisecond,
	80 * time.Millisecond, 100 * time.Millisecond, 120 * time.Millisecond, 150 * time.Millisecond,
	200 * time.Millisecond, 250 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond,
	500 * time.Millisecond, 600 * time.Millisecond, 800 * time.Millisecond, 1 * time.Second,
	1200 * time.Millisecond, 1500 * time.Millisecond, 2 * time.Second, 2500 * time.Millisecond,
	3 * time.Second, 4 * time.Second, 5 * time.Second, 6 * time.Second, 8 * time.Second,
	10 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second, 60 * time.Second,
}

// LatencyWindow keeps the latencies of the last span in a ring of slots,
// each a fixed histogram, so Observe is a binary search of 42 bounds, a lock and
// an increment, and its memory never grows with the load. Safe for
// concurrent use.
type LatencyWindow struct {
	now     func() time.Time
	slotLen time.Duration

	mu    sync.Mutex
	slots [latencySlots]latencySlot
}

type latencySlot struct {
	epoch  int64 // which slotLen-long interval since the Unix epoch it counts
	counts [len(latencyBounds) + 1]int64
}

// NewLatencyWindow makes a window over the last span (DefaultLatencySpan
// when 0) on the clock now (time.Now when nil).
func NewLatencyWindow(span time.Duration, now func() time.Time) *LatencyWindow {
	if span <= 0 {
		span = DefaultLatencySpan
	}
	if now == nil {
		now = time.Now
	}
	return &LatencyWindow{now: now, slotLen: max(span/latencySlots, 1)}
}

// Observe records one latency.
func (w *LatencyWindow) Observe(d time.Duration) {
	b := bucketOf(d)
	epoch := w.now().UnixNano() / int64(w.slotLen)
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &w.slots[uint64(epoch)%latencySlots] // uint64: a clock before 1970 too
	if s.epoch != epoch {
		*s = latencySlot{epoch: epoch}
	}
	s.counts[b]++
}

// P99 returns the 99th percentile of the window's latencies (the bound of
// its bucket; beyond the last bound, that bound), 0 when there are none.
func (w *LatencyWindow) P99() time.Duration {
	epoch := w.now().UnixNano() / int64(w.slotLen)
	var counts [len(latencyBounds) + 1]int64
	var n int64
	w.mu.Lock()
	for i := range w.slots {
		s := &w.slots[i]
		if s.epoch > epoch-latencySlots && s.epoch <= epoch {
			for b, c := range s.counts {
				counts[b] += c
				n += c
			}
		}
	}
	w.mu.Unlock()
	if n == 0 {
		return 0
	}
	// The smallest bound at or below which at least 99 % of them lie.
	need, seen := (n*99+99)/100, int64(0)
	for b, c := range counts {
		if seen += c; seen >= need {
			return latencyBounds[min(b, len(latencyBounds)-1)]
		}
	}
	return latencyBounds[len(latencyBounds)-1]
}

func bucketOf(d time.Duration) int {
	lo, hi := 0, len(latencyBounds)
	for lo < hi {
		mid := (lo + hi) / 2
		if latencyBounds[mid] < d {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
