package rocketmq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	rmqerrors "github.com/apache/rocketmq-client-go/v2/errors"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"seatflow/core"
)

// Message properties set besides the JSON body, so that broker tools and the
// console can read a message's trace and hop without decoding it.
const (
	PropTraceID = "trace_id"
	PropHop     = "hop"
)

// ErrClosed is returned by calls on a closed Queue.
var ErrClosed = errors.New("rocketmq delay queue is closed")

// topicQueues is the queue count of a topic New creates: the most consumer
// instances that can share the timeout load.
const topicQueues = 8

// topicWait bounds how long New waits for a created topic's route when ctx
// has no deadline of its own.
const topicWait = 15 * time.Second

// Queue is a core.DelayQueue on one RocketMQ topic.
type Queue struct {
	cfg      Config
	log      *slog.Logger
	admin    admin.Admin
	producer rmq.Producer

	// closed is set once the producer is stopping: Send and Ping read it
	// without mu, so they never wait for a Consume that is starting.
	closed atomic.Bool

	mu       sync.Mutex
	closing  bool // Close started: no new handler calls, no Consume
	consumer rmq.PushConsumer
	inflight sync.WaitGroup // handler calls; Close waits so their re-arm Sends still work
}

var _ core.DelayQueue = (*Queue)(nil)

// New connects to the name server, makes sure the topic exists and starts
// the producer. Consume starts the consumer separately, so a process that
// only places orders never joins the consumer group.
func New(ctx context.Context, cfg Config) (*Queue, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// rlog is process-global and logs at info level to stderr by default.
	// SetLogLevel is an atomic store and idempotent, so every New may call it
	// (no sync.Once needed); SetLogger is not safe while clients run.
	rlog.SetLogLevel("error")

	nameServers := []string{cfg.NameServer}
	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver(nameServers)))
	if err != nil {
		return nil, fmt.Errorf("rocketmq admin for %s: %w", cfg.NameServer, err)
	}
	q := &Queue{cfg: cfg, log: cfg.Logger, admin: adm}
	if err := q.ensureTopic(ctx, cfg.Topic, topicQueues); err != nil {
		_ = adm.Close()
		return nil, err
	}

	p, err := producer.NewDefaultProducer(
		producer.WithNameServer(nameServers), // else the client asks an outside HTTP host
		producer.WithGroupName(cfg.ProducerGroup),
		producer.WithInstanceName(cfg.InstanceName),
		producer.WithSendMsgTimeout(cfg.SendTimeout),
	)
	if err != nil {
		_ = adm.Close()
		return nil, fmt.Errorf("rocketmq producer: %w", err)
	}
	if err := p.Start(); err != nil {
		_ = adm.Close()
		return nil, fmt.Errorf("rocketmq producer %s start: %w", cfg.ProducerGroup, err)
	}
	q.producer = p
	return q, nil
}

