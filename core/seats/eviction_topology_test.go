package seats

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"seatflow/core/testenv"
)

// TestDialEvictionPolicyTopologies sets an evicting maxmemory-policy on one
// master at a time, of the Redis Cluster and of the Sentinel group, and
// shows that DialWith refuses it, naming the policy and the setting that
// accepts it, and that it accepts it with AllowEviction. Each master's
// policy is restored when its case ends. Another test dialling the
// topology meanwhile would be refused too, so it runs only with
// SEATFLOW_TEST_REDIS_FAILOVER=1 (make test runs it alone, after the suite).
func TestDialEvictionPolicyTopologies(t *testing.T) {
	testenv.NeedRedisFailover(t)
	for _, kind := range []struct {
		name string
		url  func(testing.TB) string
	}{
		{"cluster", testenv.RedisCluster},
		{"sentinel", testenv.RedisSentinel},
	} {
		t.Run(kind.name, func(t *testing.T) {
			url := kind.url(t)
			for _, master := range mastersOf(t, dial(t, url)) {
				addr := testenv.ServerAddr(t, master)
				t.Run(addr, func(t *testing.T) {
					setPolicyForTest(t, master, "allkeys-lru")
					c, err := DialWith(t.Context(), url, DialOptions{})
					if err == nil {
						_ = c.Close()
					}
					if !errors.Is(err, ErrEvictingPolicy) {
						t.Fatalf("DialWith with allkeys-lru on %s: %v, want %v", addr, err, ErrEvictingPolicy)
					}
					want := []string{"allkeys-lru", "SEATFLOW_REDIS_ALLOW_EVICTION"}
					if kind.name == "cluster" {
						want = append(want, "master "+addr) // which of the masters to fix
					}
					for _, w := range want {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("error %q does not name %s", err, w)
						}
					}
					c, err = DialWith(t.Context(), url, DialOptions{AllowEviction: true})
					if err != nil {
						t.Fatalf("DialWith allowing eviction: %v", err)
					}
					_ = c.Close()
				})
			}
		})
	}
}

// mastersOf returns a client of every master behind rdb: a cluster's
// masters, or the master a Sentinel client is connected to.
func mastersOf(t *testing.T, rdb redis.UniversalClient) []*redis.Client {
	t.Helper()
	c, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return []*redis.Client{testenv.MasterFor(t, rdb, "")}
	}
	var mu sync.Mutex
	var masters []*redis.Client
	if err := c.ForEachMaster(t.Context(), func(_ context.Context, m *redis.Client) error {
		mu.Lock() // the callbacks run concurrently
		defer mu.Unlock()
		masters = append(masters, m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(masters) < 2 {
		t.Fatalf("%d cluster masters, want several", len(masters))
	}
	return masters
}

// setPolicyForTest sets master's maxmemory-policy until the test ends.
func setPolicyForTest(t *testing.T, master *redis.Client, policy string) {
	t.Helper()
	res, err := master.ConfigGet(t.Context(), "maxmemory-policy").Result()
	if err != nil || res["maxmemory-policy"] == "" {
		t.Fatalf("CONFIG GET maxmemory-policy: %v %v", res, err)
	}
	if err := master.ConfigSet(t.Context(), "maxmemory-policy", policy).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := master.ConfigSet(context.Background(), "maxmemory-policy", res["maxmemory-policy"]).Err(); err != nil {
			t.Errorf("restore maxmemory-policy %s: %v", res["maxmemory-policy"], err)
		}
	})
}
