package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
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

// Errors of New that name a setting to fix, so the caller can say which.
var (
	// ErrNameServers: no name server answered.
	ErrNameServers = errors.New("no rocketmq name server answered")
	// ErrUnknownCluster: the name servers know no cluster of that name (or
	// none of its brokers has a master registered).
	ErrUnknownCluster = errors.New("rocketmq cluster not found")
	// ErrTopicMissing: a topic does not exist and NoCreateTopics is set.
	ErrTopicMissing = errors.New("rocketmq topic does not exist")
)

// topicQueues is the queue count per master broker of a topic New creates:
// the most consumer instances that can share the timeout load.
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
	// dlq reads %DLQ%<group> when OnDeadLetter is set.
	dlq      rmq.PushConsumer
	inflight sync.WaitGroup // handler calls; Close waits so their re-arm Sends still work
	// consumerStopped is closed once Close has shut the consumer down:
	// deliveries that arrived while it was closing are held until then.
	consumerStopped chan struct{}

	// lastErrors keeps the error of each message's failed last attempt
	// until its dead letter is read back from the DLQ topic.
	lastErrors lastErrors

	// Test hooks, nil outside tests: a message reaching the consumer
	// callback, and Close after it stopped handler calls but before it
	// stops the consumer.
	onDeliver func(*primitive.MessageExt)
	onClosing func()
}

var _ core.DelayQueue = (*Queue)(nil)

