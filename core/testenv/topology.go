package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Variables printed by `scripts/cluster.sh env` (after `make cluster`).
const (
	ClusterMySQLVar           = "SEATFLOW_CLUSTER_MYSQL"            // mysql://seatflow:seatflow@tcp(198.18.0.10:3306)/seatflow
	ClusterRedisClusterVar    = "SEATFLOW_CLUSTER_REDIS_CLUSTER"    // redis-cluster://198.18.0.21:6379,...
	ClusterRedisSentinelVar   = "SEATFLOW_CLUSTER_REDIS_SENTINEL"   // redis-sentinel://198.18.0.41:26379,.../seatflow
	ClusterRocketMQVar        = "SEATFLOW_CLUSTER_ROCKETMQ"         // rocketmq://198.18.0.51:9876,198.18.0.52:9876
	ClusterRocketMQClusterVar = "SEATFLOW_CLUSTER_ROCKETMQ_CLUSTER" // SeatFlowCluster
	ClusterAppAddrsVar        = "SEATFLOW_CLUSTER_APP_ADDRS"        // 198.18.0.71,198.18.0.72,198.18.0.73
	ClusterHostsVar           = "SEATFLOW_CLUSTER_HOSTS"            // db=198.18.0.10,rc1=198.18.0.21,...
	ClusterScriptVar          = "SEATFLOW_CLUSTER_SCRIPT"           // path of scripts/cluster.sh
)

// Topology is the multi-host topology of scripts/cluster.sh: every store on
// an address of its own inside a network namespace ("host"), with the
// faults a test can cause on it. Hosts are named as in the script: db,
// rc1..rc6 (Redis Cluster), rs1 rs2 (Sentinel's master and replica),
// sn1..sn3, ns1 ns2 (name servers), bk1 bk2 (brokers), app1..app3.
type Topology struct {
	MySQL           string
	RedisCluster    string
	RedisSentinel   string
	RocketMQ        string
	RocketMQCluster string
	AppAddrs        []string // one IP per app host, app1 first

	hosts  map[string]string // host name -> IP
	script string
	t      testing.TB
}

// NewTopology reads the SEATFLOW_CLUSTER_* variables, or skips the test (and
// fails it when CI is set, like the single-service helpers).
func NewTopology(t testing.TB) *Topology {
	t.Helper()
	tp := &Topology{
		MySQL:           needCluster(t, ClusterMySQLVar),
		RedisCluster:    needCluster(t, ClusterRedisClusterVar),
		RedisSentinel:   needCluster(t, ClusterRedisSentinelVar),
		RocketMQ:        needCluster(t, ClusterRocketMQVar),
		RocketMQCluster: needCluster(t, ClusterRocketMQClusterVar),
		AppAddrs:        strings.Split(needCluster(t, ClusterAppAddrsVar), ","),
		hosts:           map[string]string{},
		script:          os.Getenv(ClusterScriptVar),
		t:               t,
	}
	for _, kv := range strings.Split(needCluster(t, ClusterHostsVar), ",") {
		name, ip, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("%s: %q is not host=ip", ClusterHostsVar, kv)
		}
		tp.hosts[name] = ip
	}
	if tp.script == "" {
		_, file, _, ok := runtime.Caller(0)
		if !ok {
			t.Fatal("cannot locate scripts/cluster.sh")
		}
		tp.script = filepath.Join(filepath.Dir(file), "..", "..", "scripts", "cluster.sh")
	}
	return tp
}

func needCluster(t testing.TB, name string) string {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not set: CI must run this test on the multi-host topology (make cluster; export $(scripts/cluster.sh env))", name)
	}
	t.Skipf("%s is not set; run `make cluster` and export $(scripts/cluster.sh env) to include this test", name)
	return ""
}

// IP returns the address of a host.
func (tp *Topology) IP(host string) string {
	tp.t.Helper()
	ip, ok := tp.hosts[host]
	if !ok {
		tp.t.Fatalf("topology has no host %q", host)
	}
	return ip
}

// HostOf names the host serving addr ("198.18.0.21:6379" or an IP), e.g.
// to kill whichever Redis Cluster node is master of a slot right now.
func (tp *Topology) HostOf(addr string) (string, bool) {
	ip := addr
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		ip = addr[:i]
	}
	for name, hostIP := range tp.hosts {
		if hostIP == ip {
			return name, true
		}
	}
	return "", false
}

// Kill sends SIGKILL to the service of host.
func (tp *Topology) Kill(host string) { tp.run("kill", host) }

// Start starts host's service again on its data and waits until it is ready.
func (tp *Topology) Start(host string) { tp.run("start", host) }

// Partition drops all traffic between host and peer until Heal; the test's
// cleanup heals it in case the test ends first.
func (tp *Topology) Partition(host, peer string) {
	tp.run("partition", host, peer)
	tp.t.Cleanup(func() { tp.run("heal", host) })
}

// Heal removes every partition of host.
func (tp *Topology) Heal(host string) { tp.run("heal", host) }

// Netem delays the packets host sends by d (0 removes the delay); the
// test's cleanup removes it.
func (tp *Topology) Netem(host string, d time.Duration) {
	tp.run("netem", host, netemDelay(d))
	if d != 0 {
		tp.t.Cleanup(func() { tp.run("netem", host, "0") })
	}
}

// netemDelay formats d for tc ("1500us"): tc takes no Go durations.
func netemDelay(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return fmt.Sprintf("%dus", d.Microseconds())
}

// Command returns a command that runs inside host's namespace; its process
// is the command itself (the script execs), so cmd.Process can signal it.
func (tp *Topology) Command(ctx context.Context, host, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "bash", append([]string{tp.script, "exec", host, name}, args...)...)
}

func (tp *Topology) run(args ...string) {
	tp.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, "bash", append([]string{tp.script}, args...)...).CombinedOutput()
	if err != nil {
		tp.t.Fatalf("cluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	tp.t.Logf("cluster.sh %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
}
