// The timeout chain: each hop's message, its delivery, re-arming with the
// time left, early and duplicate deliveries, and the sweep's resend.

package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Timeout outcomes, as recorded on timeout_fired events and metrics.
const (
	OutcomeIgnored   = "ignored"
	OutcomeRearmed   = "rearmed"
	OutcomeCancelled = "cancelled"
	OutcomeResent    = "resent"   // sent a hop whose claimer never confirmed its send
	OutcomeDeferred  = "deferred" // arrived early: the next hop waits until this one was due
)

// HandleTimeout decides what one delivered timeout message does. It is
// idempotent by the order's state alone (no dedupe table): a missing or
// ended order ignores it; an order not yet expired re-arms with the time
// left; an expired one is cancelled. An error asks for redelivery.
func (e *Engine) HandleTimeout(ctx context.Context, msg TimeoutMsg) error {
	return e.HandleTimeouts(ctx, []TimeoutMsg{msg})[0]
}

// HandleTimeouts is HandleTimeout for the timeouts of one message (or of
// several delivered together): each is decided as it would be alone, the
// due ones at once, so that their cancels share the cancel writer's
// batches, and the orders that re-arm are claimed in one transaction and
// sent on in one message per delay (rearmTogether). errs[i] is msgs[i]'s.
func (e *Engine) HandleTimeouts(ctx context.Context, msgs []TimeoutMsg) []error {
	jobs := e.handleTimeouts(ctx, msgs)
	errs := make([]error, len(jobs))
	for i, j := range jobs {
		errs[i] = j.err
	}
	return errs
}

// TimeoutHandler is HandleTimeouts for the consumer of the named queue
// (DeadLetterDBQueue, DeadLetterRocketMQ): it also times every timeout
// into seatflow_timeout_handle_seconds by outcome (a batch's timeouts each
// count the batch's time), whose series for this queue it creates at 0.
func (e *Engine) TimeoutHandler(queue string) TimeoutHandler {
	for _, o := range timeoutOutcomes {
		e.metrics.TimeoutHandle.WithLabelValues(o, queue)
	}
	e.metrics.TimeoutHandle.WithLabelValues(OutcomeFailed, queue)
	return func(ctx context.Context, msgs []TimeoutMsg) []error {
		start := time.Now() // the wall clock, not e.clock: this is a duration, not a due time
		jobs := e.handleTimeouts(ctx, msgs)
		took := time.Since(start).Seconds()
		errs := make([]error, len(jobs))
		for i, j := range jobs {
			outcome := j.outcome
			if errs[i] = j.err; j.err != nil {
				outcome = OutcomeFailed
			}
			e.metrics.TimeoutHandle.WithLabelValues(outcome, queue).Observe(took)
		}
		return errs
	}
}

// timeoutJob is one order's timeout of a delivered message.
type timeoutJob struct {
	ctx     context.Context // the caller's, with the message's trace id
	msg     TimeoutMsg
	order   Order // as last read
	now     time.Time
	outcome string // recorded by fired; undefined with err
	err     error
	rearm   bool // the order needs its next hop (rearmTogether)
}

// fired records the job's outcome on its metric and timeline.
func (e *Engine) fired(j *timeoutJob, out string, extra map[string]any) {
	j.outcome = out
	e.metrics.TimeoutFired.WithLabelValues(out).Inc()
	d := map[string]any{"hop": j.msg.Hop, "outcome": out}
	for k, v := range extra {
		d[k] = v
	}
	e.addEvent(j.ctx, Event{OrderNo: j.msg.OrderNo, At: j.now, Kind: EventTimeoutFired, Detail: d})
}

