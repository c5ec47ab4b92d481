package dbqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"seatflow/core"
)

const (
	// stmtTimeout bounds each statement the consumer runs on its own.
	stmtTimeout = 10 * time.Second
	// maxAckBatch bounds the id list of one DELETE.
	maxAckBatch = 500
	// maxHandleBatch bounds the tasks of one handler call: the cancel
	// writer's batch.
	maxHandleBatch = 64
)

// task is a claimed row waiting for, or in, a worker.
type task struct {
	row      taskRow
	leaseEnd time.Time // wall clock; no later than the row's claimed_until
}

// consumer is the running side of a Queue: one poller that claims due rows,
// Workers goroutines that run the handler, one acker that deletes handled
// rows in batches (one DELETE per batch, not per task, is what lets a burst
// of thousands drain in seconds on SQLite's single writer).
type consumer struct {
	q    *Queue
	h    core.TimeoutHandler
	log  *slog.Logger
	base context.Context // handler and statement contexts: Consume's values, never its cancellation
	ctx  context.Context // ends at Close or when Consume's ctx ends: stop claiming and starting
	stop context.CancelFunc

	jobs        chan task     // claimed, not started
	acks        chan int64    // handled, not yet deleted
	freed       chan struct{} // a claimed task finished: the poller may claim more
	outstanding atomic.Int64  // claimed and not finished; at most Batch

	pollerDone chan struct{}
	workers    sync.WaitGroup
	ackQuit    chan struct{}
	ackDone    chan struct{}
}

// Consume starts delivering due tasks to h and returns at once; errors are
// logged. Cancelling ctx stops claiming (like Close, without the waiting);
// Close must still be called. A handler's context carries ctx's values and
// ends when the task's lease does. A handler error retries the task after
// 1s, 2s, 4s ... (at most 60s); a handler panic counts as an error. The
// MaxAttempts-th failure moves the task to dead_letter instead.
func (q *Queue) Consume(ctx context.Context, h core.TimeoutHandler) error {
	if h == nil {
		return errors.New("dbqueue: consume: handler is nil")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return errors.New("dbqueue: consume: queue is closed")
	}
	if q.consumer != nil {
		return errors.New("dbqueue: consume: already consuming")
	}
	stopCtx, stop := context.WithCancel(ctx)
	c := &consumer{
		q:          q,
		h:          h,
		log:        q.opts.Logger.With("component", "dbqueue", "owner", q.opts.Owner),
		base:       context.WithoutCancel(ctx),
		ctx:        stopCtx,
		stop:       stop,
		jobs:       make(chan task, q.opts.Batch),
		acks:       make(chan int64, q.opts.Batch),
		freed:      make(chan struct{}, 1),
		pollerDone: make(chan struct{}),
		ackQuit:    make(chan struct{}),
		ackDone:    make(chan struct{}),
	}
	q.consumer = c
	go c.poll()
	c.workers.Add(q.opts.Workers)
	for range q.opts.Workers {
		go c.work()
	}
	go c.ack()
	return nil
}

// poll claims due tasks until stopped: again at once after a full batch,
// else at the next due time it knows of, or after Poll at the latest.
func (c *consumer) poll() {
	defer close(c.pollerDone)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if !c.waitCapacity() {
			return
		}
		claimedAt, full, err := c.claimBatch()
		if err != nil {
			c.log.Error("dbqueue: poll", "err", err)
		}
		if full {
			continue
		}
		next := int64(math.MaxInt64)
		if err == nil {
			next = c.nextDue(claimedAt)
		}
		if !c.sleep(timer, next) {
			return
		}
	}
}

// waitCapacity waits until at most half the batch is outstanding, so a
// saturated consumer refills in half batches, not one row per claim.
func (c *consumer) waitCapacity() bool {
	for int(c.outstanding.Load()) > c.q.opts.Batch/2 {
		select {
		case <-c.ctx.Done():
			return false
		case <-c.freed:
		}
	}
	return c.ctx.Err() == nil
}

