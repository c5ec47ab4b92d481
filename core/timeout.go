// The timeout chain: each hop's message, its delivery, re-arming with the
// time left, early and duplicate deliveries, and the sweep's resend.

package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// sendTimeout sends hop's message and records the outcome on the timeline.
// It reports whether the message went out.
func (e *Engine) sendTimeout(ctx context.Context, orderNo string, hop int, plan DelayPlan, now time.Time) bool {
	msg := timeoutMsg(ctx, orderNo, hop, plan, now)
	if err := e.queue.Send(ctx, msg, plan.Level, plan.Delay); err != nil {
		e.metrics.TimeoutSendFail.Inc()
		e.log.ErrorContext(ctx, "timeout message not sent; the expiry sweep will end the order",
			"order_no", orderNo, "hop", hop, "err", err)
		e.addEvent(ctx, Event{OrderNo: orderNo, At: now, Kind: EventTimeoutSendFailed,
			Detail: map[string]any{"hop": hop, "level": plan.Level, "error": err.Error()}})
		return false
	}
	e.metrics.RearmHops.WithLabelValues(fmt.Sprint(plan.Level)).Inc()
	e.addEvent(ctx, scheduledEvent(msg, plan))
	return true
}

// timeoutMsg is hop's timeout message of orderNo, sent at now.
func timeoutMsg(ctx context.Context, orderNo string, hop int, plan DelayPlan, now time.Time) TimeoutMsg {
	return TimeoutMsg{OrderNo: orderNo, Hop: hop, DueAt: now.Add(plan.Delay), SentAt: now, TraceID: TraceID(ctx)}
}

// scheduledEvent is the timeline entry of a timeout message that went out.
func scheduledEvent(msg TimeoutMsg, plan DelayPlan) Event {
	return Event{OrderNo: msg.OrderNo, At: msg.SentAt, Kind: EventTimeoutScheduled, Detail: map[string]any{
		"hop": msg.Hop, "level": plan.Level, "delay_ms": plan.Delay.Milliseconds(),
		"due_at": msg.DueAt.Format(time.RFC3339Nano),
	}}
}

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
	_, err := e.handleTimeout(ctx, msg)
	return err
}

// TimeoutHandler is HandleTimeout for the consumer of the named queue
// (DeadLetterDBQueue, DeadLetterRocketMQ): it also times every message
// into seatflow_timeout_handle_seconds by outcome, whose series for this
// queue it creates at 0.
func (e *Engine) TimeoutHandler(queue string) TimeoutHandler {
	for _, o := range timeoutOutcomes {
		e.metrics.TimeoutHandle.WithLabelValues(o, queue)
	}
	e.metrics.TimeoutHandle.WithLabelValues(OutcomeFailed, queue)
	return func(ctx context.Context, msg TimeoutMsg) error {
		start := time.Now() // the wall clock, not e.clock: this is a duration, not a due time
		outcome, err := e.handleTimeout(ctx, msg)
		if err != nil {
			outcome = OutcomeFailed
		}
		e.metrics.TimeoutHandle.WithLabelValues(outcome, queue).Observe(time.Since(start).Seconds())
		return err
	}
}

// handleTimeout is HandleTimeout, also returning the outcome it recorded
// (undefined with an error).
func (e *Engine) handleTimeout(ctx context.Context, msg TimeoutMsg) (outcome string, err error) {
	if msg.TraceID != "" && TraceID(ctx) == "" {
		ctx = WithTraceID(ctx, msg.TraceID)
	}
	o, err := e.store.Order(ctx, msg.OrderNo)
	if errors.Is(err, ErrOrderNotFound) {
		e.metrics.TimeoutFired.WithLabelValues(OutcomeIgnored).Inc()
		e.log.InfoContext(ctx, "timeout for unknown order ignored", "order_no", msg.OrderNo)
		return OutcomeIgnored, nil
	}
	if err != nil {
		return "", fmt.Errorf("timeout %s: load order: %w", msg.OrderNo, err)
	}
	now := e.clock.Now()
	fired := func(out string, extra map[string]any) {
		outcome = out
		e.metrics.TimeoutFired.WithLabelValues(out).Inc()
		d := map[string]any{"hop": msg.Hop, "outcome": out}
		for k, v := range extra {
			d[k] = v
		}
		e.addEvent(ctx, Event{OrderNo: o.OrderNo, At: now, Kind: EventTimeoutFired, Detail: d})
	}
	if o.Status != StatusPending {
		// Due, but someone else ended the order after it expired: the
		// timeout lost a race (an order ended before its expiry was not one).
		if o.CancelReason != ReasonTimeout && !o.ClosedAt.Before(o.ExpireAt) {
			e.recordLostAttempt(ctx, o, ActorSystem, ReasonTimeout, now)
		}
		fired(OutcomeIgnored, map[string]any{"status": o.Status.String()})
		return outcome, nil
	}
	if now.Before(o.ExpireAt) {
		err = e.rearm(ctx, o, msg, now, fired)
		return outcome, err
	}
	res, err := e.CancelAndRelease(ctx, CancelRequest{OrderNo: o.OrderNo, Reason: ReasonTimeout, Actor: ActorSystem})
	if err != nil {
		return "", fmt.Errorf("timeout %s: %w", o.OrderNo, err)
	}
	if !res.Won {
		if res.Order.Status == StatusPending {
			// Extended since the read above: the chain goes on to the new expiry.
			err = e.rearm(ctx, res.Order, msg, now, fired)
			return outcome, err
		}
		fired(OutcomeIgnored, map[string]any{"status": res.Order.Status.String()})
		return outcome, nil
	}
	fired(OutcomeCancelled, map[string]any{"late_ms": now.Sub(o.ExpireAt).Milliseconds()})
	return outcome, nil
}