// handleTimeouts decides every job, all at once, then re-arms together
// the ones that need their next hop.
func (e *Engine) handleTimeouts(ctx context.Context, msgs []TimeoutMsg) []*timeoutJob {
	jobs := make([]*timeoutJob, len(msgs))
	for i, msg := range msgs {
		jctx := ctx
		if msg.TraceID != "" && TraceID(ctx) == "" {
			jctx = WithTraceID(ctx, msg.TraceID)
		}
		jobs[i] = &timeoutJob{ctx: jctx, msg: msg}
	}
	if len(jobs) == 1 {
		e.decideAlone(jobs[0])
	} else {
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Go(func() { e.decideAlone(j) })
		}
		wg.Wait()
	}
	e.rearmTogether(ctx, jobs)
	return jobs
}

// decideAlone is decideTimeout with a panic turned into j's error: a poison
// order fails its own timeout, never its neighbours' nor the process.
func (e *Engine) decideAlone(j *timeoutJob) {
	defer func() {
		if r := recover(); r != nil {
			j.rearm, j.err = false, fmt.Errorf("timeout %s: panic: %v", j.msg.OrderNo, r)
		}
	}()
	e.decideTimeout(j)
}

// decideTimeout ends j's order if it is due, or marks it for re-arming.
func (e *Engine) decideTimeout(j *timeoutJob) {
	ctx, msg := j.ctx, j.msg
	o, err := e.store.Order(ctx, msg.OrderNo)
	if errors.Is(err, ErrOrderNotFound) {
		j.outcome = OutcomeIgnored
		e.metrics.TimeoutFired.WithLabelValues(OutcomeIgnored).Inc()
		e.log.InfoContext(ctx, "timeout for unknown order ignored", "order_no", msg.OrderNo)
		return
	}
	if err != nil {
		j.err = fmt.Errorf("timeout %s: load order: %w", msg.OrderNo, err)
		return
	}
	j.order, j.now = o, e.clock.Now()
	if o.Status != StatusPending {
		// Due, but someone else ended the order after it expired: the
		// timeout lost a race (an order ended before its expiry was not one).
		if o.CancelReason != ReasonTimeout && !o.ClosedAt.Before(o.ExpireAt) {
			e.recordLostAttempt(ctx, o, ActorSystem, ReasonTimeout, j.now)
		}
		e.fired(j, OutcomeIgnored, map[string]any{"status": o.Status.String()})
		return
	}
	if j.now.Before(o.ExpireAt) {
		j.rearm = true
		return
	}
	res, err := e.CancelAndRelease(ctx, CancelRequest{OrderNo: o.OrderNo, Reason: ReasonTimeout, Actor: ActorSystem})
	if err != nil {
		j.err = fmt.Errorf("timeout %s: %w", o.OrderNo, err)
		return
	}
	if !res.Won {
		if res.Order.Status == StatusPending {
			// Extended since the read above: the chain goes on to the new expiry.
			j.order, j.rearm = res.Order, true
			return
		}
		e.fired(j, OutcomeIgnored, map[string]any{"status": res.Order.Status.String()})
		return
	}
	e.fired(j, OutcomeCancelled, map[string]any{"late_ms": j.now.Sub(o.ExpireAt).Milliseconds()})
}

// redelivered handles a message the chain has moved past: a duplicate, or
// the redelivery of a message whose handler claimed the next hop and died
// before sending it. Only the latter sends anything.
func (e *Engine) redelivered(j *timeoutJob) error {
	ctx, msg := j.ctx, j.msg
	o, err := e.store.Order(ctx, msg.OrderNo)
	if err != nil {
		return fmt.Errorf("timeout %s: reload order: %w", msg.OrderNo, err)
	}
	stale := map[string]any{"reason": "stale hop", "current_hop": o.TimeoutHop}
	switch {
	case o.Status != StatusPending || o.TimeoutHop != msg.Hop+1 || o.TimeoutSend == HopSent:
		e.fired(j, OutcomeIgnored, stale)
		return nil
	case o.TimeoutSend == HopDeferred && j.now.Before(o.TimeoutResendAt):
		e.fired(j, OutcomeIgnored, stale) // the sweep sends the deferred hop when it is due
		return nil
	case j.now.Before(o.TimeoutResendAt):
		// Its claimer may still be sending: come back, and send the hop
		// then if the claimer never confirmed it.
		return fmt.Errorf("timeout %s: hop %d claimed at %s, its send not yet confirmed", msg.OrderNo, o.TimeoutHop,
			o.TimeoutResendAt.Add(-TimeoutSendLease).Format(time.RFC3339Nano))
	}
	sent, err := e.resendHop(ctx, o, j.now)
	if err != nil {
		return err
	}
	if !sent {
		e.fired(j, OutcomeIgnored, stale)
		return nil
	}
	e.fired(j, OutcomeResent, map[string]any{"resent_hop": o.TimeoutHop})
	return nil
}