// claimBatch claims what fits and queues it for the workers. It returns the
// claim's now (unix ms) and whether every requested row came back, so more
// may be due.
func (c *consumer) claimBatch() (now int64, full bool, err error) {
	o := c.q.opts
	n := o.Batch - int(c.outstanding.Load())
	// Reset the hint before the claim: every Send that lowered it so far has
	// committed, so this claim or the nextDue query after it sees its row;
	// a Send from now on lowers it again.
	c.q.hint.Store(math.MaxInt64)
	leaseEnd := time.Now().Add(o.Lease) // taken before the claim: never after the row's claimed_until
	t := o.Clock.Now()
	ctx, cancel := context.WithTimeout(c.base, stmtTimeout)
	defer cancel()
	rows, err := c.q.claim(ctx, t.UnixMilli(), t.Add(o.Lease).UnixMilli(), n)
	if err != nil {
		return 0, false, err
	}
	c.outstanding.Add(int64(len(rows)))
	for _, r := range rows {
		c.jobs <- task{row: r, leaseEnd: leaseEnd} // never blocks: outstanding ≤ Batch = cap(jobs)
	}
	return t.UnixMilli(), len(rows) == n, nil
}

// nextDue asks the database for the earliest task due after the claim's
// now, including tasks other instances sent.
func (c *consumer) nextDue(claimedAt int64) int64 {
	ctx, cancel := context.WithTimeout(c.base, stmtTimeout)
	defer cancel()
	next, err := c.q.nextDue(ctx, claimedAt)
	if err != nil {
		c.log.Error("dbqueue: poll", "err", err)
		return math.MaxInt64
	}
	return next
}

// sleep waits until next (unix ms), a sooner task from Send, or Poll at the
// latest; false when stopped.
func (c *consumer) sleep(timer *time.Timer, next int64) bool {
	clock := c.q.opts.Clock
	plan := min(next, clock.Now().UnixMilli()+c.q.opts.Poll.Milliseconds())
	for {
		plan = min(plan, c.q.hint.Swap(math.MaxInt64))
		wait := time.Duration(plan-clock.Now().UnixMilli()) * time.Millisecond
		if wait <= 0 {
			return c.ctx.Err() == nil
		}
		timer.Reset(wait)
		select {
		case <-c.ctx.Done():
			return false
		case <-timer.C:
			return true
		case <-c.q.wake:
		}
	}
}

func (c *consumer) work() {
	defer c.workers.Done()
	for c.ctx.Err() == nil {
		select {
		case <-c.ctx.Done():
			return
		case t := <-c.jobs:
			batch := c.more([]task{t})
			c.deliver(batch)
			c.outstanding.Add(-int64(len(batch)))
			select {
			case c.freed <- struct{}{}:
			default: // the poller has a wake-up pending already
			}
		}
	}
}

// more adds to batch the claimed tasks waiting for a worker, up to
// maxHandleBatch: tasks due together are handled together (the engine ends
// the due ones in shared cancel batches and re-arms the rest in one
// transaction), as RocketMQ delivers a batch message.
func (c *consumer) more(batch []task) []task {
	for len(batch) < maxHandleBatch {
		select {
		case t := <-c.jobs:
			batch = append(batch, t)
		default:
			return batch
		}
	}
	return batch
}

