// Package gather runs store calls that arrive together as one batch, so
// that many requests share one round trip (one write and one read system
// call, one wake-up) instead of paying one each. No goroutine and no timer
// of its own: a caller that finds fewer than the allowed runners at work
// runs its own call at once (an idle store sees no added latency);
// otherwise it queues. A runner that finds calls queued when its batch is
// done hands the next batch (up to max of them) to the first of them, who
// runs it: no caller runs more than one batch.
package gather

import (
	"context"
	"sync"
)

// Batcher gathers items of type T (usually pointers the run fills in).
type Batcher[T any] struct {
	runners int // batches in flight at once
	max     int // items per batch
	run     func(ctx context.Context, batch []T)

	mu      sync.Mutex
	queue   []*call[T]
	running int
}

type call[T any] struct {
	v     T
	done  chan struct{} // closed once its batch has run
	turn  chan struct{} // closed when batch is this call's to run
	batch []*call[T]
}

// New returns a Batcher running up to runners batches of at most max items
// at once with run, which must answer every item of its batch.
func New[T any](runners, max int, run func(ctx context.Context, batch []T)) *Batcher[T] {
	return &Batcher[T]{runners: runners, max: max, run: run}
}

// Do returns once a batch holding v has run. A batch of v alone runs with
// ctx; a larger one without its cancellation, as others' items ride in it.
func (b *Batcher[T]) Do(ctx context.Context, v T) {
	c := &call[T]{v: v, done: make(chan struct{})}
	b.mu.Lock()
	if b.running < b.runners {
		b.running++
		b.mu.Unlock()
		c.batch = []*call[T]{c}
	} else {
		c.turn = make(chan struct{})
		b.queue = append(b.queue, c)
		b.mu.Unlock()
		select {
		case <-c.done:
			return
		case <-c.turn:
		}
	}
	if len(c.batch) > 1 {
		ctx = context.WithoutCancel(ctx)
	}
	b.runBatch(ctx, c.batch)
}

// runBatch runs batch, then hands the next one to the first call queued,
// or stops being a runner.
func (b *Batcher[T]) runBatch(ctx context.Context, batch []*call[T]) {
	items := make([]T, len(batch))
	for i, c := range batch {
		items[i] = c.v
	}
	b.run(ctx, items)
	for _, c := range batch {
		close(c.done)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		b.running--
		return
	}
	n := min(len(b.queue), b.max)
	next := b.queue[0]
	next.batch = b.queue[:n:n]
	if b.queue = b.queue[n:]; len(b.queue) == 0 {
		b.queue = nil // not to keep the batches' calls reachable
	}
	close(next.turn)
}
