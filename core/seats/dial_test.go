package seats

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/testenv"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		name  string
		url   string
		check func(t *testing.T, o URLOptions) // nil: the URL is refused
	}{
		{name: "single node with db", url: "redis://127.0.0.1:6379/2", check: func(t *testing.T, o URLOptions) {
			if o.Node == nil || o.Node.Addr != "127.0.0.1:6379" || o.Node.DB != 2 || o.Node.TLSConfig != nil {
				t.Errorf("node options %+v", o.Node)
			}
		}},
		{name: "TLS node with login", url: "rediss://app:pw@redis.example:6380/0", check: func(t *testing.T, o URLOptions) {
			if o.Node == nil || o.Node.TLSConfig == nil || o.Node.Username != "app" || o.Node.Password != "pw" {
				t.Errorf("node options %+v", o.Node)
			}
		}},
		{name: "cluster", url: "redis-cluster://10.0.0.1:7001,10.0.0.2:7002,10.0.0.3:7003", check: func(t *testing.T, o URLOptions) {
			if o.Cluster == nil || strings.Join(o.Cluster.Addrs, " ") != "10.0.0.1:7001 10.0.0.2:7002 10.0.0.3:7003" {
				t.Errorf("cluster options %+v", o.Cluster)
			}
		}},
		{name: "cluster with escaped login and options", url: "redis-cluster://app:p%40ss@h1:7001,h2:7002?pool_size=7&read_timeout=2s",
			check: func(t *testing.T, o URLOptions) {
				if c := o.Cluster; c == nil || c.Username != "app" || c.Password != "p@ss" || c.PoolSize != 7 ||
					c.ReadTimeout != 2*time.Second || len(c.Addrs) != 2 {
					t.Errorf("cluster options %+v", c)
				}
			}},
		{name: "cluster, one seed", url: "redis-cluster://h1:7001/", check: func(t *testing.T, o URLOptions) {
			if o.Cluster == nil || len(o.Cluster.Addrs) != 1 {
				t.Errorf("cluster options %+v", o.Cluster)
			}
		}},
		{name: "sentinel", url: "redis-sentinel://s1:26379,s2:26379,s3:26379/mymaster", check: func(t *testing.T, o URLOptions) {
			if s := o.Sentinel; s == nil || s.MasterName != "mymaster" || s.DB != 0 || len(s.SentinelAddrs) != 3 ||
				s.Password != "" || s.SentinelPassword != "" {
				t.Errorf("sentinel options %+v", s)
			}
		}},
		{name: "sentinel: login is the master's, db, sentinel login in the query",
			url: "redis-sentinel://app:pw@s1:26379/mymaster/3?sentinel_username=sen&sentinel_password=spw",
			check: func(t *testing.T, o URLOptions) {
				if s := o.Sentinel; s == nil || s.Username != "app" || s.Password != "pw" || s.DB != 3 ||
					s.SentinelUsername != "sen" || s.SentinelPassword != "spw" || s.MasterName != "mymaster" {
					t.Errorf("sentinel options %+v", s)
				}
			}},
		{name: "empty", url: ""},
		{name: "no scheme", url: "127.0.0.1:6379"},
		{name: "unknown scheme", url: "http://u:s3cret@127.0.0.1:6379"},
		{name: "scheme in capitals", url: "REDIS-CLUSTER://h1:7001"},
		{name: "node without host", url: "redis://u:s3cret@/0"},
		{name: "node unparsable, password not echoed", url: "redis://u:s3cret@[::1"},
		{name: "cluster without hosts", url: "redis-cluster://"},
		{name: "cluster host without port", url: "redis-cluster://u:s3cret@h1"},
		{name: "cluster empty host in list", url: "redis-cluster://h1:7001,,h2:7002"},
		{name: "cluster port not a number", url: "redis-cluster://h1:7001,h2:x"},
		{name: "cluster port out of range", url: "redis-cluster://h1:70010"},
		{name: "cluster with a db", url: "redis-cluster://h1:7001/3"},
		{name: "cluster unknown option", url: "redis-cluster://u:s3cret@h1:7001?bogus=1"},
		{name: "cluster bad escape in login", url: "redis-cluster://u:s3cret%zz@h1:7001"},
		{name: "sentinel without master name", url: "redis-sentinel://u:s3cret@s1:26379"},
		{name: "sentinel bad db", url: "redis-sentinel://s1:26379/mymaster/x"},
		{name: "sentinel too many path parts", url: "redis-sentinel://s1:26379/mymaster/1/2"},
		{name: "sentinel unknown option", url: "redis-sentinel://s1:26379/mymaster?bogus=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ParseURL(tt.url)
			if tt.check != nil {
				if err != nil {
					t.Fatalf("ParseURL(%q): %v", tt.url, err)
				}
				tt.check(t, o)
				return
			}
			if err == nil {
				t.Fatalf("ParseURL(%q) accepted it: %+v", tt.url, o)
			}
			if !strings.Contains(err.Error(), URLForms) {
				t.Errorf("error %q does not name the accepted forms", err)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q leaks the password", err)
			}
		})
	}
}

