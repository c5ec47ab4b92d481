package core

import (
	"cmp"
	"context"
	"errors"
	"slices"
)

// Ending writers: the transactions that end a pending order, group-committed
// (groupcommit.go), one writer for CancelAndRelease's and one for
// HandlePayment's (cancelbatch.go, paybatch.go). Holds that come due together (a burst of
// timeout messages, a reconcile sweep) and payment callbacks that arrive
// together share one transaction and one commit each: every job still
// decides its own order's fate exactly as when written alone, and jobs of
// the same order run one after the other in the order they came. A batch
// locks its orders in order-number order, so two batches (two of cancels,
// two of payments, or one of each) never wait on each other's order rows
// in a cycle. A batch that fails (a deadlock, a lost connection, an order
// that does not exist) is rolled back and its jobs written one by one, so
// one failure never fails the others; a batch whose COMMIT went unanswered
// is first read back (settleEndings), so no landed job is written twice.
// What follows the commit (Redis, metrics, the answer) stays each caller's
// own, after do returns.
//
// One writer per kind, for the reason placeWriters is one: more split the
// same load into smaller batches (bench pay, real stack: 4 writers 0.26–0.35
// of raw commit, MariaDB 315–382 µs a callback; 1 writer 0.27–0.38,
// 220–243 µs, callback p99 37–42 ms against 63–67).
const (
	endWriters  = 1
	endMaxBatch = 64
)

// ending is one job of an ending writer.
type ending interface {
	orderNo() string                 // the order it ends: batches lock in this order
	caller() context.Context         // its cancel applies when written alone
	write(context.Context, Tx) error // the job in tx; InTx may run it again, so it sets its results afresh
	// landed reads, in a transaction after the one of write whose COMMIT
	// went unanswered, whether write's writes are in the database (then
	// its results stand); wrote is false when write wrote nothing it can
	// recognise (commitunknown.go).
	landed(context.Context, Tx) (wrote, landed bool, err error)
}

// newEndWriter is an ending writer whose batches are counted under writer.
// together writes a whole batch in fewer statements than job by job when
// it can; it reports false, before writing anything, to have the jobs
// written one after the other in the same transaction instead.
func newEndWriter[J ending](e *Engine, writer string, together func(context.Context, Tx, []J) (bool, error)) *groupCommit[J] {
	return newGroupCommit(endWriters, endMaxBatch, func(ctx context.Context, batch []*gcJob[J]) {
		writeEndings(e, ctx, writer, together, batch)
	})
}

// writeEndings writes one batch of an ending writer.
func writeEndings[J ending](e *Engine, ctx context.Context, writer string, together func(context.Context, Tx, []J) (bool, error), batch []*gcJob[J]) {
	defer func() {
		for _, j := range batch {
			close(j.done)
		}
	}()
	if len(batch) == 1 {
		if batch[0].err = writeEndingAlone(e, batch[0].v); batch[0].err == nil {
			e.metrics.GroupCommitBatch.WithLabelValues(writer).Observe(1)
		}
		return
	}
	slices.SortStableFunc(batch, func(a, b *gcJob[J]) int { return cmp.Compare(a.v.orderNo(), b.v.orderNo()) })
	jobs := make([]J, len(batch))
	for i, j := range batch {
		jobs[i] = j.v
	}
	err := e.store.InTx(ctx, func(tx Tx) error {
		if done, err := together(ctx, tx, jobs); done || err != nil {
			return err
		}
		for _, j := range jobs {
			if err := j.write(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		e.metrics.GroupCommitBatch.WithLabelValues(writer).Observe(float64(len(batch)))
		return
	}
	if errors.Is(err, ErrCommitUnknown) {
		settleEndings(e, ctx, writer, batch, err)
		return
	}
	e.metrics.GroupCommitFallbacks.WithLabelValues(writer).Inc()
	for _, j := range batch {
		j.err = writeEndingAlone(e, j.v)
	}
}
