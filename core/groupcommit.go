package core

import (
	"context"
	"sync"
)

// groupCommit gathers concurrent writes into batches, so that many orders
// share one transaction and one commit. There is no background goroutine
// and no timer: a caller queues its job and, if one of the writer slots is
// free, becomes a writer and writes whatever is queued (its own job and
// everyone else's), batch after batch, until the queue is empty. Callers
// that find every slot busy wait; their jobs go into the batch after the
// one being committed, so a batch is "everything that arrived while the
// previous one committed" and a lone caller writes at once.
type groupCommit[J any] struct {
	slots chan struct{} // a token per writer allowed at once
	max   int           // jobs per batch
	write func(ctx context.Context, batch []*gcJob[J])

	mu    sync.Mutex
	queue []*gcJob[J]
}

// gcJob is one caller's write; write sets err and closes done for each.
type gcJob[J any] struct {
	v    J
	err  error
	done chan struct{}
}

func newGroupCommit[J any](writers, maxBatch int, write func(context.Context, []*gcJob[J])) *groupCommit[J] {
	return &groupCommit[J]{slots: make(chan struct{}, writers), max: maxBatch, write: write}
}

// do queues v and returns once a writer (perhaps this caller) has written
// it. The batch runs without ctx's cancellation: other callers' orders are
// in it, and one client hanging up must not roll them back.
func (g *groupCommit[J]) do(ctx context.Context, v J) error {
	j := &gcJob[J]{v: v, done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, j)
	g.mu.Unlock()
	for {
		select {
		case <-j.done:
			return j.err
		case g.slots <- struct{}{}:
			g.drain(context.WithoutCancel(ctx))
			<-g.slots
		}
	}
}

// drain writes batches until the queue is empty. A job queued after the
// last look finds a free slot, or a writer still draining, so none waits
// for nobody.
func (g *groupCommit[J]) drain(ctx context.Context) {
	for {
		g.mu.Lock()
		n := min(len(g.queue), g.max)
		batch := g.queue[:n:n]
		g.queue = g.queue[n:]
		g.mu.Unlock()
		if n == 0 {
			return
		}
		g.write(ctx, batch)
	}
}
