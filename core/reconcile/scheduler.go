package reconcile

import (
	"context"
	"errors"
	"time"
)

// Start runs reconcile in the background until ctx ends: a full run at once
// and then every Options.Every, and an expired_pending sweep every
// Options.SweepEvery so a lost timeout message costs seconds, not minutes.
// Both take the lease, so across a cluster one instance runs at a time; an
// instance that finds it held skips that tick. Runs of one instance never
// overlap. The returned channel closes when the scheduler has stopped.
func (r *Reconciler) Start(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		full := time.NewTicker(r.opts.Every)
		defer full.Stop()
		sweep := time.NewTicker(r.opts.SweepEvery)
		defer sweep.Stop()
		r.scheduled(ctx, TriggerSchedule)
		for {
			// A tick that came due during a long run is taken once, not
			// queued: the next run covers what both would have.
			select {
			case <-ctx.Done():
				return
			case <-full.C:
				r.scheduled(ctx, TriggerSchedule)
			case <-sweep.C:
				r.scheduled(ctx, TriggerSweep)
			}
		}
	}()
	return done
}

// scheduled runs once for the scheduler; errors are logged, never fatal.
func (r *Reconciler) scheduled(ctx context.Context, trigger string) {
	if ctx.Err() != nil {
		return
	}
	_, err := r.RunOnce(ctx, trigger, false)
	switch {
	case err == nil:
	case errors.Is(err, ErrBusy):
		r.log.Debug("reconcile skipped: another instance holds the lease", "trigger", trigger, "err", err)
	case ctx.Err() != nil:
	default:
		r.log.Error("reconcile run", "trigger", trigger, "err", err)
	}
}
