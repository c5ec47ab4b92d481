package testenv

import (
	"testing"
	"time"
)

// WaitFor polls cond every few milliseconds until it holds, and fails the
// test if it still does not after within: for waiting on an event (a run
// recorded, a lease renewed) instead of sleeping for as long as it should
// take. within is a generous cap, never the behaviour under test.
func WaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after %v: %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
