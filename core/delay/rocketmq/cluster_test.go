package rocketmq

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"seatflow/core/testenv"
)

// testConfig is a fresh topic, group and instance on the test broker.
func testConfig(t *testing.T) Config {
	t.Helper()
	cfg, err := ParseURL(testenv.RocketMQ(t))
	if err != nil {
		t.Fatal(err)
	}
	id := rand.Text()[:10]
	cfg.Topic, cfg.Group, cfg.InstanceName = "SEATFLOW_T_"+id, "seatflow-t-"+id, "seatflow-t-"+id
	if c := testenv.RocketMQCluster(); c != "" {
		cfg.Cluster = c
	}
	return cfg
}

func newQueue(t *testing.T, cfg Config) *Queue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := q.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return q
}

// TestNewCreatesTopicsOnEveryMaster: the timeout topic and the group's
// retry topic end up on every master of the cluster, found through the
// name servers' cluster info (no broker address configured anywhere).
func TestNewCreatesTopicsOnEveryMaster(t *testing.T) {
	cfg := testConfig(t)
	q := newQueue(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ci, err := brokerClusterInfo(ctx, cfg.NameServers)
	if err != nil {
		t.Fatal(err)
	}
	masters := ci.masters(q.cfg.Cluster)
	if len(masters) == 0 {
		t.Fatalf("cluster %s has no masters: %+v", q.cfg.Cluster, ci)
	}
	// The retry topic as Consume creates it, without starting a consumer:
	// closing a consumer within its first rebalance trips a data race in
	// rocketmq-client-go (rmqClient.close, apache/rocketmq-client-go#293,
	// fix open as #1115), and this test would close it at once.
	if err := q.ensureRetryTopic(ctx); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{cfg.Topic, retryTopicPrefix + cfg.Group} {
		have, err := q.routeBrokers(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		for name := range masters {
			if !have[name] {
				t.Errorf("topic %s is not on master %s (route: %v)", topic, name, have)
			}
		}
	}
	t.Logf("topics on %d masters of %s", len(masters), q.cfg.Cluster)
}

// TestNewStartErrors: each misconfiguration is its own error, in bounded
// time, and says what to do.
func TestNewStartErrors(t *testing.T) {
	closedPort := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	tests := []struct {
		name   string
		change func(*Config)
		want   error
		say    []string
	}{
		{name: "unreachable name server", change: func(c *Config) { c.NameServers = []string{closedPort()} },
			want: ErrNameServers, say: []string{"refused"}},
		{name: "wrong cluster", change: func(c *Config) { c.Cluster = "NoSuchCluster" },
			want: ErrUnknownCluster, say: []string{`"NoSuchCluster"`, "clusters there"}},
		{name: "missing topic, creation off", change: func(c *Config) { c.NoCreateTopics = true },
			want: ErrTopicMissing, say: []string{"mqadmin updateTopic", "-t SEATFLOW_T_"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			tt.change(&cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			q, err := New(ctx, cfg)
			if err == nil {
				q.Close()
				t.Fatal("New succeeded")
			}
			t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
			if !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			for _, s := range tt.say {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// TestExistingTopicWithCreationOff: where operators made the topic, New
// and Consume use it and create nothing.
func TestExistingTopicWithCreationOff(t *testing.T) {
	cfg := testConfig(t)
	newQueue(t, cfg) // creates the topic, as an operator would
	off := cfg
	off.NoCreateTopics = true
	off.InstanceName += "-off"
	q := newQueue(t, off)
	if err := q.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestNewGroupStartTimestamp: a group with no offset starts at store time
// now − NewGroupLookback, written in the layout the library parses as UTC
// (a local-time string would shift the window by the zone offset). The
// broker itself answers offset 0 to a new group while a queue's first
// message is still in page cache, so on a young test topic no start
// position can be told apart end to end; this checks the value handed over.
func TestNewGroupStartTimestamp(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 30, 15, 0, time.FixedZone("CET", 3600))
	got := consumeTimestamp(now, 2*time.Hour)
	at, err := time.Parse("20060102150405", got)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(-2 * time.Hour); !at.Equal(want) {
		t.Fatalf("start %s = %v, want %v", got, at, want.UTC())
	}
}