// TestDialKinds dials each real kind and checks the client and the defaults
// every kind keeps (timeouts, no retries, no CLIENT SETINFO).
func TestDialKinds(t *testing.T) {
	type settings struct {
		dial, read, write time.Duration
		noRetries         bool // go-redis keeps -1, or stores it as 0, once the client is built
		identityOff       bool
	}
	want := settings{2 * time.Second, time.Second, time.Second, true, true}
	tests := []struct {
		name string
		url  func(testing.TB) string
		get  func(t *testing.T, c redis.UniversalClient) settings
	}{
		{"node", testenv.Redis, func(t *testing.T, c redis.UniversalClient) settings {
			o := c.(*redis.Client).Options()
			return settings{o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries <= 0, o.DisableIdentity}
		}},
		{"cluster", testenv.RedisCluster, func(t *testing.T, c redis.UniversalClient) settings {
			cc, ok := c.(*redis.ClusterClient)
			if !ok {
				t.Fatalf("client %T, want a cluster client", c)
			}
			o := cc.Options()
			return settings{o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries <= 0, o.DisableIdentity}
		}},
		{"sentinel", testenv.RedisSentinel, func(t *testing.T, c redis.UniversalClient) settings {
			// A failover client is a *redis.Client whose connections go to
			// the master the sentinels name.
			role, err := c.Do(t.Context(), "ROLE").Slice()
			if err != nil || role[0] != "master" {
				t.Errorf("ROLE %v (%v), want the master", role, err)
			}
			o := c.(*redis.Client).Options()
			return settings{o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries <= 0, o.DisableIdentity}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, tt.url(t))
			if got := tt.get(t, c); got != want {
				t.Errorf("settings %+v, want %+v", got, want)
			}
			// A script and a MULTI on one show's keys, the two ways the
			// store writes.
			s, show := New(c), newShow(t, c)
			if err := s.Lock(t.Context(), show, 1, "o1", []string{"a"}, 0, t0); err != nil {
				t.Fatal(err)
			}
			if err := s.Replace(t.Context(), show, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// startRedisServer runs a throwaway redis-server on a free loopback port
// with args, and returns its redis:// URL once it answers.
func startRedisServer(t *testing.T, args ...string) string {
	t.Helper()
	bin := testenv.Binary(t, "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	_ = l.Close()
	cmd := exec.Command(bin, append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir()}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "redis://127.0.0.1:" + port + "/0"
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	if err := testenv.Eventually(10*time.Second, func() error { return c.Ping(t.Context()).Err() }); err != nil {
		t.Fatalf("redis-server on %s: %v\n%s", port, err, out.String())
	}
	return url
}

func TestDialEvictionPolicy(t *testing.T) {
	url := startRedisServer(t)
	admin := dial(t, url)
	tests := []struct {
		policy  string
		allow   bool
		refused bool
	}{
		{policy: "noeviction"},
		// Only keys with a TTL are candidates, and SeatFlow sets none.
		{policy: "volatile-lru"},
		{policy: "volatile-lfu"},
		{policy: "volatile-random"},
		{policy: "volatile-ttl"},
		{policy: "allkeys-lru", refused: true},
		{policy: "allkeys-lfu", refused: true},
		{policy: "allkeys-random", refused: true},
		{policy: "allkeys-lru", allow: true},
	}
	for _, tt := range tests {
		t.Run(tt.policy+"/allow="+strconv.FormatBool(tt.allow), func(t *testing.T) {
			if err := admin.ConfigSet(t.Context(), "maxmemory-policy", tt.policy).Err(); err != nil {
				t.Fatal(err)
			}
			c, err := DialWith(t.Context(), url, DialOptions{AllowEviction: tt.allow})
			if !tt.refused {
				if err != nil {
					t.Fatalf("DialWith refused %s: %v", tt.policy, err)
				}
				_ = c.Close()
				return
			}
			if !errors.Is(err, ErrEvictingPolicy) {
				t.Fatalf("DialWith on %s: %v, want %v", tt.policy, err, ErrEvictingPolicy)
			}
			for _, want := range []string{tt.policy, "SEATFLOW_REDIS_ALLOW_EVICTION"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
			}
		})
	}
}

// A server that hides CONFIG is accepted with a warning.
func TestDialHiddenConfig(t *testing.T) {
	e, err := testenv.StartEmbeddedRedis() // miniredis knows no CONFIG
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	for name, url := range map[string]string{
		"renamed CONFIG": startRedisServer(t, "--rename-command", "CONFIG", ""),
		"embedded":       e.URL(),
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			c, err := DialWith(context.Background(), url, DialOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatalf("DialWith: %v", err)
			}
			_ = c.Close()
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "maxmemory-policy") {
				t.Errorf("no warning about maxmemory-policy logged: %q", logs.String())
			}
		})
	}
}

func TestUnavailableReplies(t *testing.T) {
	tests := []struct {
		reply   string
		unavail bool
	}{
		{"CLUSTERDOWN The cluster is down", true},
		{"TRYAGAIN Multiple keys request during rehashing of slot", true},
		{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", true},
		{"LOADING Redis is loading the dataset in memory", true},
		{"READONLY You can't write against a read only replica.", true},
		{"MOVED 3999 127.0.0.1:6381", true},
		{"ASK 3999 127.0.0.1:6381", true},
		{"ERR Error running script (call to f_x): @user_script:1: boom", false},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", false},
		{"OOM command not allowed when used memory > 'maxmemory'.", false},
		{"ASKING is not a reply", false},
	}
	for _, tt := range tests {
		err := wrap("op", replyError(tt.reply))
		if got := errors.Is(err, core.ErrStoreUnavailable); got != tt.unavail {
			t.Errorf("%q: store_unavailable %v, want %v (%v)", tt.reply, got, tt.unavail, err)
		}
	}
}

// replyError is an error reply as go-redis returns it (a redis.Error).
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}
