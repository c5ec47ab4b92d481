package reconcile

import (
	"context"
	"fmt"
	"time"

	"seatflow/core"
)

// PruneReport is what one pruning run did.
type PruneReport struct {
	EventsDeleted int
	Batches       int
	WorstBatch    time.Duration // the longest one DELETE (and its locks) lasted
	ShowsCleared  int           // ended shows whose Redis keys were deleted
	Done          bool          // false when MaxBatches stopped it with events left
	// WebhooksDeleted counts the webhook events delivered longer ago than
	// the order events' retention (never an undelivered one).
	WebhooksDeleted int
}

// Prune runs the retention job once under the reconcile lease, so it never
// overlaps a reconcile run (nor another instance's pruning): ErrBusy when
// the lease is held. It deletes closed orders' old events in batches, the
// webhook events delivered as long ago, and the Redis keys (seats and
// waiting room) of shows over for longer than the show grace.
func (r *Reconciler) Prune(ctx context.Context, p core.Retention) (PruneReport, error) {
	if err := p.Validate(); err != nil {
		return PruneReport{}, core.Invalidf("retention: %v", err)
	}
	lease, runCtx, ok, err := acquireLease(ctx, r.deps.DB, r.opts.Owner, r.opts.LeaseTTL, r.log)
	if err != nil {
		return PruneReport{}, fmt.Errorf("retention: %w", err)
	}
	if !ok {
		return PruneReport{}, r.busy(ctx)
	}
	defer func() {
		if err := lease.release(ctx); err != nil {
			r.log.Error("releasing the reconcile lease; it lapses by itself", "err", err)
		}
	}()
	now := r.deps.Clock.Now()
	var rep PruneReport
	sizer := core.BatchSizer{Max: p.Batch}
	for from := int64(0); rep.Batches < p.MaxBatches; {
		b, err := r.deps.DB.PruneOrderEvents(runCtx, from, now.Add(-p.OrderEvents), sizer.Size())
		if err != nil {
			return rep, fmt.Errorf("retention: %w", err)
		}
		if b.Done {
			rep.Done = true
			break
		}
		rep.Batches++
		rep.EventsDeleted += b.Deleted
		rep.WorstBatch = max(rep.WorstBatch, b.Took)
		sizer.Took(b.Took)
		from = b.Next
		if err := pause(runCtx, core.PruneIdle*b.Took); err != nil {
			return rep, fmt.Errorf("retention: %w", err)
		}
	}
	// A small table (what was sent in the retention window): whole
	// batches, with the same rest after each.
	for batches := 0; batches < p.MaxBatches; batches++ {
		n, took, err := r.deps.DB.PruneWebhookOutbox(runCtx, now.Add(-p.OrderEvents), p.Batch)
		if err != nil {
			return rep, fmt.Errorf("retention: %w", err)
		}
		rep.WebhooksDeleted += n
		if n < p.Batch {
			break
		}
		if err := pause(runCtx, core.PruneIdle*took); err != nil {
			return rep, fmt.Errorf("retention: %w", err)
		}
	}
	ended, err := r.deps.DB.ShowsEndedBefore(runCtx, now.Add(-p.ShowGrace))
	if err != nil {
		return rep, fmt.Errorf("retention: %w", err)
	}
	for _, id := range ended {
		if err := r.deps.Seats.DeleteShow(runCtx, id); err != nil {
			return rep, fmt.Errorf("retention: show %d: %w", id, err)
		}
		if r.deps.Queues != nil {
			if err := r.deps.Queues.Delete(runCtx, id); err != nil {
				return rep, fmt.Errorf("retention: show %d queue: %w", id, err)
			}
		}
		rep.ShowsCleared++
	}
	r.log.Info("retention run finished", "events_deleted", rep.EventsDeleted, "batches", rep.Batches,
		"worst_batch", rep.WorstBatch, "webhooks_deleted", rep.WebhooksDeleted, "shows_cleared", rep.ShowsCleared, "done", rep.Done)
	return rep, nil
}

// StartPruning runs Prune every p.Every until ctx ends; a busy lease or an
// error is logged and the next tick tries again.
func (r *Reconciler) StartPruning(ctx context.Context, p core.Retention) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(p.Every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if _, err := r.Prune(ctx, p); err != nil && ctx.Err() == nil {
					r.log.Warn("retention run", "err", err)
				}
			}
		}
	}()
	return done
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