// deliver runs the handler on a batch of tasks, then queues each row for
// deletion or reschedules it with backoff: every task keeps its own
// attempts, so one that fails never holds the others back.
func (c *consumer) deliver(batch []task) {
	live := batch[:0:0]
	msgs := make([]core.TimeoutMsg, 0, len(batch))
	var leaseEnd time.Time // the earliest of the live tasks': the handler's deadline
	for _, t := range batch {
		if time.Now().After(t.leaseEnd) {
			// Another instance may hold it by now; running it here too would only
			// add a duplicate. It is claimable again.
			c.log.Warn("dbqueue: lease ran out before the task started", "order_no", t.row.OrderNo, "hop", t.row.Hop)
			continue
		}
		live, msgs = append(live, t), append(msgs, t.row.msg())
		if leaseEnd.IsZero() || t.leaseEnd.Before(leaseEnd) {
			leaseEnd = t.leaseEnd
		}
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithDeadline(c.base, leaseEnd)
	errs := c.h.Call(ctx, msgs)
	cancel()
	for i, t := range live {
		c.settle(t, msgs[i], errs[i])
	}
}

// settle acks, retries or buries one handled task.
func (c *consumer) settle(t task, msg core.TimeoutMsg, err error) {
	if err == nil {
		select {
		case c.acks <- t.row.ID:
		case <-c.ackDone: // Close gave up waiting for this handler: the lease will redeliver it
		}
		return
	}
	if t.row.Attempts+1 >= c.q.opts.MaxAttempts {
		c.bury(t.row, err)
		return
	}
	wait := backoff(t.row.Attempts)
	c.log.Warn("dbqueue: handler failed; will retry", "order_no", msg.OrderNo, "hop", msg.Hop,
		"attempts", t.row.Attempts+1, "retry_in", wait, "err", err)
	sctx, scancel := context.WithTimeout(c.base, stmtTimeout)
	defer scancel()
	if err := c.q.reschedule(sctx, t.row.ID, ceilMilli(c.q.opts.Clock.Now().Add(wait))); err != nil {
		c.log.Error("dbqueue: reschedule failed; the task is retried when its lease ends",
			"order_no", msg.OrderNo, "hop", msg.Hop, "err", err)
	}
}

// bury moves a task that failed its last allowed attempt to dead_letter.
// If the move fails the task stays claimed: its lease ends, it is delivered
// again and, failing again, buried then.
func (c *consumer) bury(row taskRow, handlerErr error) {
	msg := row.msg()
	d := core.NewDeadLetter(core.DeadLetterDBQueue, msg, row.Attempts+1, handlerErr.Error(), c.q.opts.Clock.Now())
	ctx, cancel := context.WithTimeout(c.base, stmtTimeout)
	defer cancel()
	moved, err := c.q.bury(ctx, row.ID, d)
	if err != nil {
		c.log.Error("dbqueue: moving a failed task to dead_letter failed; it is retried when its lease ends",
			"order_no", msg.OrderNo, "hop", msg.Hop, "attempts", d.Attempts, "err", err)
		return
	}
	if !moved { // the lease ran out and another owner has it now
		return
	}
	c.log.Error("dbqueue: task failed every attempt; moved to dead_letter", "order_no", msg.OrderNo,
		"hop", msg.Hop, "attempts", d.Attempts, "err", handlerErr)
	if c.q.opts.OnDeadLetter != nil {
		c.q.opts.OnDeadLetter(d)
	}
}

// ack deletes handled rows, taking whatever has piled up during the last
// DELETE as the next batch.
func (c *consumer) ack() {
	defer close(c.ackDone)
	for {
		select {
		case id := <-c.acks:
			c.deleteDone(c.collect([]int64{id}))
		case <-c.ackQuit:
			for ids := c.collect(nil); len(ids) > 0; ids = c.collect(nil) {
				c.deleteDone(ids)
			}
			return
		}
	}
}

func (c *consumer) collect(ids []int64) []int64 {
	for len(ids) < maxAckBatch {
		select {
		case id := <-c.acks:
			ids = append(ids, id)
		default:
			return ids
		}
	}
	return ids
}

func (c *consumer) deleteDone(ids []int64) {
	const tries = 3 // a deadlock or busy error is worth a quick retry; a lost DELETE means redelivery
	var err error
	for i := range tries {
		ctx, cancel := context.WithTimeout(c.base, stmtTimeout)
		err = c.q.deleteDone(ctx, ids)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(time.Duration(i+1) * 50 * time.Millisecond)
	}
	c.log.Error("dbqueue: deleting handled tasks failed; they will be delivered again after their lease",
		"tasks", len(ids), "err", err)
}

// shutdown stops claiming, waits up to Lease for running handlers, hands
// back tasks never started and flushes the deletes.
func (c *consumer) shutdown() error {
	c.stop()
	<-c.pollerDone
	var errs []error
	workersDone := make(chan struct{})
	go func() {
		c.workers.Wait()
		close(workersDone)
	}()
	wait := time.NewTimer(c.q.opts.Lease)
	defer wait.Stop()
	select {
	case <-workersDone:
	case <-wait.C:
		errs = append(errs, fmt.Errorf("dbqueue: close: handlers still running after %v; their tasks will be delivered again", c.q.opts.Lease))
	}
	var ids []int64
	for len(c.jobs) > 0 {
		select {
		case t := <-c.jobs:
			ids = append(ids, t.row.ID)
		default: // a late worker took it
		}
	}
	if len(ids) > 0 {
		ctx, cancel := context.WithTimeout(c.base, stmtTimeout)
		if err := c.q.unclaim(ctx, ids); err != nil {
			errs = append(errs, fmt.Errorf("dbqueue: close: hand back %d claimed tasks: %w", len(ids), err))
		}
		cancel()
	}
	close(c.ackQuit)
	<-c.ackDone
	return errors.Join(errs...)
}
