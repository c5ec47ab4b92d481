package testenv

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Failover timing on a topology of RedisClusterVar and RedisSentinelVar. The
// topology must elect a new master well within FailoverWithin of the old
// one going silent (scripts/redis-topology.sh: cluster-node-timeout 2s,
// down-after-milliseconds 1s); the frozen master stays silent a little
// longer, so whatever works before it wakes works on its successor.
const (
	FailoverWithin = 20 * time.Second
	freezeFor      = FailoverWithin + 5*time.Second
	// rejoinWithin bounds the wait, after the freeze, for the old master to
	// come back as a replica.
	rejoinWithin = 60 * time.Second
)

// NeedRedisFailover skips the test unless RedisFailoverVar=1: for the tests
// that disturb the shared topology (freeze a master, change its config).
func NeedRedisFailover(t testing.TB) {
	t.Helper()
	if os.Getenv(RedisFailoverVar) != "1" {
		t.Skipf("disturbs the shared topology: set %s=1 to run it alone (make test does, after the suite)", RedisFailoverVar)
	}
}

// FreezeRedisMaster makes the master that master is connected to stop
// answering (DEBUG SLEEP: to its peers, its replicas and every client, a
// hung host) long enough for its replica to take over, and returns its
// address. When the test ends it waits until the old master is back as a
// replica, so the topology is whole again for the next test. The servers
// need enable-debug-command yes.
func FreezeRedisMaster(t *testing.T, master *redis.Client) string {
	t.Helper()
	ctx := t.Context()
	// The connection's local address on the server side is the master's
	// address, also behind a Sentinel client (whose Options().Addr is not).
	info, err := master.ClientInfo(ctx).Result()
	if err != nil {
		t.Fatalf("CLIENT INFO on the master: %v", err)
	}
	addr := info.LAddr
	if role, err := master.Do(ctx, "ROLE").Slice(); err != nil || len(role) == 0 || role[0] != "master" {
		t.Fatalf("%s is not a master: ROLE %v (%v)", addr, role, err)
	}
	o := master.Options()
	// A client of its own: the reply comes only when the sleep ends.
	sleeper := redis.NewClient(&redis.Options{Addr: addr, Username: o.Username, Password: o.Password,
		TLSConfig: o.TLSConfig, DisableIdentity: true, ReadTimeout: -1, MaxRetries: -1})
	done := make(chan error, 1)
	go func() {
		done <- sleeper.Do(context.WithoutCancel(ctx), "DEBUG", "SLEEP", freezeFor.Seconds()).Err()
	}()
	// A refused DEBUG answers at once; an accepted one does not answer
	// until the sleep ends.
	select {
	case err := <-done:
		t.Fatalf("DEBUG SLEEP on %s: %v (the failover tests need enable-debug-command yes)", addr, err)
	case <-time.After(500 * time.Millisecond):
	}
	t.Logf("froze master %s for %v", addr, freezeFor)
	t.Cleanup(func() {
		<-done
		_ = sleeper.Close()
		back := redis.NewClient(&redis.Options{Addr: addr, Username: o.Username, Password: o.Password,
			TLSConfig: o.TLSConfig, DisableIdentity: true, MaxRetries: -1})
		defer back.Close()
		var role []any
		err := Eventually(rejoinWithin, func() error {
			role, err = back.Do(context.Background(), "ROLE").Slice()
			if err == nil && (len(role) == 0 || role[0] != "slave") {
				return errors.New("not a replica yet")
			}
			return err
		})
		if err != nil {
			t.Errorf("old master %s not back as a replica within %v: ROLE %v: %v", addr, rejoinWithin, role, err)
		}
	})
	return addr
}

// Eventually calls try until it returns nil or within has passed, and
// returns its last error. It paces the calls (a tenth of a second apart) but
// asserts nothing about time.
func Eventually(within time.Duration, try func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := try()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// MasterFor returns a client of the master that serves key on client (a
// cluster's slot owner; the master itself otherwise).
func MasterFor(t *testing.T, client redis.UniversalClient, key string) *redis.Client {
	t.Helper()
	switch c := client.(type) {
	case *redis.ClusterClient:
		c.ReloadState(t.Context())
		m, err := c.MasterForKey(t.Context(), key)
		if err != nil {
			t.Fatalf("master for %s: %v", key, err)
		}
		return m
	case *redis.Client:
		return c
	}
	t.Fatalf("unexpected client %T", client)
	return nil
}

// WaitReplicated waits until a replica has the writes so far to key's
// master, so a failover keeps them. WAIT counts the writes of its own
// connection, and replication is one ordered stream: a write of ours (a
// probe key in key's slot, expiring by itself) acknowledged by a replica
// means every earlier write is there too.
func WaitReplicated(t *testing.T, rdb redis.UniversalClient, key string) {
	t.Helper()
	conn := MasterFor(t, rdb, key).Conn()
	defer conn.Close()
	probe := key + ":replicated"
	if err := conn.Set(t.Context(), probe, "1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Wait(t.Context(), 1, 5*time.Second).Result(); err != nil || n < 1 {
		t.Fatalf("WAIT for a replica on the master of %s: %d replicas, %v", key, n, err)
	}
}

// ServerAddr is the server address behind c (CLIENT INFO's laddr).
//
// Right after a failover the client may still hand out a pooled connection
// to the old master, closed under it when the switch was announced; go-redis
// does not retry a closed connection, so neither would the caller: a few
// tries ride it out.
func ServerAddr(t *testing.T, c *redis.Client) string {
	t.Helper()
	var info *redis.ClientInfo
	err := Eventually(5*time.Second, func() (err error) {
		info, err = c.ClientInfo(t.Context()).Result()
		return err
	})
	if err != nil {
		t.Fatalf("CLIENT INFO: %v", err)
	}
	return info.LAddr
}
