package gather

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// TestBatcher: under concurrent callers every item runs exactly once,
// before its Do returns, in batches of at most max with at most runners
// batches at once.
func TestBatcher(t *testing.T) {
	const (
		runners, max = 3, 5
		callers      = 64
		each         = 200
	)
	var (
		running, most atomic.Int32
		ran           [callers * each]atomic.Int32
		batches       atomic.Int32
	)
	b := New(runners, max, func(_ context.Context, batch []int) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if len(batch) == 0 || len(batch) > max {
			t.Errorf("batch of %d", len(batch))
		}
		batches.Add(1)
		for _, i := range batch {
			ran[i].Add(1)
		}
	})
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			for k := range each {
				i := g*each + k
				b.Do(t.Context(), i)
				if ran[i].Load() != 1 {
					t.Errorf("item %d: Do returned before its batch ran", i)
				}
			}
		})
	}
	wg.Wait()
	for i := range ran {
		if n := ran[i].Load(); n != 1 {
			t.Fatalf("item %d ran %d times", i, n)
		}
	}
	if m := most.Load(); m > runners {
		t.Errorf("%d batches ran at once, want at most %d", m, runners)
	}
	t.Logf("%d items in %d batches", callers*each, batches.Load())
}
