package rocketmq

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"seatflow/core"
)

// dlqTopicPrefix + group names the topic the broker moves a group's
// messages to once they failed MaxReconsumeTimes retries.
const dlqTopicPrefix = "%DLQ%"

// maxLastErrors bounds the errors kept for dead letters not yet read back:
// past it a dead letter is stored without its error, not memory lost.
const maxLastErrors = 1024

// dlqGroup reads the dead-letter topic; a group of its own, so its offsets
// and retries never mix with the timeout group's.
func (q *Queue) dlqGroup() string { return q.cfg.Group + "-dlq" }

// consumeDeadLetters starts the consumer of %DLQ%<group>. Both topics it
// needs are created first: the broker creates the DLQ topic only with the
// first dead letter, and a push consumer cannot start on a missing topic.
// A new group starts at the first offset: every dead letter still in the
// topic is recorded (OnDeadLetter dedups by MsgKey).
func (q *Queue) consumeDeadLetters(ctx context.Context, base context.Context) (rmq.PushConsumer, error) {
	topic, group := dlqTopicPrefix+q.cfg.Group, q.dlqGroup()
	for _, t := range []string{topic, retryTopicPrefix + group} {
		if err := q.ensureTopic(ctx, t, 1); err != nil {
			return nil, fmt.Errorf("rocketmq dead letters of %s: %w", q.cfg.Group, err)
		}
	}
	opts := []consumer.Option{
		consumer.WithNameServer(q.cfg.NameServers),
		consumer.WithGroupName(group),
		// A client of its own: on the timeout consumer's shared client, a
		// rebalance the broker asks of that client reads this consumer's
		// fields while its Start still writes them (a data race in the
		// library, seen under -race).
		consumer.WithInstance(q.cfg.InstanceName + "-dlq"),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumeMessageBatchMaxSize(1),
	}
	if !q.cfg.Credentials.IsEmpty() {
		opts = append(opts, consumer.WithCredentials(q.cfg.Credentials))
	}
	c, err := consumer.NewPushConsumer(opts...)
	if err != nil {
		return nil, fmt.Errorf("rocketmq consumer %s: %w", group, err)
	}
	err = c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range msgs {
				for _, d := range q.deadLetters(m) {
					if err := q.cfg.OnDeadLetter(base, d); err != nil {
						q.log.Error("recording a dead letter failed; it is read again later", "topic", topic,
							"msg_id", m.MsgId, "order_no", d.Msg.OrderNo, "err", err)
						return consumer.ConsumeRetryLater, nil
					}
				}
			}
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		return nil, fmt.Errorf("rocketmq consumer %s subscribe %s: %w", group, topic, err)
	}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("rocketmq consumer %s start on %s: %w", group, topic, err)
	}
	return c, nil
}

// deadLetters are the dead letters of one DLQ message, one per order, each
// with its own timeout as the payload, so each is retried alone. A message
// of one order is stored under the message's id, each order of a batch
// (every one of whose timeouts failed every attempt) under the message's
// id and its order number. A body that is not a timeout message is stored
// as delivered, with the order number of the message's keys.
func (q *Queue) deadLetters(m *primitive.MessageExt) []core.DeadLetter {
	msgs, bodyErr := decodeBody(m.Body)
	if bodyErr != nil {
		msgs = []core.TimeoutMsg{{OrderNo: m.GetProperty(primitive.PropertyKeys), TraceID: m.GetProperty(PropTraceID)}}
	}
	at := time.Now()
	if m.StoreTimestamp > 0 {
		at = time.UnixMilli(m.StoreTimestamp)
	}
	// The broker counts the move to the DLQ as one more reconsume.
	attempts := max(int(m.ReconsumeTimes), 1)
	key := originID(m)
	lastErr := q.lastErrors.take(key)
	out := make([]core.DeadLetter, len(msgs))
	for i, msg := range msgs {
		out[i] = core.NewDeadLetter(core.DeadLetterRocketMQ, msg, attempts, lastErr, at.UTC())
		out[i].MsgKey = key + "/" + msg.OrderNo
	}
	if len(msgs) == 1 {
		out[0].MsgKey = key
	}
	if bodyErr != nil {
		out[0].Payload = strings.ToValidUTF8(string(m.Body[:min(len(m.Body), core.MaxDeadLetterPayload)]), "?")
	}
	return out
}

// originID names a message across its retries and its dead letter: the
// broker copies the first delivery's store (offset) id into
// ORIGIN_MESSAGE_ID when it sends the message back.
func originID(m *primitive.MessageExt) string {
	if id := m.GetProperty(primitive.PropertyOriginMessageId); id != "" {
		return id
	}
	if m.OffsetMsgId != "" {
		return m.OffsetMsgId
	}
	return m.MsgId
}

// lastErrors maps a message's origin id to its last handler error, within
// this process (another instance's dead letters are stored without one).
type lastErrors struct {
	mu sync.Mutex
	m  map[string]string
}

func (l *lastErrors) put(id, err string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]string{}
	}
	if len(l.m) < maxLastErrors {
		l.m[id] = err
	}
}

func (l *lastErrors) take(id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.m[id]
	delete(l.m, id)
	return err
}
