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
// choices of a show run as one script: the first caller runs the batch of
// whoever is queued, again until the queue is empty, while the others
// wait for their answer; a lone caller runs at once. The script still
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

	choice core.BestChoice
	err    error
	done   chan struct{}
}

// bestQueues holds the calls of each show that has a batch running.
type bestQueues struct {
	mu     sync.Mutex
	queued map[int64][]*bestCall // a show is present while its batch runs
}

// choose queues c and returns once a batch (perhaps run by this caller)
// answered it. run answers the calls of one batch, all of the show and of
// one index tag.
func (q *bestQueues) choose(ctx context.Context, showID int64, c *bestCall, run func(context.Context, []*bestCall)) {
	c.done = make(chan struct{})
	q.mu.Lock()
	queue, running := q.queued[showID]
	if q.queued == nil {
		q.queued = map[int64][]*bestCall{}
	}
	q.queued[showID] = append(queue, c)
	q.mu.Unlock()
	if !running {
		// Others' requests ride in this batch: one caller hanging up must
		// not cancel them.
		q.drain(context.WithoutCancel(ctx), showID, run)
	}
	<-c.done
}

// drain runs the show's queued calls, batch after batch, until none is
// left; then the show has no batch running.
func (q *bestQueues) drain(ctx context.Context, showID int64, run func(context.Context, []*bestCall)) {
	for {
		q.mu.Lock()
		queue := q.queued[showID]
		if len(queue) == 0 {
			delete(q.queued, showID)
			q.mu.Unlock()
			return
		}
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
			close(c.done)
		}
	}
}
