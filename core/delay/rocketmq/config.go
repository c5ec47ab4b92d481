package rocketmq

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
)

// Defaults for the zero values of Config.
const (
	DefaultTopic         = "SEATFLOW_TIMEOUT"
	DefaultGroup         = "seatflow-timeout"
	DefaultBrokerAddr    = "127.0.0.1:10911"
	DefaultSendTimeout   = 3 * time.Second
	DefaultHandleTimeout = 30 * time.Second
)

// Config says where the queue lives. Only NameServer is required.
type Config struct {
	NameServer    string // host:port, e.g. "127.0.0.1:9876"
	Topic         string // default DefaultTopic
	Group         string // consumer group, default DefaultGroup
	ProducerGroup string // default Group + "-producer"
	// InstanceName names this process's client. The library shares one
	// client per IP@instance, so two queues in one process (or one test
	// binary) must not share it; default: unique per Queue.
	InstanceName string
	// BrokerAddr is where New creates the topic when the name server has no
	// route for it; unused when the topic exists. Default DefaultBrokerAddr.
	BrokerAddr string
	// FromFirstOffset makes a group start a queue it has no committed offset
	// for at the queue's first message instead of its end. Use it only on a
	// fresh topic (tests): on an old one a new group would replay every
	// retained message (3 days by default). See Consume.
	FromFirstOffset bool
	SendTimeout     time.Duration // per Send, default DefaultSendTimeout
	HandleTimeout   time.Duration // per handler call, default DefaultHandleTimeout
	Logger          *slog.Logger  // default slog.Default()
	// OnConsumed, if set, observes every handler call: how long it took and
	// what it returned (for a consume-latency metric).
	OnConsumed func(d time.Duration, err error)
}

// ParseURL returns the name server address of a rocketmq://host:port URL.
func ParseURL(u string) (nameServer string, err error) {
	if !strings.HasPrefix(u, "rocketmq://") {
		return "", fmt.Errorf("rocketmq url %q: scheme must be rocketmq://", u)
	}
	p, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("rocketmq url %q: %w", u, err)
	}
	if p.User != nil || (p.Path != "" && p.Path != "/") || p.RawQuery != "" || p.Fragment != "" {
		return "", fmt.Errorf("rocketmq url %q: want only rocketmq://host:port", u)
	}
	if err := checkHostPort(p.Host); err != nil {
		return "", fmt.Errorf("rocketmq url %q: %w", u, err)
	}
	return p.Host, nil
}

func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: want host:port", addr)
	}
	if host == "" || port == "" {
		return fmt.Errorf("address %q: want host:port", addr)
	}
	return nil
}

// withDefaults fills the zero values and rejects what cannot work.
func (c Config) withDefaults() (Config, error) {
	if err := checkHostPort(c.NameServer); err != nil {
		return c, fmt.Errorf("rocketmq name server: %w", err)
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
	if c.BrokerAddr == "" {
		c.BrokerAddr = DefaultBrokerAddr
	}
	if err := checkHostPort(c.BrokerAddr); err != nil {
		return c, fmt.Errorf("rocketmq broker: %w", err)
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
	return c, nil
}

func uniqueInstanceName() string {
	return fmt.Sprintf("seatflow-%d-%s", os.Getpid(), rand.Text()[:10])
}
