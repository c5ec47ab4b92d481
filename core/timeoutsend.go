// Sending the timeout chain's messages: one message carries the timeouts
// of many orders (a placement batch's first hops, a delivered message's
// re-arms), each order still with its own hop, due time and trace id, so
// the broker stores and delivers one message where it did one per order.

package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

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

// The sender: timeouts that callers (placement batches, re-arms) hand over
// while a message is on its way are merged into the next, one message per
// delay plan, the group commit's pattern (groupcommit.go) with one writer,
// so messages stay few however the placements were batched.
const (
	senders      = 1
	sendMaxBatch = 64 // callers merged into one message at most
)

// outgoing is one caller's timeouts that share a delay plan.
type outgoing struct {
	msgs []TimeoutMsg
	plan DelayPlan
}

// errNotSent is a caller's share of a message that did not go out
// (sendTimeouts logged why).
var errNotSent = errors.New("timeout message not sent")

// send hands msgs to the sender and returns once they went out in a
// message, or failed to.
func (e *Engine) send(ctx context.Context, msgs []TimeoutMsg, plan DelayPlan) error {
	return e.sender.do(ctx, outgoing{msgs: msgs, plan: plan})
}

// sendMerged is the sender's writer: one message per delay plan of batch.
func (e *Engine) sendMerged(ctx context.Context, batch []*gcJob[outgoing]) {
	defer func() {
		for _, j := range batch {
			close(j.done)
		}
	}()
	groups := map[DelayPlan][]*gcJob[outgoing]{}
	for _, j := range batch {
		groups[j.v.plan] = append(groups[j.v.plan], j)
	}
	for plan, js := range groups {
		var msgs []TimeoutMsg
		for _, j := range js {
			msgs = append(msgs, j.v.msgs...)
		}
		if !e.sendTimeouts(ctx, msgs, plan) {
			for _, j := range js {
				j.err = errNotSent
			}
		}
	}
}

// sendTimeouts sends msgs, which share plan, as one message and records the
// outcome on each order's timeline. It reports whether the message went out.
func (e *Engine) sendTimeouts(ctx context.Context, msgs []TimeoutMsg, plan DelayPlan) bool {
	evs := make([]Event, len(msgs))
	if err := e.queue.Send(ctx, msgs, plan.Level, plan.Delay); err != nil {
		e.metrics.TimeoutSendFail.Add(float64(len(msgs)))
		e.log.ErrorContext(ctx, "timeout message not sent; the expiry sweep will end its orders",
			"order_no", msgs[0].OrderNo, "hop", msgs[0].Hop, "orders", len(msgs), "err", err)
		for i, m := range msgs {
			evs[i] = Event{OrderNo: m.OrderNo, At: m.SentAt, Kind: EventTimeoutSendFailed,
				Detail: map[string]any{"hop": m.Hop, "level": plan.Level, "error": err.Error()}}
		}
		e.addEvents(ctx, evs)
		return false
	}
	e.metrics.TimeoutSends.Inc()
	e.metrics.RearmHops.WithLabelValues(fmt.Sprint(plan.Level)).Add(float64(len(msgs)))
	for i, m := range msgs {
		evs[i] = scheduledEvent(m, plan)
	}
	e.addEvents(ctx, evs)
	return true
}

// addEvents writes the timeline entries of one step at once, outside any
// transaction (see addEvent).
func (e *Engine) addEvents(ctx context.Context, evs []Event) {
	if err := e.store.AddEvents(ctx, evs); err != nil {
		e.log.ErrorContext(ctx, "recording order events", "order_no", evs[0].OrderNo, "events", len(evs), "err", err)
	}
}

// sendClaimed sends hops claimed by this caller (ClaimTimeoutHop(s),
// ClaimTimeoutResend) and confirms them. A failed send gives the claims up,
// so the redeliveries this error asks for send them at once.
func (e *Engine) sendClaimed(ctx context.Context, msgs []TimeoutMsg, plan DelayPlan) error {
	hops := make([]HopRef, len(msgs))
	for i, m := range msgs {
		hops[i] = HopRef{OrderNo: m.OrderNo, Hop: m.Hop}
	}
	if e.send(ctx, msgs, plan) != nil {
		for _, h := range hops {
			if err := e.store.ReleaseTimeoutSend(ctx, h.OrderNo, h.Hop, msgs[0].SentAt); err != nil {
				e.log.ErrorContext(ctx, "timeout: giving up the send of a hop", "order_no", h.OrderNo, "hop", h.Hop, "err", err)
			}
		}
		return fmt.Errorf("timeout %s: hop %d not sent (%d orders in the message)", msgs[0].OrderNo, msgs[0].Hop, len(msgs))
	}
	if err := e.store.MarkTimeoutsSent(ctx, hops); err != nil {
		// The message is out; unconfirmed, its hops may go out once more
		// after the lease, and only one of the two can claim the hop after.
		e.log.WarnContext(ctx, "timeout: confirming sent hops", "order_no", hops[0].OrderNo, "orders", len(hops), "err", err)
	}
	return nil
}

