package bench

import (
	"testing"
	"time"
)

func TestDrainFigures(t *testing.T) {
	started := time.UnixMilli(100_000)
	tests := []struct {
		name        string
		before      int
		after       int
		first, last int64
		want        backlogDrain
	}{
		{"1,000 cancels over 2 s, the first 1.5 s after the start", 0, 1000, 101_500, 103_500,
			backlogDrain{Down: time.Minute, Cancels: 1000, FirstCancel: 1500 * time.Millisecond, Drain: 2 * time.Second, Rate: 500}},
		{"holds that ended before the stop are left out", 3, 10, 100_000, 101_000,
			backlogDrain{Down: time.Minute, EndedBeforeStop: 3, Cancels: 10, Drain: time.Second, Rate: 10}},
		{"all in one millisecond", 0, 5, 100_200, 100_200,
			backlogDrain{Down: time.Minute, Cancels: 5, FirstCancel: 200 * time.Millisecond, Rate: 5000}},
		{"nothing ended after the start", 2, 0, 0, 99_000,
			backlogDrain{Down: time.Minute, EndedBeforeStop: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := drainFigures(time.Minute, tt.before, tt.after, started, tt.first, tt.last); got != tt.want {
				t.Errorf("drainFigures = %+v, want %+v", got, tt.want)
			}
		})
	}
}
