package admission

import (
	"math"
	"testing"
	"time"
)

func TestController(t *testing.T) {
	base := ControllerConfig{Objective: 250 * time.Millisecond, MinRate: 1, MaxRate: 100, InitialRate: 10,
		Increase: 10, Decrease: 0.5, Cooldown: 2 * time.Second}
	with := func(f func(*ControllerConfig)) ControllerConfig { c := base; f(&c); return c }
	ok := Signal{PlaceP99: 250 * time.Millisecond, Backlog: 10, BacklogBound: 10, Waiting: 1000}
	slow := ok
	slow.PlaceP99 = 251 * time.Millisecond
	backlog := ok
	backlog.Backlog = 11
	unbounded := backlog
	unbounded.BacklogBound = 0
	shedding := slow
	shedding.Backlog, shedding.Shedding = 11, true
	idle := ok
	idle.Waiting = 0
	idleSlow := slow
	idleSlow.Waiting = 0
	few := ok
	few.Waiting = 3
	sec := time.Second

	type step struct {
		sig    Signal
		dt     time.Duration
		admit  int64
		rate   float64 // after the tick
		reason string
	}
	for _, tc := range []struct {
		name  string
		cfg   ControllerConfig
		steps []step
	}{
		{"healthy: additive increase", base, []step{
			{ok, sec, 10, 20, ReasonWithinObjective},
			{ok, sec, 20, 30, ReasonWithinObjective},
			{ok, sec / 2, 15, 35, ReasonWithinObjective},
		}},
		{"p99 above objective: cut at once", base, []step{
			{ok, sec, 10, 20, ReasonWithinObjective},
			{slow, sec, 10, 10, ReasonP99},
		}},
		{"one cut per cooldown while the window remembers", base, []step{
			{slow, sec, 5, 5, ReasonP99},
			{slow, sec, 5, 5, ReasonP99},
			{slow, sec, 2, 2.5, ReasonP99},
			{slow, sec, 3, 2.5, ReasonP99}, // 2.5 and the carried 0.5
			{ok, sec, 2, 12.5, ReasonWithinObjective},
		}},
		{"timeout backlog over its bound", base, []step{{backlog, sec, 5, 5, ReasonBacklog}}},
		{"no bound: backlog ignored", base, []step{{unbounded, sec, 10, 20, ReasonWithinObjective}}},
		{"shedding outranks backlog and p99", base, []step{{shedding, sec, 5, 5, ReasonShedding}}},
		{"floor: never below MinRate", with(func(c *ControllerConfig) { c.InitialRate = 1.5 }), []step{
			{slow, sec, 1, 1, ReasonP99},
			{slow, 2 * sec, 2, 1, ReasonP99},
			{slow, 2 * sec, 2, 1, ReasonP99},
		}},
		{"ceiling: never above MaxRate", with(func(c *ControllerConfig) { c.InitialRate = 95 }), []step{
			{ok, sec, 95, 100, ReasonWithinObjective},
			{ok, sec, 100, 100, ReasonWithinObjective},
		}},
		{"idle: nothing admitted, no growth", base, []step{
			{idle, sec, 0, 10, ReasonIdle},
			{idle, sec, 0, 10, ReasonIdle},
		}},
		{"idle and overloaded: still cut", base, []step{{idleSlow, sec, 0, 5, ReasonP99}}},
		{"the line bounds the tick: no growth", base, []step{
			{few, sec, 3, 10, ReasonWithinObjective},
			{ok, sec, 10, 20, ReasonWithinObjective},
		}},
		{"no time passed", base, []step{{ok, 0, 0, 10, ReasonWithinObjective}}},
		{"zero config takes the defaults", ControllerConfig{}, []step{
			{ok, sec, 20, 40, ReasonWithinObjective},
			{slow, sec, 20, 20, ReasonP99},
		}},
		{"MaxRate below MinRate is raised to it", ControllerConfig{MinRate: 5, MaxRate: 2}, []step{
			{ok, sec, 5, 5, ReasonWithinObjective},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewController(tc.cfg)
			for i, s := range tc.steps {
				admit := c.Tick(s.sig, s.dt)
				st := c.Snapshot()
				if admit != s.admit || math.Abs(st.Rate-s.rate) > 1e-9 || st.Reason != s.reason {
					t.Fatalf("tick %d: admit %d, rate %v, %q; want %d, %v, %q", i+1, admit, st.Rate, st.Reason, s.admit, s.rate, s.reason)
				}
				if st.Signal != s.sig || st.Admitted != admit {
					t.Errorf("tick %d: snapshot %+v does not show the tick's signal and admissions", i+1, st)
				}
			}
		})
	}
}

// TestControllerCarry: a rate that is not a whole number of buyers a tick
// still admits exactly rate × time, the fraction carried between ticks.
func TestControllerCarry(t *testing.T) {
	for _, tc := range []struct {
		rate  float64
		dt    time.Duration
		ticks int
		want  int64
	}{
		// Ticks of binary fractions of a second, so the sums are exact.
		{2.5, 250 * time.Millisecond, 8, 5},
		{2.5, 250 * time.Millisecond, 4, 2}, // 2.5 owed, the half carried
		{1, 125 * time.Millisecond, 8, 1},
		{1, 125 * time.Millisecond, 7, 0},
		{7, 250 * time.Millisecond, 8, 14},
	} {
		c := NewController(ControllerConfig{MinRate: tc.rate, MaxRate: tc.rate})
		var got int64
		for range tc.ticks {
			got += c.Tick(Signal{Waiting: 1 << 40}, tc.dt)
		}
		if got != tc.want {
			t.Errorf("rate %v, %d ticks of %v: admitted %d, want %d", tc.rate, tc.ticks, tc.dt, got, tc.want)
		}
	}
}