// rearmTogether sends the next hop of every job marked rearm. Only the
// delivery of the latest hop may re-arm (ClaimTimeoutHops), so a duplicated
// message cannot fork a chain. The claims record the sends as unconfirmed:
// if this process dies before the send, the redelivery or the sweep sends
// the hop. The claims share one transaction, and the won hops one message
// per delay plan.
func (e *Engine) rearmTogether(ctx context.Context, jobs []*timeoutJob) {
	var (
		claims []HopClaim
		plans  []DelayPlan
		claim  []*timeoutJob
	)
	for _, j := range jobs {
		if !j.rearm {
			continue
		}
		if early, ok := e.cfg.Delay.deliveredEarly(j.msg, j.now); ok {
			j.err = e.deferEarly(j, early)
			continue
		}
		plan := e.cfg.Delay.Plan(j.order.ExpireAt.Sub(j.now))
		claims = append(claims, HopClaim{OrderNo: j.msg.OrderNo, From: j.msg.Hop, To: j.msg.Hop + 1,
			Send: HopSend{DueAt: j.now.Add(plan.Delay), State: HopSending, ResendAt: j.now.Add(TimeoutSendLease)}})
		plans, claim = append(plans, plan), append(claim, j)
	}
	if len(claims) == 0 {
		return
	}
	won, err := e.store.ClaimTimeoutHops(ctx, claims)
	if err != nil {
		for _, j := range claim {
			j.err = fmt.Errorf("timeout %s: claim hop %d: %w", j.msg.OrderNo, j.msg.Hop+1, err)
		}
		return
	}
	groups := map[DelayPlan][]int{}
	for i, j := range claim {
		if !won[i] {
			j.err = e.redelivered(j)
			continue
		}
		groups[plans[i]] = append(groups[plans[i]], i)
	}
	for _, plan := range slices.SortedFunc(func(yield func(DelayPlan) bool) {
		for p := range groups {
			if !yield(p) {
				return
			}
		}
	}, func(a, b DelayPlan) int { return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.Delay, b.Delay)) }) {
		idx := groups[plan]
		msgs := make([]TimeoutMsg, len(idx))
		for k, i := range idx {
			j := claim[i]
			msgs[k] = timeoutMsg(j.ctx, j.msg.OrderNo, j.msg.Hop+1, plan, j.now)
		}
		err := e.sendClaimed(ctx, msgs, plan)
		for _, i := range idx {
			j := claim[i]
			if j.err = err; err == nil {
				e.fired(j, OutcomeRearmed, map[string]any{
					"remaining_ms": j.order.ExpireAt.Sub(j.now).Milliseconds(), "next_level": plan.Level})
			}
		}
	}
}

// firstHops follows the commit of new orders (a placement batch, a
// hand-off's offers): on a TxQueue their first timeout messages committed
// with them; otherwise they go out now, one message for all that share a
// delay plan. A failed send fails no order: the expiry sweep ends them
// when they expire.
func (e *Engine) firstHops(ctx context.Context, ps []placement) {
	groups := map[DelayPlan][]TimeoutMsg{}
	for _, p := range ps {
		groups[p.firstHop] = append(groups[p.firstHop], timeoutMsg(p.ctx, p.o.OrderNo, 1, p.firstHop, p.now))
	}
	ctx = context.WithoutCancel(ctx)
	for plan, msgs := range groups {
		if e.outbox != nil { // one multi-row INSERT in the batch's transaction
			e.metrics.TimeoutSends.Inc()
			e.metrics.RearmHops.WithLabelValues(fmt.Sprint(plan.Level)).Add(float64(len(msgs)))
			continue
		}
		_ = e.send(ctx, msgs, plan) // a failure is logged and on the orders' timelines
	}
}
