package seats

import (
	"context"
	"sync"
	"time"

	"seatflow/core"
)

// A rush asks for best-available seats of one show from many clients at
// once, and best.lua's fixed cost (the row order, the stored bounds, the
// rows it reads, what it learns) is most of a choice. So the concurrent
// choices of a show run as one script: a caller that finds no batch of its
// show running runs one at once, with whoever queued meanwhile; a caller
// that finds one running queues and waits for the batch after it. Whoever
// runs a batch hands the show on to the first call still queued, which
// runs the next: no caller runs more than its own batch. The script still
// answers each request alone, one after the other, as if sent one by one.
const bestMaxBatch = 64 // requests in one script run

// bestCall is one ChooseAndLock waiting in its show's queue.
type bestCall struct {
	userID  int64
	orderNo string
	idx     *core.SeatIndex
	req     core.BestRequest
	limit   int
	now     time.Time

	choice   core.BestChoice
	err      error
	answered chan struct{} // closed once choice and err are set
	turn     chan struct{} // closed when this call is to run the next batch
}

// bestQueues holds the calls of each show that has a batch running.
type bestQueues struct {
	mu     sync.Mutex
	queued map[int64][]*bestCall // a show is present while a batch of it runs
}

// choose queues c and returns once a batch answered it. run answers the
// calls of one batch, all of the show and of one index tag.
func (q *bestQueues) choose(ctx context.Context, showID int64, c *bestCall, run func(context.Context, []*bestCall)) {
	c.answered, c.turn = make(chan struct{}), make(chan struct{})
	q.mu.Lock()
	queue, running := q.queued[showID]
	if q.queued == nil {
		q.queued = map[int64][]*bestCall{}
	}
	q.queued[showID] = append(queue, c)
	q.mu.Unlock()
	if running {
		select {
		case <-c.answered:
			return
		case <-c.turn:
		}
	}
	// Others' requests ride in this batch: one caller hanging up must not
	// cancel them.
	q.runNext(context.WithoutCancel(ctx), showID, run)
	<-c.answered
}

// runNext runs the next batch of the show's queue, whose first call is the
// caller's own, then gives the turn to the first call left, if any.
func (q *bestQueues) runNext(ctx context.Context, showID int64, run func(context.Context, []*bestCall)) {
	q.mu.Lock()
	queue := q.queued[showID]
	// One index per run: a call holding another plan waits for the next.
	var batch, rest []*bestCall
	for _, c := range queue {
		if len(batch) < bestMaxBatch && c.idx.Tag == queue[0].idx.Tag {
			batch = append(batch, c)
		} else {
			rest = append(rest, c)
		}
	}
	q.queued[showID] = rest
	q.mu.Unlock()
	run(ctx, batch)
	for _, c := range batch {
		close(c.answered)
	}
	q.mu.Lock()
	if rest := q.queued[showID]; len(rest) > 0 {
		close(rest[0].turn)
	} else {
		delete(q.queued, showID)
	}
	q.mu.Unlock()
}
