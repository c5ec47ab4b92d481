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

func (c *fakeClock) now() time.Time           { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration)  { c.ns.Add(int64(d)) }
func ms(n int) time.Duration                  { return time.Duration(n) * time.Millisecond }
func repeat(n int, d time.Duration) []obsStep { return []obsStep{{n: n, d: d}} }
func (s obsStep) then(o ...obsStep) []obsStep { return append([]obsStep{s}, o...) }

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
		{"all alike", repeat(100, ms(10)), 0, ms(10)},
		{"one slow in a hundred is the 1 %", obsStep{n: 99, d: ms(10)}.then(obsStep{n: 1, d: ms(900)}), 0, ms(10)},
		{"two slow in a hundred", obsStep{n: 98, d: ms(10)}.then(obsStep{n: 2, d: ms(900)}), 0, time.Second},
		{"one alone", repeat(1, ms(42)), 0, ms(50)},
		{"the objective is a bound", repeat(100, ms(250)), 0, ms(250)},
		{"just above the objective", repeat(100, ms(251)), 0, ms(300)},
		{"zero", repeat(10, 0), 0, ms(1)},
		{"beyond the last bound", repeat(10, time.Hour), 0, time.Minute},
		{"still in the window", repeat(100, ms(700)), ms(1700), ms(800)},
		{"gone after the span", repeat(100, ms(700)), 2 * time.Second, 0},
		{"old slow ones leave, new fast ones stay",
			obsStep{n: 100, d: ms(700)}.then(obsStep{wait: ms(1500), n: 100, d: ms(5)}), ms(600), ms(5)},
		{"slow ones in the window outweigh", obsStep{n: 100, d: ms(700)}.then(obsStep{wait: ms(1500), n: 100, d: ms(5)}), ms(200), ms(800)},
		{"a slot reused a span later starts empty",
			obsStep{n: 100, d: ms(700)}.then(obsStep{wait: 2 * time.Second, n: 1, d: ms(5)}), 0, ms(5)},
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
				w.Observe(ms(1 + (i+j)%5))
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
	if got := w.P99(); got != ms(5) {
		t.Errorf("P99 = %v, want 5ms", got)
	}
}
