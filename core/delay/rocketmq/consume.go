package rocketmq

import (
	"context"
	"encoding/json"
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

// handle decodes one message and runs h on it; it reports whether the
// message may be acked.
func (q *Queue) handle(base context.Context, h core.TimeoutHandler, m *primitive.MessageExt) bool {
	var msg core.TimeoutMsg
	err := json.Unmarshal(m.Body, &msg)
	if err == nil && msg.OrderNo == "" {
		err = errors.New("no order_no")
	}
	if err != nil {
		// Redelivery cannot repair a body: ack it rather than retry forever.
		body := m.Body[:min(len(m.Body), maxLoggedBody)]
		q.log.Error("malformed timeout message dropped", "msg_id", m.MsgId,
			"keys", m.GetProperty(primitive.PropertyKeys), "body", string(body), "err", err)
		return true
	}
	if msg.TraceID == "" {
		msg.TraceID = m.GetProperty(PropTraceID)
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

	ctx, cancel := context.WithTimeout(core.WithTraceID(base, msg.TraceID), q.cfg.HandleTimeout)
	defer cancel()
	start := time.Now()
	err = callHandler(ctx, h, msg)
	if q.cfg.OnConsumed != nil {
		q.cfg.OnConsumed(time.Since(start), err)
	}
	if err != nil {
		if int(m.ReconsumeTimes) >= q.cfg.MaxAttempts-1 {
			q.lastErrors.put(originID(m), err.Error())
			q.log.Error("timeout handler failed its last attempt; the broker moves the message to the dead-letter topic",
				"order_no", msg.OrderNo, "hop", msg.Hop, "trace_id", msg.TraceID, "attempts", m.ReconsumeTimes+1,
				"topic", dlqTopicPrefix+q.cfg.Group, "err", err)
			return false
		}
		q.log.Warn("timeout handler failed; message will be redelivered", "order_no", msg.OrderNo,
			"hop", msg.Hop, "trace_id", msg.TraceID, "reconsume", m.ReconsumeTimes, "err", err)
		return false
	}
	return true
}

// callHandler turns a panic into an error: a panic escaping the callback
// leaves the message neither acked nor sent back, stalling its queue.
func callHandler(ctx context.Context, h core.TimeoutHandler, msg core.TimeoutMsg) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("timeout handler panic: %v", r)
		}
	}()
	return h(ctx, msg)
}
