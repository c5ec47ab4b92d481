package rocketmq

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"seatflow/core"
)

// Defaults for the zero values of Config.
const (
	DefaultTopic         = "SEATFLOW_TIMEOUT"
	DefaultGroup         = "seatflow-timeout"
	DefaultCluster       = "DefaultCluster"
	DefaultSendTimeout   = 3 * time.Second
	DefaultHandleTimeout = 30 * time.Second
	// DefaultNewGroupLookback covers the longest hold (core.DefaultMaxHold):
	// a message that landed earlier concerns an order that reconcile has
	// ended already.
	DefaultNewGroupLookback = 2 * time.Hour
)

// Config says where the queue lives. Only NameServers is required.
type Config struct {
	NameServers []string // host:port of every name server, e.g. "10.0.0.1:9876"
	// Credentials are the ACL access and secret key, passed to the producer,
	// the consumer and the admin client; empty when the cluster has no ACL.
	Credentials primitive.Credentials
	// Cluster names the broker cluster whose every master gets the topics
	// when they are missing. Default DefaultCluster.
	Cluster string
	// NoCreateTopics is for clusters where operators create topics: a
	// missing topic is then an ErrTopicMissing instead of being created.
	NoCreateTopics bool
	Topic          string // default DefaultTopic
	Group          string // consumer group, default DefaultGroup
	ProducerGroup  string // default Group + "-producer"
	// InstanceName names this process's client. The library shares one
	// client per IP@instance, so two queues in one process (or one test
	// binary) must not share it; default: unique per Queue.
	InstanceName string
	// NewGroupLookback is how far back a group with no committed offset
	// starts reading (by store time), so a brand-new group does not skip
	// messages that landed before its first rebalance. Messages enter the
	// topic when due, so this replays at most the timeouts of that window,
	// and handling one again changes nothing. Default DefaultNewGroupLookback.
	NewGroupLookback time.Duration
	SendTimeout      time.Duration // per Send, default DefaultSendTimeout
	HandleTimeout    time.Duration // per handler call, default DefaultHandleTimeout
	Logger           *slog.Logger  // default slog.Default()
	// OnConsumed, if set, observes every handler call: how long it took and
	// what it returned (for a consume-latency metric).
	OnConsumed func(d time.Duration, err error)
	// MaxAttempts is how many handler calls one message gets before the
	// broker moves it to the group's dead-letter topic %DLQ%<Group> (the
	// consumer's MaxReconsumeTimes is MaxAttempts-1). Default
	// core.DefaultTimeoutMaxAttempts.
	MaxAttempts int
	// Workers is how many messages the consumer hands to the handler at
	// once (the client's ConsumeGoroutineNums). Default 20, the client's.
	Workers int
	// OnDeadLetter, if set, receives every message of %DLQ%<Group>, read by
	// Consume through the group <Group>-dlq; an error redelivers it. It must
	// be idempotent (DeadLetter.MsgKey names the message).
	OnDeadLetter func(ctx context.Context, d core.DeadLetter) error
}

// ParseURL reads rocketmq://[accessKey:secretKey@]host:port[,host:port...]
// into a Config holding the name servers and the credentials; the caller
// sets the rest.
func ParseURL(u string) (Config, error) {
	rest, ok := strings.CutPrefix(u, "rocketmq://")
	if !ok {
		return Config{}, fmt.Errorf("scheme must be rocketmq://")
	}
	var cfg Config
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user, err := url.Parse("rocketmq://" + rest[:at+1] + "h")
		if err != nil || user.User == nil {
			return Config{}, fmt.Errorf("credentials: want accessKey:secretKey@ (percent-encode special characters)")
		}
		secret, hasSecret := user.User.Password()
		if user.User.Username() == "" || !hasSecret || secret == "" {
			return Config{}, fmt.Errorf("credentials: want accessKey:secretKey@, both non-empty")
		}
		cfg.Credentials = primitive.Credentials{AccessKey: user.User.Username(), SecretKey: secret}
		rest = rest[at+1:]
	}
	rest = strings.TrimSuffix(rest, "/")
	if strings.ContainsAny(rest, "/?#") {
		return Config{}, fmt.Errorf("no path, query or fragment allowed")
	}
	for _, addr := range strings.Split(rest, ",") {
		if err := checkHostPort(addr); err != nil {
			return Config{}, err
		}
		cfg.NameServers = append(cfg.NameServers, addr)
	}
	return cfg, nil
}

func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("name server %q: want host:port", addr)
	}
	return nil
}

// withDefaults fills the zero values and rejects what cannot work.
func (c Config) withDefaults() (Config, error) {
	if len(c.NameServers) == 0 {
		return c, fmt.Errorf("rocketmq: no name server")
	}
	for _, ns := range c.NameServers {
		if err := checkHostPort(ns); err != nil {
			return c, fmt.Errorf("rocketmq: %w", err)
		}
	}
	if c.Cluster == "" {
		c.Cluster = DefaultCluster
	}
	if c.Topic == "" {
		c.Topic = DefaultTopic
	}
	if c.Group == "" {
		c.Group = DefaultGroup
	}
	if c.ProducerGroup == "" {
		c.ProducerGroup = c.Group + "-producer"
	}
	if c.InstanceName == "" {
		c.InstanceName = uniqueInstanceName()
	}
	if c.NewGroupLookback <= 0 {
		c.NewGroupLookback = DefaultNewGroupLookback
	}
	if c.SendTimeout <= 0 {
		c.SendTimeout = DefaultSendTimeout
	}
	if c.HandleTimeout <= 0 {
		c.HandleTimeout = DefaultHandleTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxAttempts < 0 || c.MaxAttempts > math.MaxInt32 {
		return c, fmt.Errorf("rocketmq: MaxAttempts %d: want 1 or more", c.MaxAttempts)
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = core.DefaultTimeoutMaxAttempts
	}
	return c, nil
}

// nameServerList is how mqadmin and the logs write the name servers.
func (c Config) nameServerList() string { return strings.Join(c.NameServers, ";") }

func uniqueInstanceName() string {
	return fmt.Sprintf("seatflow-%d-%s", os.Getpid(), rand.Text()[:10])
}
