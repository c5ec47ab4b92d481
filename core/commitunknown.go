package core

import (
	"context"
	"errors"
	"fmt"
)

// ErrCommitUnknown is a COMMIT that went out and got no answer (the
// connection was lost while it ran): the transaction may have landed or
// not. The store reports it (wrapped in ErrStoreUnavailable); the writers
// of the group commit then read what landed before writing anything again,
// because writing a landed job again makes it lose to itself: a cancel
// finds its order cancelled, a payment finds its txn id recorded, a
// placement finds its number taken.
var ErrCommitUnknown = &Error{Kind: KindUnavailable, Code: "commit_outcome_unknown",
	Message: "the database did not answer the commit: it may have landed"}

// unsettled is what a job reports when even reading what landed failed:
// its outcome stays unknown (reconcile settles the seat store later).
func unsettled(cause, readErr error) error {
	return fmt.Errorf("%w; reading what landed: %v", cause, readErr)
}

// settleEndings finishes a batch of an ending writer whose COMMIT went
// unanswered. One transaction locks the batch's orders (a locking read
// waits for a commit still running on the server) and asks each job
// whether its writes are there: a job whose are keeps what the batch did;
// so does a job that wrote nothing (a cancel that lost, a repeated
// callback) once another job's writes show the batch landed, for the batch
// was one transaction. The others are written again, one by one.
func settleEndings[J ending](e *Engine, ctx context.Context, writer string, batch []*gcJob[J], cause error) {
	stand := make([]bool, len(batch))
	err := e.store.InTx(ctx, func(tx Tx) error {
		nos := make([]string, len(batch))
		for i, j := range batch {
			nos[i] = j.v.orderNo()
		}
		if _, err := tx.OrdersForUpdate(ctx, nos); err != nil {
			return err
		}
		wroteNothing := make([]bool, len(batch))
		batchLanded := false
		for i, j := range batch {
			wrote, landed, err := j.v.landed(ctx, tx)
			if err != nil {
				return err
			}
			stand[i], wroteNothing[i] = wrote && landed, !wrote
			batchLanded = batchLanded || stand[i]
		}
		for i := range batch {
			stand[i] = stand[i] || (wroteNothing[i] && batchLanded)
		}
		return nil
	})
	if err != nil {
		for _, j := range batch {
			j.err = unsettled(cause, err)
		}
		return
	}
	landed, again := 0, 0
	for i, j := range batch {
		if stand[i] {
			landed++
			continue
		}
		again++
		j.err = writeEndingAlone(e, j.v)
	}
	if landed > 0 {
		e.metrics.GroupCommitBatch.WithLabelValues(writer).Observe(float64(landed))
	}
	if again > 0 {
		e.metrics.GroupCommitFallbacks.WithLabelValues(writer).Inc()
	}
}

// writeEndingAlone writes one job in a transaction of its own. When its
// COMMIT goes unanswered it reads whether the job landed and, if not (or
// if the job wrote nothing it could recognise), writes it once more.
func writeEndingAlone[J ending](e *Engine, j J) error {
	ctx := j.caller()
	write := func(tx Tx) error { return j.write(ctx, tx) }
	err := e.store.InTx(ctx, write)
	if !errors.Is(err, ErrCommitUnknown) {
		return err
	}
	landed := false
	if rerr := e.store.InTx(ctx, func(tx Tx) error {
		_, l, err := j.landed(ctx, tx)
		landed = l
		return err
	}); rerr != nil {
		return unsettled(err, rerr)
	}
	if landed {
		return nil
	}
	return e.store.InTx(ctx, write)
}

// placedOrders reads which of the numbered orders exist, with locking
// reads (they wait for a commit still running on the server).
func (e *Engine) placedOrders(ctx context.Context, nos []string) (map[string]Order, error) {
	var found map[string]Order
	err := e.store.InTx(ctx, func(tx Tx) error {
		var err error
		found, err = tx.OrdersForUpdate(ctx, nos)
		return err
	})
	return found, err
}

// settlePlacements finishes a placement batch whose COMMIT went
// unanswered: an order whose row is there was placed, with its timeout
// message on a TxQueue (wake); the others are written again, order by
// order. Order numbers are drawn per request, so a row found is this
// batch's.
func (e *Engine) settlePlacements(ctx context.Context, live []*gcJob[placement], wake func(), cause error) {
	nos := make([]string, len(live))
	for i, j := range live {
		nos[i] = j.v.o.OrderNo
	}
	found, err := e.placedOrders(ctx, nos)
	if err != nil {
		for _, j := range live {
			j.err = unsettled(cause, err)
		}
		return
	}
	placed := 0
	for _, j := range live {
		if _, ok := found[j.v.o.OrderNo]; ok {
			placed++
		}
	}
	if placed > 0 {
		wake()
		e.metrics.GroupCommitBatch.WithLabelValues(WriterPlace).Observe(float64(placed))
	}
	if placed < len(live) {
		e.metrics.GroupCommitFallbacks.WithLabelValues(WriterPlace).Inc()
	}
	for _, j := range live {
		if _, ok := found[j.v.o.OrderNo]; !ok {
			j.err = e.recordPlacement(j.v)
		}
	}
}
