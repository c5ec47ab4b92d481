package core

import (
	"testing"
	"time"
)

// TestHoldsSeen: a count read below the cap lets placements through
// without a read until, counted, they reach it; a count at the cap, or one
// older than holdsSeenFor, is read again.
func TestHoldsSeen(t *testing.T) {
	var h holdsSeen
	k, t0 := holdsKey{1, "192.0.2.1"}, time.Unix(1_760_000_000, 0)
	if h.pass(k, 3, t0) {
		t.Fatal("passed with nothing read")
	}
	h.read(k, 1, 3, t0) // 1 open, and this placement
	if !h.pass(k, 3, t0) {
		t.Error("2 of 3 counted, yet not passed")
	}
	if h.pass(k, 3, t0) {
		t.Error("3 of 3 counted, yet passed without a read")
	}
	h.read(k, 3, 3, t0)
	if h.pass(k, 3, t0) {
		t.Error("passed after a read at the cap")
	}
	h.read(k, 0, 3, t0)
	if h.pass(k, 3, t0.Add(holdsSeenFor)) {
		t.Error("passed on a count older than holdsSeenFor")
	}
	if h.pass(holdsKey{2, "192.0.2.1"}, 3, t0) {
		t.Error("another show's count was used")
	}
	for i := range holdsSeenPruneAt - len(h.byKey) {
		h.read(holdsKey{int64(i + 10), "x"}, 0, 3, t0)
	}
	h.read(holdsKey{99_999, "x"}, 0, 3, t0.Add(holdsSeenFor))
	if n := len(h.byKey); n != 1 {
		t.Errorf("%d counts kept after a sweep, want the fresh one", n)
	}
}
