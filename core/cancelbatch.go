package core

import (
	"cmp"
	"context"
	"slices"
)

// Cancel writers: CancelAndRelease's transactions, group-committed
// (groupcommit.go). Holds that come due together (a burst of timeout
// messages, a reconcile sweep) share one transaction and one commit: each
// cancel still runs its own locking read and its own conditional update, so
// each order decides its own winner exactly as when written alone. A batch
// locks its orders in order-number order, so two batches never wait on
// each other's rows in a cycle. A batch that fails (a deadlock against a
// payment, a lost connection, an order that does not exist) is rolled back
// and its cancels written one by one, so one failure never fails the
// others. Releasing Redis stays each caller's own, after do returns.
const (
	cancelWriters  = 4
	cancelMaxBatch = 64
)

// cancelTx is one cancel's transaction body; InTx may run it again, so it
// sets its results afresh each time.
type cancelTx struct {
	ctx     context.Context // the caller's: its cancel applies when written alone
	orderNo string
	fn      func(context.Context, Tx) error
}

func (e *Engine) newCancelWriter() *groupCommit[cancelTx] {
	return newGroupCommit(cancelWriters, cancelMaxBatch, e.writeCancels)
}

// writeCancels is the cancel writer of the group commit.
func (e *Engine) writeCancels(ctx context.Context, batch []*gcJob[cancelTx]) {
	defer func() {
		for _, j := range batch {
			close(j.done)
		}
	}()
	alone := func(j *gcJob[cancelTx]) error {
		return e.store.InTx(j.v.ctx, func(tx Tx) error { return j.v.fn(j.v.ctx, tx) })
	}
	if len(batch) == 1 {
		if batch[0].err = alone(batch[0]); batch[0].err == nil {
			e.metrics.GroupCommitBatch.WithLabelValues(WriterCancel).Observe(1)
		}
		return
	}
	slices.SortStableFunc(batch, func(a, b *gcJob[cancelTx]) int { return cmp.Compare(a.v.orderNo, b.v.orderNo) })
	err := e.store.InTx(ctx, func(tx Tx) error {
		for _, j := range batch {
			if err := j.v.fn(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		e.metrics.GroupCommitBatch.WithLabelValues(WriterCancel).Observe(float64(len(batch)))
		return
	}
	e.metrics.GroupCommitFallbacks.WithLabelValues(WriterCancel).Inc()
	for _, j := range batch {
		j.err = alone(j)
	}
}
