package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"seatflow/core"
)

// retryTopicPrefix + group names the topic the broker redelivers a group's
// failed messages through (the library keeps its constant internal).
const retryTopicPrefix = "%RETRY%"

// maxLoggedBody caps how much of a malformed body goes into the log.
const maxLoggedBody = 256

// ensureRetryTopic creates the group's retry topic where it is missing.
// The broker creates it on the first failed message, and a running consumer
// learns new routes only every 30 s, so the first retry would come up to
// 30 s late; creating it up front avoids that.
func (q *Queue) ensureRetryTopic(ctx context.Context) error {
	return q.ensureTopic(ctx, retryTopicPrefix+q.cfg.Group, 1)
}

// Consume joins the consumer group and delivers due messages to h until
// Close. ctx bounds nothing after Consume returns; its values (not its
// cancellation) reach every handler call.
func (q *Queue) Consume(ctx context.Context, h core.TimeoutHandler) error {
	if h == nil {
		return errors.New("rocketmq consume: nil handler")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("rocketmq consume %s: %w", q.cfg.Group, err)
	}
	if q.closed.Load() {
		return ErrClosed
	}
	if err := q.ensureRetryTopic(ctx); err != nil {
		return fmt.Errorf("rocketmq consume %s: %w", q.cfg.Group, err)
	}

	// Held through Start so that Close cannot miss a consumer being started.
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closing {
		return ErrClosed
	}
	if q.consumer != nil {
		return fmt.Errorf("rocketmq consume %s: already consuming", q.cfg.Group)
	}
	// Where a group starts a queue it has no committed offset for. Delayed
	// and timer messages are appended to the topic when due, not when sent.
	// Starting at the end would skip every message that landed before the
	// group's first rebalance (all of them, on a first deploy after an
	// outage), and the first offset would replay the topic's whole
	// retention; a store-time lookback replays one bounded window, which
	// the idempotent handler absorbs. A group with an offset resumes there.
	copts := []consumer.Option{
		consumer.WithNameServer(q.cfg.NameServers), // else the client asks an outside HTTP host
		consumer.WithGroupName(q.cfg.Group),
		consumer.WithInstance(q.cfg.InstanceName),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromTimestamp),
		consumer.WithConsumeTimestamp(consumeTimestamp(time.Now(), q.cfg.NewGroupLookback)),
		consumer.WithConsumeMessageBatchMaxSize(1), // one ack per message
		// The broker moves the message to %DLQ%<group> after this many retries.
		consumer.WithMaxReconsumeTimes(int32(q.cfg.MaxAttempts - 1)),
	}
	if q.cfg.Workers > 0 {
		copts = append(copts, consumer.WithConsumeGoroutineNums(q.cfg.Workers))
	}
	if !q.cfg.Credentials.IsEmpty() {
		copts = append(copts, consumer.WithCredentials(q.cfg.Credentials))
	}
	c, err := consumer.NewPushConsumer(copts...)
	if err != nil {
		return fmt.Errorf("rocketmq consumer %s: %w", q.cfg.Group, err)
	}
	base := context.WithoutCancel(ctx)
	err = c.Subscribe(q.cfg.Topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			return q.deliver(base, h, msgs), nil
		})
	if err != nil {
		return fmt.Errorf("rocketmq consumer %s subscribe %s: %w", q.cfg.Group, q.cfg.Topic, err)
	}
	// No Shutdown on failure: Start cleans up after itself, and Shutdown on
	// a consumer that never started panics inside the library.
	if err := c.Start(); err != nil {
		return fmt.Errorf("rocketmq consumer %s start on %s: %w", q.cfg.Group, q.cfg.Topic, err)
	}
	q.consumer = c
	if q.cfg.OnDeadLetter != nil {
		if q.dlq, err = q.consumeDeadLetters(ctx, base); err != nil {
			return err // Close shuts the main consumer down
		}
	}
	return nil
}

// consumeTimestamp is where a new group starts, in the layout the library
// parses (as UTC).
func consumeTimestamp(now time.Time, lookback time.Duration) string {
	return now.Add(-lookback).UTC().Format("20060102150405")
}

