package admission

import (
	"sync/atomic"
	"testing"
	"time"
)

const (
	fast = 10 * time.Millisecond
	slow = 400 * time.Millisecond // over the default objective
)

// step is one move of a limiter script: acquire n pieces (refused ones
// are counted, not kept), force n pieces past the limit, then finish the
// n oldest held with a latency; then the limiter must read want (fields
// at -1 are not checked).
type step struct {
	acquire, finish, force int
	latency                time.Duration
	wantLimit, wantIn      int
	wantShed               int
}

func acquire(n, limit, in, shed int) step {
	return step{acquire: n, wantLimit: limit, wantIn: in, wantShed: shed}
}
func finish(n int, lat time.Duration, limit, in int) step {
	return step{finish: n, latency: lat, wantLimit: limit, wantIn: in, wantShed: -1}
}

// rounds is n times: acquire size pieces and finish them with lat,
// checking nothing on the way.
func rounds(n, size int, lat time.Duration) []step {
	var out []step
	for range n {
		out = append(out, step{acquire: size, finish: size, latency: lat, wantLimit: -1, wantIn: -1, wantShed: -1})
	}
	return out
}

func TestLimiter(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   LimiterConfig
		steps []step
	}{
		{"refuses at once at the limit and admits again when work ends", LimiterConfig{Max: 4}, []step{
			acquire(4, 4, 4, 0),
			acquire(3, 4, 4, 3),
			finish(1, fast, 4, 3),
			acquire(1, 4, 4, 3),
		}},
		{"slow work cuts the limit once per cohort", LimiterConfig{Max: 20}, []step{
			acquire(20, 20, 20, 0),
			finish(20, slow, 16, 0), // all admitted before the cut: one cut
			acquire(16, 16, 16, 0),
			finish(1, slow, 12, 15), // admitted after the cut: cuts again
			finish(15, slow, 12, 0), // same cohort as that one: no more
		}},
		{"never below Min", LimiterConfig{Min: 5, Max: 6}, []step{
			acquire(6, 6, 6, 0),
			finish(6, slow, 5, 0),
			acquire(5, 5, 5, 0),
			finish(5, slow, 5, 0),
		}},
		{"fast busy work raises the limit by about one per limit's worth, never above Max",
			LimiterConfig{Initial: 4, Max: 5}, []step{
				acquire(4, 4, 4, 0),
				finish(4, fast, 4, 0), // 4 + 1/4 + 1/4.25 + 1/4.49 + 1/4.71 = 4.92
				acquire(4, 4, 4, 0),   // 4.92 is still 4 whole pieces
				finish(4, fast, 5, 0),
				acquire(5, 5, 5, 0),
				finish(5, fast, 5, 0),
			}},
		// 4 of 10 in flight: demand, not the limit, bounds concurrency.
		// Twelve raises of about 1/10 would make it 11.
		{"work admitted while the limit was mostly unused does not raise it", LimiterConfig{Initial: 10, Max: 20},
			append(rounds(3, 4, fast), acquire(0, 10, 0, 0))},
		// At Min already: the cut leaves 4. Then 1 slow in up to 99 is a
		// p99 over the objective: 23 raises of about 1/4 would make it 8.
		{"a window p99 over the objective holds the limit", LimiterConfig{Initial: 4, Max: 20}, append([]step{
			acquire(4, 4, 4, 0),
			finish(1, slow, 4, 3),
			finish(3, fast, 4, 0)},
			append(rounds(5, 4, fast), acquire(0, 4, 0, 0))...)},
		// 4 slow then 200 fast: the slow ones leave the window with the
		// 201st to 204th, and from the 202nd the p99 is back within.
		{"slow work that left the window no longer holds the limit", LimiterConfig{Initial: 4, Max: 20},
			append(append(rounds(1, 4, slow), rounds(50, 4, fast)...),
				acquire(0, 4, 0, 0), acquire(4, 4, 4, 0), finish(4, fast, 5, 0))},
		{"one slow piece in a window of fast ones is within p99 and cuts nothing", LimiterConfig{Initial: 10, Max: 10}, []step{
			acquire(10, 10, 10, 0), finish(10, fast, 10, 0),
			acquire(10, 10, 10, 0), finish(10, fast, 10, 0),
			acquire(10, 10, 10, 0), finish(10, fast, 10, 0),
			acquire(10, 10, 10, 0), finish(10, fast, 10, 0),
			acquire(10, 10, 10, 0), finish(10, fast, 10, 0),
			acquire(10, 10, 10, 0), finish(10, fast, 10, 0),
			acquire(10, 10, 10, 0), finish(10, fast, 10, 0),
			acquire(10, 10, 10, 0), finish(10, fast, 10, 0),
			acquire(10, 10, 10, 0), finish(10, fast, 10, 0),
			acquire(10, 10, 10, 0), finish(10, fast, 10, 0),
			acquire(1, 10, 1, 0), finish(1, slow, 10, 0), // 1 of 101
		}},
		{"forced work passes the limit and counts in flight", LimiterConfig{Max: 4}, []step{
			acquire(4, 4, 4, 0),
			{force: 2, wantLimit: 4, wantIn: 6, wantShed: 0},
			acquire(1, 4, 6, 1),
			finish(3, fast, 4, 3),
			acquire(1, 4, 4, 1), // back under the limit: admitted
			acquire(1, 4, 4, 2),
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := NewLimiter(c.cfg)
			var held []func(time.Duration)
			for i, s := range c.steps {
				for range s.acquire {
					if done, ok := l.Acquire(); ok {
						held = append(held, done)
					}
				}
				for range s.force {
					held = append(held, l.Force())
				}
				for range s.finish {
					held[0](s.latency)
					held = held[1:]
				}
				st := l.Stats()
				if (s.wantLimit >= 0 && st.Limit != s.wantLimit) || (s.wantIn >= 0 && st.InFlight != s.wantIn) ||
					(s.wantShed >= 0 && st.Shed != uint64(s.wantShed)) {
					t.Fatalf("step %d: limit %d, in flight %d, shed %d; want %d, %d, %d",
						i, st.Limit, st.InFlight, st.Shed, s.wantLimit, s.wantIn, s.wantShed)
				}
			}
		})
	}
}

