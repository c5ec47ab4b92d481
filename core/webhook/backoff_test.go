package webhook

import (
	"testing"
	"time"
)

// TestBackoff: the n-th wait is drawn from the upper half of min·2^(n-1),
// capped at max, so each is at least the one before until the cap.
func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		n                int
		minWait, maxWait time.Duration
		lo, hi           time.Duration
	}{
		{1, time.Second, 10 * time.Minute, 500 * time.Millisecond, time.Second},
		{2, time.Second, 10 * time.Minute, time.Second, 2 * time.Second},
		{3, time.Second, 10 * time.Minute, 2 * time.Second, 4 * time.Second},
		{10, time.Second, 10 * time.Minute, 256 * time.Second, 512 * time.Second},
		{11, time.Second, 10 * time.Minute, 5 * time.Minute, 10 * time.Minute},
		{10000, time.Second, 10 * time.Minute, 5 * time.Minute, 10 * time.Minute},
		{3, time.Millisecond, time.Millisecond, 500 * time.Microsecond, time.Millisecond},
	} {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := backoff(c.n, c.minWait, c.maxWait)
			if d < c.lo || d > c.hi {
				t.Fatalf("backoff(%d, %v, %v) = %v, want %v to %v", c.n, c.minWait, c.maxWait, d, c.lo, c.hi)
			}
			seen[d] = true
		}
		if len(seen) < 100 {
			t.Errorf("backoff(%d, ...): %d distinct waits in 200: no jitter", c.n, len(seen))
		}
	}
}