// deliver is the consumer callback: ack the batch only if every message is
// done with, so a failed one comes back after the broker's retry back-off.
func (q *Queue) deliver(base context.Context, h core.TimeoutHandler, msgs []*primitive.MessageExt) consumer.ConsumeResult {
	result := consumer.ConsumeSuccess
	for _, m := range msgs {
		if q.onDeliver != nil {
			q.onDeliver(m)
		}
		if !q.handle(base, h, m) {
			result = consumer.ConsumeRetryLater
		}
	}
	return result
}

// handle decodes one message and runs h on its timeouts; it reports
// whether the message may be acked. When some of a batch's timeouts fail
// and others do not, the failed ones are sent again, each as a message of
// its own, and the batch is acked: a poison order then fails its own
// retries into the dead-letter topic, alone, while its neighbours are done
// with. Only a batch whose every timeout failed (a database out of reach)
// goes back to the broker whole.
func (q *Queue) handle(base context.Context, h core.TimeoutHandler, m *primitive.MessageExt) bool {
	msgs, err := decodeBody(m.Body)
	if err != nil {
		// Redelivery cannot repair a body: ack it rather than retry forever.
		body := m.Body[:min(len(m.Body), maxLoggedBody)]
		q.log.Error("malformed timeout message dropped", "msg_id", m.MsgId,
			"keys", m.GetProperty(primitive.PropertyKeys), "body", string(body), "err", err)
		return true
	}
	if len(msgs) == 1 && msgs[0].TraceID == "" {
		msgs[0].TraceID = m.GetProperty(PropTraceID)
	}

	q.mu.Lock()
	if q.closing {
		q.mu.Unlock()
		// Not run. Retry-later now would send the message back as a failed
		// attempt (one restart too many moves a healthy message to the DLQ);
		// once the consumer has stopped, the library drops the result, so
		// the message stays unacked at its offset and is simply read again.
		<-q.consumerStopped
		return false
	}
	q.inflight.Add(1)
	q.mu.Unlock()
	defer q.inflight.Done()

	ctx, cancel := context.WithTimeout(base, q.cfg.HandleTimeout)
	defer cancel()
	if len(msgs) == 1 {
		ctx = core.WithTraceID(ctx, msgs[0].TraceID)
	}
	start := time.Now()
	errs := h.Call(ctx, msgs)
	var failed []core.TimeoutMsg
	var failErrs []error
	for i, err := range errs {
		if err != nil {
			failed, failErrs = append(failed, msgs[i]), append(failErrs, err)
		}
	}
	if q.cfg.OnConsumed != nil {
		q.cfg.OnConsumed(time.Since(start), errors.Join(failErrs...))
	}
	switch {
	case len(failed) == 0:
		return true
	case len(failed) < len(msgs):
		return q.splitOff(ctx, failed, failErrs)
	}
	first := msgs[0]
	err = failErrs[0]
	if int(m.ReconsumeTimes) >= q.cfg.MaxAttempts-1 {
		q.lastErrors.put(originID(m), err.Error())
		q.log.Error("timeout handler failed its last attempt; the broker moves the message to the dead-letter topic",
			"order_no", first.OrderNo, "hop", first.Hop, "orders", len(msgs), "trace_id", first.TraceID,
			"attempts", m.ReconsumeTimes+1, "topic", dlqTopicPrefix+q.cfg.Group, "err", err)
		return false
	}
	q.log.Warn("timeout handler failed; message will be redelivered", "order_no", first.OrderNo,
		"hop", first.Hop, "orders", len(msgs), "trace_id", first.TraceID, "reconsume", m.ReconsumeTimes, "err", err)
	return false
}

// splitOff sends each failed timeout of a batch again as a message of its
// own, due at once; it reports whether all went out (else the whole batch
// comes back, and its done timeouts find nothing left to do).
func (q *Queue) splitOff(ctx context.Context, failed []core.TimeoutMsg, errs []error) bool {
	for i, msg := range failed {
		q.log.Warn("timeout handler failed for one order of a batch; it is retried alone", "order_no", msg.OrderNo,
			"hop", msg.Hop, "trace_id", msg.TraceID, "err", errs[i])
		if err := q.Send(context.WithoutCancel(ctx), []core.TimeoutMsg{msg}, 0, 0); err != nil {
			q.log.Error("sending a failed order of a batch on its own failed; the batch will be redelivered",
				"order_no", msg.OrderNo, "hop", msg.Hop, "err", err)
			return false
		}
	}
	return true
}
