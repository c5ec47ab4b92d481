package core

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DelayMode says how the delay queue is asked to wait.
type DelayMode string

const (
	// DelayLevels uses RocketMQ 4.x-style fixed delay levels and re-arms.
	DelayLevels DelayMode = "levels"
	// DelayTimer asks for an exact delay (RocketMQ 5 timer messages, the DB queue).
	DelayTimer DelayMode = "timer"
)

// DefaultLevelSpec is the broker's default messageDelayLevel.
const DefaultLevelSpec = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"

// DefaultSlack is how far past the remaining time a chosen level may reach.
const DefaultSlack = time.Second

// MaxTimerDelay is the longest exact delay a RocketMQ 5 broker accepts by
// default (timerMaxDelaySec = 3 days); longer holds re-arm.
const MaxTimerDelay = 72 * time.Hour

// DelayPolicy turns "time left until expiry" into the next message's delay.
type DelayPolicy struct {
	Mode   DelayMode
	Levels []time.Duration // level i+1 delays Levels[i]; ascending
	Slack  time.Duration
}

// DefaultDelayPolicy is levels mode with the broker's default table.
func DefaultDelayPolicy() DelayPolicy {
	levels, _ := ParseLevels(DefaultLevelSpec)
	return DelayPolicy{Mode: DelayLevels, Levels: levels, Slack: DefaultSlack}
}

// OverdueAfter is how long past its expiry a hold may stay pending before
// it counts as overdue: lateness within the slack is the levels working,
// and a second more leaves time to handle the message. The overdue gauge
// and the console both count from it, so a hold cancelled a few
// milliseconds late is never an alarm.
func (p DelayPolicy) OverdueAfter() time.Duration { return p.Slack + time.Second }

// DelayPlan is one hop: Level 0 means an exact Delay.
type DelayPlan struct {
	Level int
	Delay time.Duration
}

// LevelFor picks the largest level whose delay is not above remaining+slack,
// else level 1. The slack exists because every hop arrives a little after
// its level's delay: without it a 15-minute hold's second hop finds 4m59.9s
// left and decays into a tail of ever smaller hops. Lateness stays within
// about the slack, and the chain converges because each hop is ≥ Levels[0].
func (p DelayPolicy) LevelFor(remaining time.Duration) int {
	limit := remaining + p.Slack
	for i := len(p.Levels) - 1; i >= 0; i-- {
		if p.Levels[i] <= limit {
			return i + 1
		}
	}
	return 1
}

// Plan returns the next hop for the time left until expiry.
func (p DelayPolicy) Plan(remaining time.Duration) DelayPlan {
	if p.Mode == DelayTimer {
		d := max(remaining, 0)
		return DelayPlan{Level: 0, Delay: min(d, MaxTimerDelay)}
	}
	lvl := p.LevelFor(remaining)
	return DelayPlan{Level: lvl, Delay: p.Levels[lvl-1]}
}

// Validate reports a policy that cannot schedule anything.
func (p DelayPolicy) Validate() error {
	switch p.Mode {
	case DelayLevels, DelayTimer:
	default:
		return fmt.Errorf("delay mode %q: want levels or timer", p.Mode)
	}
	if p.Slack < 0 {
		return fmt.Errorf("delay slack %v: must not be negative", p.Slack)
	}
	if p.Mode == DelayLevels && len(p.Levels) == 0 {
		return fmt.Errorf("delay levels: table is empty")
	}
	return nil
}

// ParseLevels parses a broker messageDelayLevel string such as
// "1s 5s 10s 30s 1m ... 2h" (units s, m, h, d; strictly ascending).
func ParseLevels(spec string) ([]time.Duration, error) {
	fields := strings.Fields(spec)
	if len(fields) == 0 {
		return nil, fmt.Errorf("delay levels %q: empty", spec)
	}
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}
	out := make([]time.Duration, 0, len(fields))
	for _, f := range fields {
		unit, ok := units[f[len(f)-1]]
		n, err := strconv.Atoi(f[:len(f)-1])
		if !ok || err != nil || n <= 0 {
			return nil, fmt.Errorf("delay level %q: want a positive number with unit s, m, h or d", f)
		}
		d := time.Duration(n) * unit
		if len(out) > 0 && d <= out[len(out)-1] {
			return nil, fmt.Errorf("delay level %q: levels must be strictly ascending", f)
		}
		out = append(out, d)
	}
	return out, nil
}
