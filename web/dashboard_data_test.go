package web

import (
	"testing"
	"time"

	"seatflow/core"
)

// TestDashboardLevels: each figure's level against its thresholds, at
// both sides of each.
func TestDashboardLevels(t *testing.T) {
	bounds := []time.Duration{time.Second, LagWarn, 30 * time.Second, LagBad, 5 * time.Minute}
	lag := func(counts ...int) LagChart {
		return LagChart{Bounds: bounds, Counts: map[string][]int{core.PathSweep: counts}}
	}
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"lag all under 5 s", lag(3, 2, 0, 0, 0, 0).Level(), LevelOK},
		{"lag one from 5 s", lag(3, 2, 1, 0, 0, 0).Level(), LevelWarn},
		{"lag one from 60 s", lag(0, 0, 0, 0, 1, 0).Level(), LevelBad},
		{"lag one past the last bound", lag(0, 0, 0, 0, 0, 1).Level(), LevelBad},
		{"clock without a limit", DashboardData{ClockOffset: time.Hour}.ClockLevel(), LevelOK},
		{"clock at half the limit", DashboardData{ClockOffset: -250 * time.Millisecond, ClockLimit: 500 * time.Millisecond}.ClockLevel(), LevelOK},
		{"clock past half the limit", DashboardData{ClockOffset: -251 * time.Millisecond, ClockLimit: 500 * time.Millisecond}.ClockLevel(), LevelWarn},
		{"clock past the limit", DashboardData{ClockOffset: 501 * time.Millisecond, ClockLimit: 500 * time.Millisecond}.ClockLevel(), LevelBad},
		{"discrepancies under an hour", DiscrepancyAge{Band: 0, N: 9}.Level(), LevelOK},
		{"discrepancies of a day, none", DiscrepancyAge{Band: 1}.Level(), LevelOK},
		{"discrepancies of a day", DiscrepancyAge{Band: 1, N: 1}.Level(), LevelWarn},
		{"discrepancies older", DiscrepancyAge{Band: 2, N: 1}.Level(), LevelBad},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, tc.got, tc.want)
		}
	}
	if n := lag(3, 2, 1, 4, 1, 1).AtLeast(LagWarn); n != 7 {
		t.Errorf("AtLeast(5 s) = %d, want 7", n)
	}
	if len(discrepancyBandKeys) != len(DiscrepancyBandAges)+1 {
		t.Errorf("%d band keys for %d bands", len(discrepancyBandKeys), len(DiscrepancyBandAges)+1)
	}
	for _, k := range append(discrepancyBandKeys, "dashboard.last_sweep") {
		if !Known(k) {
			t.Errorf("catalog lacks %q", k)
		}
	}
}

// TestOverduePeak: the chart's most overdue at once, and the first minute
// that had it.
func TestOverduePeak(t *testing.T) {
	pts := func(ns ...int) []OverduePoint {
		out := make([]OverduePoint, len(ns))
		for i, n := range ns {
			out[i].N = n
		}
		return out
	}
	for _, tc := range []struct {
		pts     []OverduePoint
		max, at int
	}{
		{nil, 0, 0},
		{pts(0, 0, 0), 0, 0},
		{pts(0, 23, 0, 23, 1), 23, 1},
	} {
		if m, at := (DashboardData{Overdue: tc.pts}).OverdueMax(), peakAt(tc.pts); m != tc.max || at != tc.at {
			t.Errorf("%v: max %d at %d, want %d at %d", tc.pts, m, at, tc.max, tc.at)
		}
	}
}
