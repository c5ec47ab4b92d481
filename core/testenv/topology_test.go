package testenv

import (
	"context"
	"testing"
	"time"
)

// dialFrom reports whether host's namespace can open a TCP connection to
// ip:port within a second.
func dialFrom(t *testing.T, tp *Topology, host, ip, port string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return tp.Command(ctx, host, "bash", "-c", `exec 3<>"/dev/tcp/$0/$1"`, ip, port).Run() == nil
}

func TestTopologyPartitionCutsOnlyThePeer(t *testing.T) {
	tp := NewTopology(t)
	db, rc1 := tp.IP("db"), tp.IP("rc1")
	if !dialFrom(t, tp, "app1", db, "3306") {
		t.Fatal("app1 cannot reach db before the partition")
	}
	tp.Partition("app1", "db")
	if dialFrom(t, tp, "app1", db, "3306") {
		t.Error("app1 reaches db while partitioned from it")
	}
	if !dialFrom(t, tp, "app1", rc1, "6379") {
		t.Error("app1 cannot reach rc1, which is not partitioned from it")
	}
	tp.Heal("app1")
	if !dialFrom(t, tp, "app1", db, "3306") {
		t.Error("app1 cannot reach db after heal")
	}
}

func TestTopologyHostOf(t *testing.T) {
	tp := &Topology{hosts: map[string]string{"rc1": "198.18.0.21", "db": "198.18.0.10"}}
	for _, tc := range []struct {
		addr, host string
		ok         bool
	}{
		{"198.18.0.21:6379", "rc1", true},
		{"198.18.0.10", "db", true},
		{"198.18.0.99:6379", "", false},
	} {
		host, ok := tp.HostOf(tc.addr)
		if host != tc.host || ok != tc.ok {
			t.Errorf("HostOf(%q) = %q, %v; want %q, %v", tc.addr, host, ok, tc.host, tc.ok)
		}
	}
}

func TestNetemDelay(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{time.Millisecond, "1000us"},
		{1500 * time.Microsecond, "1500us"},
	} {
		if got := netemDelay(tc.d); got != tc.want {
			t.Errorf("netemDelay(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
