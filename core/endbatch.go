package core

import (
	"cmp"
	"context"
	"slices"
)

// Ending writers: the transactions that end a pending order, group-committed
// (groupcommit.go), one writer for CancelAndRelease's and one for
// HandlePayment's. Holds that come due together (a burst of timeout
// messages, a reconcile sweep) and payment callbacks that arrive together
// share one transaction and one commit each: every job still runs its own
// locking read and its own conditional update, so each order decides its
// own winner exactly as when written alone, and jobs of the same order run
// one after the other in the order they came. A batch locks its orders in
// order-number order, so two batches (two of cancels, two of payments, or
// one of each) never wait on each other's order rows in a cycle. A batch
// that fails (a deadlock, a lost connection, an order that does not exist)
// is rolled back and its jobs written one by one, so one failure never
// fails the others. What follows the commit (Redis, metrics, the answer)
// stays each caller's own, after do returns.
const (
	endWriters  = 4
	endMaxBatch = 64
)

// endTx is one ending's transaction body; InTx may run it again, so it
// sets its results afresh each time.
type endTx struct {
	ctx     context.Context // the caller's: its cancel applies when written alone
	orderNo string
	fn      func(context.Context, Tx) error
}

// newEndWriter is an ending writer whose batches are counted under writer.
func (e *Engine) newEndWriter(writer string) *groupCommit[endTx] {
	return newGroupCommit(endWriters, endMaxBatch, func(ctx context.Context, batch []*gcJob[endTx]) {
		e.writeEndings(ctx, writer, batch)
	})
}

// writeEndings writes one batch of an ending writer.
func (e *Engine) writeEndings(ctx context.Context, writer string, batch []*gcJob[endTx]) {
	defer func() {
		for _, j := range batch {
			close(j.done)
		}
	}()
	alone := func(j *gcJob[endTx]) error {
		return e.store.InTx(j.v.ctx, func(tx Tx) error { return j.v.fn(j.v.ctx, tx) })
	}
	if len(batch) == 1 {
		if batch[0].err = alone(batch[0]); batch[0].err == nil {
			e.metrics.GroupCommitBatch.WithLabelValues(writer).Observe(1)
		}
		return
	}
	slices.SortStableFunc(batch, func(a, b *gcJob[endTx]) int { return cmp.Compare(a.v.orderNo, b.v.orderNo) })
	err := e.store.InTx(ctx, func(tx Tx) error {
		for _, j := range batch {
			if err := j.v.fn(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		e.metrics.GroupCommitBatch.WithLabelValues(writer).Observe(float64(len(batch)))
		return
	}
	e.metrics.GroupCommitFallbacks.WithLabelValues(writer).Inc()
	for _, j := range batch {
		j.err = alone(j)
	}
}
