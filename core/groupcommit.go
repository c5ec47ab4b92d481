package core

import (
	"context"
	"sync"
)

// groupCommit gathers concurrent writes into batches, so that many orders
// share one transaction and one commit. There is no background goroutine
// and no timer: a caller queues its job and, if fewer than the allowed
// writers are at work, becomes one and writes whatever is queued (its own
// job and everyone else's), batch after batch, until the queue is empty.
// Otherwise it just waits for its job: a writer at work looks at the queue
// again before it stops, under the same lock, so no job is left behind. A
// batch is thus "everything that arrived while the previous one
// committed", and a lone caller writes at once.
//
// Waiting callers block on their own channel only: an earlier version let
// them compete for writer tokens in a select, and each released token woke
// a caller that found nothing to do, a quarter of the server's CPU.
type groupCommit[J any] struct {
	maxWriters int // batches in flight at once
	max        int // jobs per batch
	write      func(ctx context.Context, batch []*gcJob[J])

	mu      sync.Mutex
	queue   []*gcJob[J]
	writers int
}

// gcJob is one caller's write; write sets err and closes done for each.
type gcJob[J any] struct {
	v    J
	err  error
	done chan struct{}
}

func newGroupCommit[J any](writers, maxBatch int, write func(context.Context, []*gcJob[J])) *groupCommit[J] {
	return &groupCommit[J]{maxWriters: writers, max: maxBatch, write: write}
}

// do queues v and returns once a writer (perhaps this caller) has written
// it. The batch runs without ctx's cancellation: other callers' orders are
// in it, and one client hanging up must not roll them back.
func (g *groupCommit[J]) do(ctx context.Context, v J) error {
	j := &gcJob[J]{v: v, done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, j)
	lead := g.writers < g.maxWriters
	if lead {
		g.writers++
	}
	g.mu.Unlock()
	if lead {
		g.drain(context.WithoutCancel(ctx))
	}
	<-j.done
	return j.err
}

// drain writes batches until the queue is empty, then stops being a writer.
func (g *groupCommit[J]) drain(ctx context.Context) {
	for {
		g.mu.Lock()
		n := min(len(g.queue), g.max)
		if n == 0 {
			g.writers--
			g.mu.Unlock()
			return
		}
		batch := g.queue[:n:n]
		g.queue = g.queue[n:]
		g.mu.Unlock()
		g.write(ctx, batch)
	}
}