// New connects to the name servers, makes sure the topic exists on every
// master of the cluster and starts the producer. Consume starts the
// consumer separately, so a process that only places orders never joins
// the consumer group.
func New(ctx context.Context, cfg Config) (*Queue, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// rlog is process-global and logs at info level to stderr by default.
	// SetLogLevel is an atomic store and idempotent, so every New may call it
	// (no sync.Once needed); SetLogger is not safe while clients run.
	rlog.SetLogLevel("error")

	opts := []admin.AdminOption{admin.WithResolver(primitive.NewPassthroughResolver(cfg.NameServers))}
	if !cfg.Credentials.IsEmpty() {
		opts = append(opts, admin.WithCredentials(cfg.Credentials))
	}
	adm, err := admin.NewAdmin(opts...)
	if err != nil {
		return nil, fmt.Errorf("rocketmq admin for %s: %w", cfg.nameServerList(), err)
	}
	q := &Queue{cfg: cfg, log: cfg.Logger, admin: adm, consumerStopped: make(chan struct{})}
	if err := q.ensureTopic(ctx, cfg.Topic, topicQueues); err != nil {
		_ = adm.Close()
		return nil, err
	}

	popts := []producer.Option{
		producer.WithNameServer(cfg.NameServers), // else the client asks an outside HTTP host
		producer.WithGroupName(cfg.ProducerGroup),
		producer.WithInstanceName(cfg.InstanceName),
		// The library's retries (3) pick another broker each time: with a
		// master down, a send still lands on the topic's other masters.
		producer.WithSendMsgTimeout(cfg.SendTimeout),
	}
	if !cfg.Credentials.IsEmpty() {
		popts = append(popts, producer.WithCredentials(cfg.Credentials))
	}
	p, err := producer.NewDefaultProducer(popts...)
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

// ensureTopic makes topic exist on every master broker of the cluster,
// creating it where it is missing (a topic on one master of two has half
// the capacity and dies with that broker). With NoCreateTopics it only
// checks that the topic exists. admin.CreateTopic ignores the broker's
// answer, so success is judged by the route listing the broker.
func (q *Queue) ensureTopic(ctx context.Context, topic string, queues int) error {
	ctx, cancel := context.WithTimeout(ctx, topicWait)
	defer cancel()
	have, err := q.routeBrokers(ctx, topic)
	if err != nil {
		return err
	}
	if q.cfg.NoCreateTopics {
		if len(have) == 0 {
			return fmt.Errorf("%w: %s (topic creation is off); create it with: mqadmin updateTopic -n '%s' -c %s -t %s -r %d -w %d",
				ErrTopicMissing, topic, q.cfg.nameServerList(), q.cfg.Cluster, topic, queues, queues)
		}
		return nil
	}
	ci, err := brokerClusterInfo(ctx, q.cfg.NameServers)
	if err != nil {
		return fmt.Errorf("%w: %s: cluster info: %v", ErrNameServers, q.cfg.nameServerList(), err)
	}
	masters := ci.masters(q.cfg.Cluster)
	if len(masters) == 0 {
		return fmt.Errorf("%w: %q has no master broker registered with %s (clusters there: %v)",
			ErrUnknownCluster, q.cfg.Cluster, q.cfg.nameServerList(), ci.clusters())
	}
	var missing []string
	for name := range masters {
		if !have[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	var createErrs []error
	for _, name := range missing {
		err := q.admin.CreateTopic(ctx,
			admin.WithTopicCreate(topic),
			admin.WithBrokerAddrCreate(masters[name]),
			admin.WithReadQueueNums(queues),
			admin.WithWriteQueueNums(queues))
		if err != nil {
			createErrs = append(createErrs, fmt.Errorf("broker %s (%s): %w", name, masters[name], err))
		}
	}
	// The brokers register the new topic with the name servers right away;
	// polling covers the round trip.
	for {
		if have, err = q.routeBrokers(ctx, topic); err != nil {
			return err
		}
		var still []string
		for _, name := range missing {
			if !have[name] {
				still = append(still, name)
			}
		}
		if len(still) == 0 {
			q.log.Info("rocketmq topic created", "topic", topic, "cluster", q.cfg.Cluster, "brokers", missing)
			return nil
		}
		select {
		case <-time.After(100 * time.Millisecond):
			continue
		case <-ctx.Done():
		}
		if len(have) == 0 {
			return fmt.Errorf("rocketmq create topic %s in cluster %s: no broker lists it: %w",
				topic, q.cfg.Cluster, joinLine(append(createErrs, ctx.Err())...))
		}
		// A master that is down keeps its name-server entry for a while: the
		// topic works on the others, and the next start creates it there.
		q.log.Warn("rocketmq topic missing on some masters of the cluster", "topic", topic,
			"cluster", q.cfg.Cluster, "brokers", still, "err", joinLine(createErrs...))
		return nil
	}
}

// routeBrokers returns the names of the brokers that hold topic (none when
// the topic does not exist).
func (q *Queue) routeBrokers(ctx context.Context, topic string) (map[string]bool, error) {
	r, err := topicRoute(ctx, q.cfg.NameServers, topic)
	if errors.Is(err, errNoRoute) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: route of topic %s: %v", ErrNameServers, q.cfg.nameServerList(), topic, err)
	}
	have := map[string]bool{}
	for name, addrs := range r.Brokers {
		if addrs[masterID] != "" {
			have[name] = true
		}
	}
	return have, nil
}

// Send schedules msgs as one message: after the broker's delay level when
// level > 0, after exactly delay (a RocketMQ 5 timer message) when level ==
// 0. A message of one order carries its number as the message key (and its
// hop and trace id as properties), for lookups in the broker's tools; a
// batch carries none, as the broker indexes every key it is given.
func (q *Queue) Send(ctx context.Context, msgs []core.TimeoutMsg, level int, delay time.Duration) error {
	if len(msgs) == 0 {
		return nil
	}
	first := msgs[0]
	if q.closed.Load() {
		return ErrClosed
	}
	if level < 0 {
		return fmt.Errorf("rocketmq send %s hop %d: delay level %d is negative", first.OrderNo, first.Hop, level)
	}
	body, err := encodeBody(msgs)
	if err != nil {
		return fmt.Errorf("rocketmq send %s hop %d: encode: %w", first.OrderNo, first.Hop, err)
	}
	m := primitive.NewMessage(q.cfg.Topic, body)
	if len(msgs) == 1 {
		m.WithKeys([]string{first.OrderNo})
		m.WithProperty(PropTraceID, first.TraceID)
		m.WithProperty(PropHop, strconv.Itoa(first.Hop))
	}
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
		return fmt.Errorf("rocketmq send %s hop %d (%d orders) to %s: %w", first.OrderNo, first.Hop, len(msgs), q.cfg.Topic, err)
	}
	if res.Status != primitive.SendOK {
		// Flush or replica timeouts: the broker may still deliver it, but the
		// caller must not count on it.
		return fmt.Errorf("rocketmq send %s hop %d (%d orders) to %s: not OK: %s", first.OrderNo, first.Hop, len(msgs), q.cfg.Topic, res)
	}
	q.log.Debug("timeout message sent", "order_no", first.OrderNo, "hop", first.Hop, "orders", len(msgs), "level", level,
		"delay", delay, "msg_id", res.MsgID, "trace_id", first.TraceID)
	return nil
}

// Ping checks that a name server answers and still routes the topic to a
// master.
func (q *Queue) Ping(ctx context.Context) error {
	if q.closed.Load() {
		return ErrClosed
	}
	have, err := q.routeBrokers(ctx, q.cfg.Topic)
	if err == nil && len(have) == 0 {
		err = fmt.Errorf("topic %s has no master broker", q.cfg.Topic)
	}
	if err != nil {
		return fmt.Errorf("rocketmq ping: %w", err)
	}
	return nil
}

// Close stops handler calls, waits for the running ones while the
// consumer still runs (their acks count, and their re-arm Sends still need
// the producer), then stops the consumer and the producer. A message
// delivered once Close began is neither handled nor sent back: it is read
// again from its committed offset, without counting a failed attempt.
// Later calls return nil.
func (q *Queue) Close() error {
	q.mu.Lock()
	if q.closing {
		q.mu.Unlock()
		return nil
	}
	q.closing = true
	c, dlq := q.consumer, q.dlq
	q.mu.Unlock()
	if q.onClosing != nil {
		q.onClosing()
	}
	q.inflight.Wait()

	var errs []error
	if c != nil {
		if err := c.Shutdown(); err != nil {
			errs = append(errs, fmt.Errorf("rocketmq consumer %s shutdown: %w", q.cfg.Group, err))
		}
	}
	close(q.consumerStopped)
	if dlq != nil {
		if err := dlq.Shutdown(); err != nil {
			errs = append(errs, fmt.Errorf("rocketmq consumer %s shutdown: %w", q.dlqGroup(), err))
		}
	}

	q.closed.Store(true)
	if err := q.producer.Shutdown(); err != nil {
		errs = append(errs, fmt.Errorf("rocketmq producer %s shutdown: %w", q.cfg.ProducerGroup, err))
	}
	if err := q.admin.Close(); err != nil {
		errs = append(errs, fmt.Errorf("rocketmq admin close: %w", err))
	}
	return errors.Join(errs...)
}