// rearm sends the next hop of the chain. Only the delivery of the latest hop
// may re-arm (ClaimTimeoutHop), so a duplicated message cannot fork the
// chain. The claim records the send as unconfirmed: if this process dies
// before the send, the redelivery of msg or the sweep sends the hop.
func (e *Engine) rearm(ctx context.Context, o Order, msg TimeoutMsg, now time.Time, fired func(string, map[string]any)) error {
	if early, ok := e.cfg.Delay.deliveredEarly(msg, now); ok {
		return e.deferEarly(ctx, o, msg, now, early, fired)
	}
	remaining := o.ExpireAt.Sub(now)
	plan := e.cfg.Delay.Plan(remaining)
	next := msg.Hop + 1
	won, err := e.store.ClaimTimeoutHop(ctx, o.OrderNo, msg.Hop, next,
		HopSend{DueAt: now.Add(plan.Delay), State: HopSending, ResendAt: now.Add(TimeoutSendLease)})
	if err != nil {
		return fmt.Errorf("timeout %s: claim hop %d: %w", o.OrderNo, next, err)
	}
	if !won {
		return e.redelivered(ctx, o.OrderNo, msg, now, fired)
	}
	if err := e.sendHop(ctx, o.OrderNo, next, plan, now); err != nil {
		return err
	}
	fired(OutcomeRearmed, map[string]any{"remaining_ms": remaining.Milliseconds(), "next_level": plan.Level})
	return nil
}

// redelivered handles a message the chain has moved past: a duplicate, or
// the redelivery of a message whose handler claimed the next hop and died
// before sending it. Only the latter sends anything.
func (e *Engine) redelivered(ctx context.Context, orderNo string, msg TimeoutMsg, now time.Time, fired func(string, map[string]any)) error {
	o, err := e.store.Order(ctx, orderNo)
	if err != nil {
		return fmt.Errorf("timeout %s: reload order: %w", orderNo, err)
	}
	stale := map[string]any{"reason": "stale hop", "current_hop": o.TimeoutHop}
	switch {
	case o.Status != StatusPending || o.TimeoutHop != msg.Hop+1 || o.TimeoutSend == HopSent:
		fired(OutcomeIgnored, stale)
		return nil
	case o.TimeoutSend == HopDeferred && now.Before(o.TimeoutResendAt):
		fired(OutcomeIgnored, stale) // the sweep sends the deferred hop when it is due
		return nil
	case now.Before(o.TimeoutResendAt):
		// Its claimer may still be sending: come back, and send the hop
		// then if the claimer never confirmed it.
		return fmt.Errorf("timeout %s: hop %d claimed at %s, its send not yet confirmed", orderNo, o.TimeoutHop,
			o.TimeoutResendAt.Add(-TimeoutSendLease).Format(time.RFC3339Nano))
	}
	sent, err := e.resendHop(ctx, o, now)
	if err != nil {
		return err
	}
	if !sent {
		fired(OutcomeIgnored, stale)
		return nil
	}
	fired(OutcomeResent, map[string]any{"resent_hop": o.TimeoutHop})
	return nil
}

// deferEarly claims the next hop for a message that arrived well before it
// was due, and sends nothing now: a broker that ignores the delay (or a
// level table that differs from the broker's) would otherwise bounce the
// chain in a tight loop until expiry. The hop waits until the message was
// due, and the sweep sends it then (ResendTimeout): one hop per order per
// sweep at most, whatever the broker does.
func (e *Engine) deferEarly(ctx context.Context, o Order, msg TimeoutMsg, now time.Time, early time.Duration, fired func(string, map[string]any)) error {
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
		fired(OutcomeIgnored, map[string]any{"reason": "stale hop", "current_hop": o.TimeoutHop, "early_ms": early.Milliseconds()})
		return nil
	}
	fired(OutcomeDeferred, map[string]any{"early_ms": early.Milliseconds(), "resend_at": msg.DueAt.Format(time.RFC3339Nano)})
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
	return true, e.sendHop(ctx, o.OrderNo, o.TimeoutHop, plan, now)
}

// sendHop sends a claimed hop and confirms it. A failed send gives the
// claim up, so the redelivery this error asks for sends it at once.
func (e *Engine) sendHop(ctx context.Context, orderNo string, hop int, plan DelayPlan, now time.Time) error {
	if !e.sendTimeout(ctx, orderNo, hop, plan, now) {
		if err := e.store.ReleaseTimeoutSend(ctx, orderNo, hop, now); err != nil {
			e.log.ErrorContext(ctx, "timeout: giving up the send of a hop", "order_no", orderNo, "hop", hop, "err", err)
		}
		return fmt.Errorf("timeout %s: hop %d not sent", orderNo, hop)
	}
	if err := e.store.MarkTimeoutSent(ctx, orderNo, hop); err != nil {
		// The message is out; unconfirmed, it may go out once more after
		// the lease, and only one of the two can claim the hop after it.
		e.log.WarnContext(ctx, "timeout: confirming a sent hop", "order_no", orderNo, "hop", hop, "err", err)
	}
	return nil
}
