package server

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"seatflow/core"
	"seatflow/core/seats"
	"seatflow/core/testenv"
)

// relayInstance is one SeatFlow instance's side of the relay: its hub, the
// relay feeding it, and a subscriber to a show.
type relayInstance struct {
	hub   *SeatHub
	relay *RedisRelay
}

func startRelayInstance(t *testing.T, rdb redis.UniversalClient, channel string) relayInstance {
	t.Helper()
	relay := NewRedisRelay(rdb, channel, nil)
	hub := NewSeatHub(relay, nil)
	if err := relay.Start(t.Context(), hub.Deliver, hub.Resync); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hub.Close()
		if err := relay.Close(); err != nil {
			t.Errorf("close relay: %v", err)
		}
	})
	return relayInstance{hub: hub, relay: relay}
}

// next returns the next change on s, failing after a few seconds.
func next(t *testing.T, s *SeatSubscription) SeatChange {
	t.Helper()
	select {
	case c, ok := <-s.C:
		if !ok {
			t.Fatal("subscription closed")
		}
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no seat change within 5s")
	}
	return SeatChange{}
}

// ended drains s until the hub ends it, failing after a few seconds.
func ended(t *testing.T, s *SeatSubscription, when string) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-s.C:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("%s: the subscription did not end within 5s (no resync)", when)
		}
	}
}

func none(t *testing.T, s *SeatSubscription, what string) {
	t.Helper()
	select {
	case c := <-s.C:
		t.Errorf("%s: got %+v", what, c)
	case <-time.After(200 * time.Millisecond):
	}
}

// testRelay runs the relay checks on the Redis behind rdb.
func testRelay(t *testing.T, rdb redis.UniversalClient) {
	channel := SeatChannel(0) + ":" + t.Name() // a channel of the test's own on a shared Redis
	one, two := startRelayInstance(t, rdb, channel), startRelayInstance(t, rdb, channel)
	other := startRelayInstance(t, rdb, channel+":other-db")
	s1, s2, sOther := one.hub.Subscribe(41), two.hub.Subscribe(41), other.hub.Subscribe(41)
	unrelated := two.hub.Subscribe(42)

	// A change on instance one reaches the browsers of both instances, once.
	one.hub.SeatsChanged(41, []string{"A-1", "A-2"}, core.SeatLocked, "SF1")
	for i, s := range []*SeatSubscription{s1, s2} {
		got := next(t, s)
		if got.ShowID != 41 || len(got.SeatIDs) != 2 || got.SeatIDs[1] != "A-2" || got.State != core.SeatLocked || got.OrderNo != "SF1" {
			t.Errorf("instance %d got %+v", i+1, got)
		}
	}
	none(t, s1, "instance 1 got the change twice")
	none(t, sOther, "another channel (database) got the change")
	none(t, unrelated, "another show got the change")

	// Someone else's junk on the channel is skipped; what follows still flows.
	for _, junk := range []string{"not json", `{"show_id":0}`, `{"show_id":"x"}`} {
		if err := rdb.Publish(t.Context(), channel, junk).Err(); err != nil {
			t.Fatal(err)
		}
	}
	two.hub.SeatsChanged(41, []string{"B-1"}, core.SeatSold, "SF2")
	for i, s := range []*SeatSubscription{s1, s2} {
		if got := next(t, s); got.SeatIDs[0] != "B-1" || got.State != core.SeatSold {
			t.Errorf("instance %d after junk got %+v", i+1, got)
		}
	}

	// Changes published at once (sent together in pipelines) each arrive
	// once, on both instances.
	const burst = 40
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() { one.hub.SeatsChanged(41, []string{fmt.Sprintf("C-%d", i)}, core.SeatLocked, "SF3") })
	}
	wg.Wait()
	for i, s := range []*SeatSubscription{s1, s2} {
		seen := map[string]bool{}
		for range burst {
			seen[next(t, s).SeatIDs[0]] = true
		}
		if len(seen) != burst {
			t.Errorf("instance %d got %d distinct changes of %d", i+1, len(seen), burst)
		}
	}
	none(t, s1, "instance 1 got a change of the burst twice")
}

