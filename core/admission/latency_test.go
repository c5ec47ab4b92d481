package admission

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand; safe for concurrent use.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func millis(n int) time.Duration             { return time.Duration(n) * time.Millisecond }

// obsStep observes d n times after moving the clock by wait.
type obsStep struct {
	wait time.Duration
	n    int
	d    time.Duration
}

func TestLatencyWindow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []obsStep
		after time.Duration // the clock moves this much before P99
		want  time.Duration
	}{
		{"empty", nil, 0, 0},
		{"all alike", []obsStep{{n: 100, d: millis(10)}}, 0, millis(10)},
		{"one slow in a hundred is the 1 %", []obsStep{{n: 99, d: millis(10)}, {n: 1, d: millis(900)}}, 0, millis(10)},
		{"two slow in a hundred", []obsStep{{n: 98, d: millis(10)}, {n: 2, d: millis(900)}}, 0, time.Second},
		{"one alone", []obsStep{{n: 1, d: millis(42)}}, 0, millis(50)},
		{"the objective is a bound", []obsStep{{n: 100, d: millis(250)}}, 0, millis(250)},
		{"just above the objective", []obsStep{{n: 100, d: millis(251)}}, 0, millis(300)},
		{"zero", []obsStep{{n: 10, d: 0}}, 0, millis(1)},
		{"beyond the last bound", []obsStep{{n: 10, d: time.Hour}}, 0, time.Minute},
		{"still in the window", []obsStep{{n: 100, d: millis(700)}}, millis(1700), millis(800)},
		{"gone after the span", []obsStep{{n: 100, d: millis(700)}}, 2 * time.Second, 0},
		{"old slow ones leave, new fast ones stay",
			[]obsStep{{n: 100, d: millis(700)}, {wait: millis(1500), n: 100, d: millis(5)}}, millis(600), millis(5)},
		{"slow ones in the window outweigh", []obsStep{{n: 100, d: millis(700)}, {wait: millis(1500), n: 100, d: millis(5)}}, millis(200), millis(800)},
		{"a slot reused a span later starts empty",
			[]obsStep{{n: 100, d: millis(700)}, {wait: 2 * time.Second, n: 1, d: millis(5)}}, 0, millis(5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			w := NewLatencyWindow(2*time.Second, clk.now)
			for _, s := range tc.steps {
				clk.advance(s.wait)
				for range s.n {
					w.Observe(s.d)
				}
			}
			clk.advance(tc.after)
			if got := w.P99(); got != tc.want {
				t.Errorf("P99 = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLatencyWindowRace: observers, readers and a moving clock at once (run
// under -race); every observation made within the span is counted.
func TestLatencyWindowRace(t *testing.T) {
	clk := newFakeClock()
	w := NewLatencyWindow(0, clk.now)
	const writers, each = 8, 1000
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for j := range each {
				w.Observe(millis(1 + (i+j)%5))
			}
		})
	}
	wg.Go(func() {
		for range each {
			_ = w.P99()
		}
	})
	wg.Go(func() {
		for range 100 {
			clk.advance(time.Millisecond) // 100 ms in all: inside the span
		}
	})
	wg.Wait()
	var n int64
	for _, s := range w.slots {
		for _, c := range s.counts {
			n += c
		}
	}
	if n != writers*each {
		t.Errorf("%d observations counted, want %d", n, writers*each)
	}
	if got := w.P99(); got != millis(5) {
		t.Errorf("P99 = %v, want 5ms", got)
	}
}