// ensureTopic creates topic with the given number of queues when the name
// server has no route for it. admin.CreateTopic ignores the broker's answer,
// so success is judged by the route appearing, and the create is retried
// until it does.
func (q *Queue) ensureTopic(ctx context.Context, topic string, queues int) error {
	err := q.route(ctx, topic)
	if err == nil {
		return nil
	}
	if !errors.Is(err, rmqerrors.ErrTopicNotExist) {
		return fmt.Errorf("rocketmq topic %s route: %w", topic, err)
	}
	ctx, cancel := context.WithTimeout(ctx, topicWait)
	defer cancel()
	for {
		err := q.admin.CreateTopic(ctx,
			admin.WithTopicCreate(topic),
			admin.WithBrokerAddrCreate(q.cfg.BrokerAddr),
			admin.WithReadQueueNums(queues),
			admin.WithWriteQueueNums(queues))
		if err != nil {
			return fmt.Errorf("rocketmq create topic %s on %s: %w", topic, q.cfg.BrokerAddr, err)
		}
		// The broker registers the new topic with the name server right away;
		// a few polls cover the round trip.
		for range 10 {
			if err = q.route(ctx, topic); err == nil {
				q.log.Info("rocketmq topic created", "topic", topic, "broker", q.cfg.BrokerAddr)
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("rocketmq topic %s: no route after create on %s: %w", topic, q.cfg.BrokerAddr, err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// route asks the name server for topic's route. The library call has its
// own 6 s timeout and no ctx, so it runs aside and ctx only stops the wait;
// the goroutine ends by that timeout at the latest.
func (q *Queue) route(ctx context.Context, topic string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		clusters, err := q.admin.FetchClusterList(topic)
		if err == nil && len(clusters) == 0 {
			err = errors.New("route lists no broker")
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Send schedules msg: after the broker's delay level when level > 0, after
// exactly delay (a RocketMQ 5 timer message) when level == 0.
func (q *Queue) Send(ctx context.Context, msg core.TimeoutMsg, level int, delay time.Duration) error {
	if q.closed.Load() {
		return ErrClosed
	}
	if level < 0 {
		return fmt.Errorf("rocketmq send %s hop %d: delay level %d is negative", msg.OrderNo, msg.Hop, level)
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("rocketmq send %s hop %d: encode: %w", msg.OrderNo, msg.Hop, err)
	}
	m := primitive.NewMessage(q.cfg.Topic, body).WithKeys([]string{msg.OrderNo})
	m.WithProperty(PropTraceID, msg.TraceID)
	m.WithProperty(PropHop, strconv.Itoa(msg.Hop))
	switch {
	case level > 0:
		m.WithDelayTimeLevel(level)
	case delay > 0:
		m.WithDelayTimestamp(time.Now().Add(delay))
	}

	ctx, cancel := context.WithTimeout(ctx, q.cfg.SendTimeout)
	defer cancel()
	res, err := q.producer.SendSync(ctx, m)
	if err != nil {
		return fmt.Errorf("rocketmq send %s hop %d to %s: %w", msg.OrderNo, msg.Hop, q.cfg.Topic, err)
	}
	if res.Status != primitive.SendOK {
		// Flush or replica timeouts: the broker may still deliver it, but the
		// caller must not count on it.
		return fmt.Errorf("rocketmq send %s hop %d to %s: not OK: %s", msg.OrderNo, msg.Hop, q.cfg.Topic, res)
	}
	q.log.Debug("timeout message sent", "order_no", msg.OrderNo, "hop", msg.Hop, "level", level,
		"delay", delay, "msg_id", res.MsgID, "trace_id", msg.TraceID)
	return nil
}

// Ping checks that the name server answers and still routes the topic.
func (q *Queue) Ping(ctx context.Context) error {
	if q.closed.Load() {
		return ErrClosed
	}
	if err := q.route(ctx, q.cfg.Topic); err != nil {
		return fmt.Errorf("rocketmq ping %s topic %s: %w", q.cfg.NameServer, q.cfg.Topic, err)
	}
	return nil
}

// Close stops the consumer, waits for running handlers (their re-arm Sends
// still need the producer), then stops the producer. A message whose
// handler finishes after the consumer stopped may be delivered again. Later
// calls return nil.
func (q *Queue) Close() error {
	q.mu.Lock()
	if q.closing {
		q.mu.Unlock()
		return nil
	}
	q.closing = true
	c := q.consumer
	q.mu.Unlock()

	var errs []error
	if c != nil {
		if err := c.Shutdown(); err != nil {
			errs = append(errs, fmt.Errorf("rocketmq consumer %s shutdown: %w", q.cfg.Group, err))
		}
	}
	q.inflight.Wait()

	q.closed.Store(true)
	if err := q.producer.Shutdown(); err != nil {
		errs = append(errs, fmt.Errorf("rocketmq producer %s shutdown: %w", q.cfg.ProducerGroup, err))
	}
	if err := q.admin.Close(); err != nil {
		errs = append(errs, fmt.Errorf("rocketmq admin close: %w", err))
	}
	return errors.Join(errs...)
}
