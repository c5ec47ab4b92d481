package seats

import (
	"fmt"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/testenv"
)

// TestFailover freezes the master holding a show's keys, on a Redis Cluster
// (its replica takes over the slots) and on a Sentinel group (the sentinels
// promote the replica), and shows that Lock, Release and MarkSold work again
// on the new master while the old one is still silent. It prints how long
// the store was unavailable. Runs only with SEATFLOW_TEST_REDIS_FAILOVER=1.
func TestFailover(t *testing.T) {
	testenv.NeedRedisFailover(t)
	for _, kind := range []struct {
		name string
		url  func(testing.TB) string
	}{
		{"cluster", testenv.RedisCluster},
		{"sentinel", testenv.RedisSentinel},
	} {
		t.Run(kind.name, func(t *testing.T) {
			rdb := dial(t, kind.url(t))
			s, show := New(rdb), newShow(t, rdb)
			ctx := t.Context()
			// Sold before the failover: replicated, so still sold after it.
			if err := s.MarkSold(ctx, show, 1, "before", []string{"a"}); err != nil {
				t.Fatal(err)
			}
			testenv.WaitReplicated(t, rdb, KeySeats(show))

			frozen := testenv.FreezeRedisMaster(t, testenv.MasterFor(t, rdb, KeySeats(show)))
			start := time.Now()
			var failures int
			err := testenv.Eventually(testenv.FailoverWithin, func() error {
				err := s.Lock(ctx, show, 2, "after", []string{"b", "c"}, 0, t0)
				if err != nil {
					failures++
				}
				return err
			})
			if err != nil {
				t.Fatalf("Lock still failing %v after freezing %s (%d failures): %v", testenv.FailoverWithin, frozen, failures, err)
			}
			fmt.Printf("redis %s failover: Lock failed %d times over %v, then worked\n", kind.name, failures, time.Since(start).Round(time.Millisecond))
			if now := testenv.MasterFor(t, rdb, KeySeats(show)); testenv.ServerAddr(t, now) == frozen {
				t.Fatalf("Lock worked on %s, the frozen master", frozen)
			}
			if n, err := s.Release(ctx, show, 2, "after", []string{"c"}); err != nil || n != 1 {
				t.Fatalf("Release after failover: %d, %v", n, err)
			}
			if err := s.MarkSold(ctx, show, 2, "after", []string{"b"}); err != nil {
				t.Fatalf("MarkSold after failover: %v", err)
			}
			wantState(t, s, show, []core.SeatHold{sd("a", "before", 1, time.Time{}), sd("b", "after", 2, t0)},
				map[int64]int{1: 1, 2: 1})
		})
	}
}