func TestRedisRelay(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		emb, err := testenv.StartEmbeddedRedis()
		if err != nil {
			t.Fatal(err)
		}
		defer emb.Close()
		rdb, err := seats.Dial(t.Context(), emb.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		// Cleanups (relay Close) run before the deferred checks above.
		t.Run("relay", func(t *testing.T) { testRelay(t, rdb) })
	})
	for name, url := range map[string]func(testing.TB) string{
		"real": testenv.Redis, "cluster": testenv.RedisCluster, "sentinel": testenv.RedisSentinel,
	} {
		t.Run(name, func(t *testing.T) {
			rdb, err := seats.Dial(t.Context(), url(t))
			if err != nil {
				t.Fatal(err)
			}
			defer rdb.Close()
			testRelay(t, rdb)
		})
	}
}

// On a cluster the subscription sits on the master of the channel's slot;
// a PUBLISH on any node, master or replica, reaches it (the cluster bus
// broadcasts it).
func TestRedisRelayClusterAnyNode(t *testing.T) {
	rdb, err := seats.Dial(t.Context(), testenv.RedisCluster(t))
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	cluster := rdb.(*redis.ClusterClient)
	channel := SeatChannel(0) + ":" + t.Name()
	sub := startRelayInstance(t, rdb, channel).hub.Subscribe(41)
	var mu sync.Mutex
	var nodes []*redis.Client // masters and replicas
	if err := cluster.ForEachShard(t.Context(), func(_ context.Context, c *redis.Client) error {
		mu.Lock() // the callbacks run concurrently
		defer mu.Unlock()
		nodes = append(nodes, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(nodes) < 2 {
		t.Fatalf("%d cluster nodes, want several", len(nodes))
	}
	for _, node := range nodes {
		addr := node.Options().Addr
		if err := node.Publish(t.Context(), channel, `{"show_id":41,"seat_ids":["`+addr+`"],"state":1}`).Err(); err != nil {
			t.Fatalf("publish on %s: %v", addr, err)
		}
		if got := next(t, sub); len(got.SeatIDs) != 1 || got.SeatIDs[0] != addr {
			t.Errorf("published on %s, got %+v", addr, got)
		}
	}
}

// A lost connection (here the server restarting) makes go-redis subscribe
// again by itself; the changes published in between are gone, so the relay
// must resync the hub, and what is published afterwards must flow again.
func TestRedisRelayResyncsAfterReconnect(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := miniredis.NewMiniRedis()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rdb, err := seats.Dial(t.Context(), "redis://"+srv.Addr()+"/0")
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	t.Run("relay", func(t *testing.T) {
		inst := startRelayInstance(t, rdb, SeatChannel(0))
		sub := inst.hub.Subscribe(41)
		srv.Close()
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		ended(t, sub, "after the reconnect") // the resync
		sub = inst.hub.Subscribe(41)
		defer sub.Close()
		inst.hub.SeatsChanged(41, []string{"after"}, core.SeatSold, "SF1")
		if got := next(t, sub); got.SeatIDs[0] != "after" || got.State != core.SeatSold {
			t.Errorf("after the reconnect got %+v", got)
		}
	})
}

func TestRedisRelayStartAndClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	emb, err := testenv.StartEmbeddedRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	rdb, err := seats.Dial(t.Context(), emb.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()

	r := NewRedisRelay(rdb, SeatChannel(0), nil)
	if err := r.Close(); err != nil {
		t.Errorf("close before start: %v", err)
	}
	if err := r.Start(t.Context(), func(SeatChange) {}, func() {}); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(t.Context(), func(SeatChange) {}, func() {}); err == nil {
		t.Error("second Start succeeded")
	}
	if err := r.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}

	// Redis gone: Start fails, Publish fails fast (the hub then delivers
	// locally), and neither leaves a goroutine behind.
	emb.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	r = NewRedisRelay(rdb, SeatChannel(0), nil)
	if err := r.Start(ctx, func(SeatChange) {}, func() {}); err == nil {
		t.Error("Start without Redis succeeded")
	}
	start := time.Now()
	if err := r.Publish(ctx, SeatChange{ShowID: 1, SeatIDs: []string{"A-1"}}); err == nil {
		t.Error("Publish without Redis succeeded")
	}
	if d := time.Since(start); d > 2*relayPublishTimeout {
		t.Errorf("Publish without Redis took %v", d)
	}
}

// TestRedisRelayFailover freezes the master the relay's subscription sits on
// (on a Redis Cluster the master of the channel's slot, on a Sentinel group
// the master) and shows that, while the old master is still silent, the
// relay subscribes on its successor, tells the hub to resync (the open
// seat streams end, so browsers reconnect and read the whole grid again,
// covering the changes published while no one listened), and delivers a
// change published after that. It prints how long the relay was deaf. Runs
// only with SEATFLOW_TEST_REDIS_FAILOVER=1.
func TestRedisRelayFailover(t *testing.T) {
	testenv.NeedRedisFailover(t)
	for _, kind := range []struct {
		name string
		url  func(testing.TB) string
	}{
		{"cluster", testenv.RedisCluster},
		{"sentinel", testenv.RedisSentinel},
	} {
		t.Run(kind.name, func(t *testing.T) {
			rdb, err := seats.Dial(t.Context(), kind.url(t))
			if err != nil {
				t.Fatal(err)
			}
			defer rdb.Close()
			channel := SeatChannel(0) + ":" + t.Name()
			inst := startRelayInstance(t, rdb, channel)
			sub := inst.hub.Subscribe(41)
			inst.hub.SeatsChanged(41, []string{"before"}, core.SeatLocked, "SF1")
			if got := next(t, sub); got.SeatIDs[0] != "before" {
				t.Fatalf("before the failover got %+v", got)
			}

			frozen := testenv.FreezeRedisMaster(t, testenv.MasterFor(t, rdb, channel))
			start := time.Now()
			// Everything below must happen before the frozen master wakes
			// up: until then only a subscription on its successor hears
			// anything.
			deadline := time.After(testenv.FailoverWithin)
			// The resync: the hub ends the stream of every browser.
		resync:
			for {
				select {
				case _, ok := <-sub.C:
					if !ok {
						break resync
					}
				case <-deadline:
					t.Fatalf("no resync within %v of freezing %s: the relay's subscription did not come back", testenv.FailoverWithin, frozen)
				}
			}
			resynced := time.Since(start)
			// A browser reconnecting after the resync sees what is
			// published from now on.
			sub = inst.hub.Subscribe(41)
			defer sub.Close()
			var publishes int
			for delivered := false; !delivered; {
				publishes++
				seat := fmt.Sprintf("after-%d", publishes)
				if err := rdb.Publish(t.Context(), channel, `{"show_id":41,"seat_ids":["`+seat+`"],"state":1}`).Err(); err != nil {
					t.Logf("publish %d: %v", publishes, err)
				}
				wait := time.After(time.Second)
			receive:
				for {
					select {
					case got, ok := <-sub.C:
						if !ok {
							t.Fatal("the new subscription closed")
						}
						if got.SeatIDs[0] == seat {
							delivered = true
							break receive
						}
					case <-wait:
						break receive
					case <-deadline:
						t.Fatalf("no change delivered within %v of freezing %s (%d publishes)", testenv.FailoverWithin, frozen, publishes)
					}
				}
			}
			fmt.Printf("seat relay %s failover: resync after %v, a change delivered after %v (%d publishes)\n",
				kind.name, resynced.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), publishes)
		})
	}
}