// deferEarly claims the next hop for a message that arrived well before it
// was due, and sends nothing now: a broker that ignores the delay (or a
// level table that differs from the broker's) would otherwise bounce the
// chain in a tight loop until expiry. The hop waits until the message was
// due, and the sweep sends it then (ResendTimeout): one hop per order per
// sweep at most, whatever the broker does.
func (e *Engine) deferEarly(j *timeoutJob, early time.Duration) error {
	ctx, o, msg := j.ctx, j.order, j.msg
	e.metrics.TimeoutEarly.Inc()
	e.log.ErrorContext(ctx, "timeout message delivered before its due time: the broker ignores the delay, "+
		"or its messageDelayLevel differs from SEATFLOW_DELAY_LEVELS; the next hop waits until it was due",
		"order_no", o.OrderNo, "hop", msg.Hop, "early", early, "due_at", msg.DueAt)
	next := msg.Hop + 1
	won, err := e.store.ClaimTimeoutHop(ctx, o.OrderNo, msg.Hop, next,
		HopSend{DueAt: msg.DueAt, State: HopDeferred, ResendAt: msg.DueAt})
	if err != nil {
		return fmt.Errorf("timeout %s: claim hop %d: %w", o.OrderNo, next, err)
	}
	if !won {
		e.fired(j, OutcomeIgnored, map[string]any{"reason": "stale hop", "current_hop": o.TimeoutHop, "early_ms": early.Milliseconds()})
		return nil
	}
	e.fired(j, OutcomeDeferred, map[string]any{"early_ms": early.Milliseconds(), "resend_at": msg.DueAt.Format(time.RFC3339Nano)})
	return nil
}

// ResendTimeout sends the latest hop of a pending order whose send was
// claimed and never confirmed (a crash between claim and send, a failed
// send) or deferred (an early delivery), once its resend time has come. It
// reports whether it sent the hop; the reconcile sweep calls it.
func (e *Engine) ResendTimeout(ctx context.Context, orderNo string) (bool, error) {
	o, err := e.store.Order(ctx, orderNo)
	if err != nil {
		return false, fmt.Errorf("resend timeout %s: %w", orderNo, err)
	}
	now := e.clock.Now()
	if o.Status != StatusPending || o.TimeoutSend == HopSent || now.Before(o.TimeoutResendAt) {
		return false, nil
	}
	return e.resendHop(ctx, o, now)
}

// resendHop takes over o's unconfirmed send of its latest hop and sends it
// with the time now left; false when another resender took it first.
func (e *Engine) resendHop(ctx context.Context, o Order, now time.Time) (bool, error) {
	plan := e.cfg.Delay.Plan(o.ExpireAt.Sub(now))
	won, err := e.store.ClaimTimeoutResend(ctx, o.OrderNo, o.TimeoutHop, now,
		HopSend{DueAt: now.Add(plan.Delay), State: HopSending, ResendAt: now.Add(TimeoutSendLease)})
	if err != nil {
		return false, fmt.Errorf("timeout %s: claim resend of hop %d: %w", o.OrderNo, o.TimeoutHop, err)
	}
	if !won {
		return false, nil
	}
	msg := timeoutMsg(ctx, o.OrderNo, o.TimeoutHop, plan, now)
	return true, e.sendClaimed(ctx, []TimeoutMsg{msg}, plan)
}
