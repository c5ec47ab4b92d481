package core

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGroupCommitWritesEachJobOnce: under concurrent callers every job is
// written exactly once, never more writers at once than allowed, no batch
// larger than the maximum, and jobs do share batches.
func TestGroupCommitWritesEachJobOnce(t *testing.T) {
	const callers, perCaller, writers, maxBatch = 64, 50, 3, 16
	var (
		mu       sync.Mutex
		written  = map[int]int{}
		active   atomic.Int32
		peak     atomic.Int32
		batches  atomic.Int32
		oversize atomic.Int32
	)
	g := newGroupCommit(writers, maxBatch, func(_ context.Context, batch []*gcJob[int]) {
		n := active.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		batches.Add(1)
		if len(batch) > maxBatch {
			oversize.Add(1)
		}
		time.Sleep(100 * time.Microsecond) // a commit
		mu.Lock()
		for _, j := range batch {
			written[j.v]++
		}
		mu.Unlock()
		active.Add(-1)
		for _, j := range batch {
			close(j.done)
		}
	})
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range perCaller {
				if err := g.do(context.Background(), c*perCaller+i); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for v := range callers * perCaller {
		if written[v] != 1 {
			t.Fatalf("job %d written %d times", v, written[v])
		}
	}
	if p := peak.Load(); p > writers {
		t.Errorf("%d writers at once, at most %d allowed", p, writers)
	}
	if oversize.Load() > 0 {
		t.Errorf("%d batches over %d jobs", oversize.Load(), maxBatch)
	}
	if b := batches.Load(); b >= callers*perCaller/2 {
		t.Errorf("%d batches for %d jobs from %d callers: they hardly share", b, callers*perCaller, callers)
	}
	t.Logf("%d jobs in %d batches, %d writers at most", callers*perCaller, batches.Load(), peak.Load())
	if g.writers != 0 || len(g.queue) != 0 {
		t.Errorf("after all: %d writers, %d queued", g.writers, len(g.queue))
	}
}