func TestLimiterConfig(t *testing.T) {
	for _, c := range []struct {
		name            string
		cfg             LimiterConfig
		limit, min, max int
		objective       time.Duration
	}{
		{"defaults", LimiterConfig{Max: 28}, 28, DefaultMinLimit, 28, DefaultObjective},
		{"Max below Min is raised", LimiterConfig{Min: 8, Max: 2}, 8, 8, 8, DefaultObjective},
		{"Initial is bounded", LimiterConfig{Min: 2, Max: 10, Initial: 50, Objective: time.Second}, 10, 2, 10, time.Second},
		{"Initial within bounds", LimiterConfig{Min: 2, Max: 10, Initial: 3}, 3, 2, 10, DefaultObjective},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewLimiter(c.cfg).Stats()
			if s.Limit != c.limit || s.Min != c.min || s.Max != c.max || s.Objective != c.objective {
				t.Errorf("got limit %d in [%d, %d], objective %v; want %d in [%d, %d], %v",
					s.Limit, s.Min, s.Max, s.Objective, c.limit, c.min, c.max, c.objective)
			}
		})
	}
}

// TestLimiterP99: the p99 is over the recent window only.
func TestLimiterP99(t *testing.T) {
	for _, c := range []struct {
		name      string
		latencies []time.Duration // finished in this order
		want      time.Duration
	}{
		{"none yet", nil, 0},
		{"one", []time.Duration{fast}, fast},
		{"one slow in a hundred is the p100, not the p99",
			append(latencies(fast, 99), slow), fast},
		{"two slow in a hundred", append(latencies(fast, 98), slow, slow), slow},
		{"old slow ones leave the window", append([]time.Duration{slow, slow, slow}, latencies(fast, limiterWindow)...), fast},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := NewLimiter(LimiterConfig{Max: 1000, Min: 1000})
			for _, lat := range c.latencies {
				done, ok := l.Acquire()
				if !ok {
					t.Fatal("refused")
				}
				done(lat)
			}
			if got := l.Stats().P99; got != c.want {
				t.Errorf("P99 %v, want %v", got, c.want)
			}
		})
	}
}

func latencies(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestLimiterConcurrent: under -race, many goroutines never see more in
// flight than the limit allows, and everything admitted is released.
func TestLimiterConcurrent(t *testing.T) {
	l := NewLimiter(LimiterConfig{Max: 8})
	var inFlight, peak atomic.Int64
	done := make(chan struct{})
	for g := range 16 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 500 {
				release, ok := l.Acquire()
				if !ok {
					continue
				}
				for n := inFlight.Add(1); ; {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				lat := fast
				if (g+i)%7 == 0 {
					lat = slow
				}
				inFlight.Add(-1)
				release(lat)
			}
		}()
	}
	for range 16 {
		<-done
	}
	s := l.Stats()
	if s.InFlight != 0 || peak.Load() > int64(s.Max) {
		t.Errorf("in flight %d at the end, peak %d over max %d", s.InFlight, peak.Load(), s.Max)
	}
}
