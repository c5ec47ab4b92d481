package seats

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/testenv"
)

// t0 is the lock time of the test fixtures, at millisecond precision as stored.
var t0 = time.UnixMilli(1_760_000_000_000).UTC()

// backend is one server the suite runs against.
type backend struct {
	name string
	dial func(tb testing.TB) redis.UniversalClient
}

// backends lists the embedded server and the real Redis as a single node, a
// Redis Cluster and a Sentinel group (skipped locally, required in CI, see
// testenv).
func backends() []backend {
	return []backend{
		{"embedded", func(tb testing.TB) redis.UniversalClient {
			e, err := testenv.StartEmbeddedRedis()
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(e.Close)
			return dial(tb, e.URL())
		}},
		{"real", func(tb testing.TB) redis.UniversalClient { return dial(tb, testenv.Redis(tb)) }},
		{"cluster", func(tb testing.TB) redis.UniversalClient { return dial(tb, testenv.RedisCluster(tb)) }},
		{"sentinel", func(tb testing.TB) redis.UniversalClient { return dial(tb, testenv.RedisSentinel(tb)) }},
	}
}

func dial(tb testing.TB, url string) redis.UniversalClient {
	tb.Helper()
	c, err := Dial(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// eachBackend runs fn as one subtest per Redis backend: tests of Redis
// itself (its values, replies and connections).
func eachBackend(t *testing.T, fn func(t *testing.T, rdb redis.UniversalClient)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { fn(t, b.dial(t)) })
	}
}

// newShow returns a show id no other test (or concurrent run on the shared
// Redis) uses, and deletes its keys at the end: FLUSHDB is not allowed there.
func newShow(tb testing.TB, rdb redis.UniversalClient) int64 {
	id := 1<<52 + rand.Int64N(1<<52)
	tb.Cleanup(func() {
		rdb.Del(context.Background(), KeySeats(id), KeyLimit(id), KeyBlocked(id), KeyBest(id), KeyBestBounds(id))
	})
	return id
}

// subject is one seat store the behaviour tests run against, with the raw
// access a few of them need.
type subject struct {
	Interface
	// newShow returns a show id no other test (or concurrent run on the
	// shared Redis) uses; its state is deleted at the end.
	newShow func(tb testing.TB) int64
	// bareBlock stores a block as written before blocks carried a time.
	bareBlock func(tb testing.TB, show int64, seat, reason string)
	// storedParts counts the show's stored seats, counters and blocks
	// that are not empty (Redis keeps no empty hash).
	storedParts func(show int64) int64
}

// eachStore runs fn as one subtest per Redis backend, and on Memory: the
// contract both seat stores keep.
func eachStore(t *testing.T, fn func(t *testing.T, s *subject)) {
	eachBackend(t, func(t *testing.T, rdb redis.UniversalClient) { fn(t, redisSubject(rdb)) })
	t.Run("memory", func(t *testing.T) { fn(t, memorySubject(NewMemory())) })
}

func redisSubject(rdb redis.UniversalClient) *subject {
	ctx := context.Background()
	return &subject{
		Interface: New(rdb),
		newShow:   func(tb testing.TB) int64 { return newShow(tb, rdb) },
		bareBlock: func(tb testing.TB, show int64, seat, reason string) {
			if err := rdb.HSet(ctx, KeyBlocked(show), seat, reason).Err(); err != nil {
				tb.Fatal(err)
			}
		},
		storedParts: func(show int64) int64 {
			var n int64
			for _, k := range []string{KeySeats(show), KeyLimit(show), KeyBlocked(show)} {
				n += rdb.Exists(ctx, k).Val()
			}
			return n
		},
	}
}

func memorySubject(m *Memory) *subject {
	return &subject{
		Interface: m,
		newShow:   func(testing.TB) int64 { return 1<<52 + rand.Int64N(1<<52) },
		bareBlock: func(_ testing.TB, show int64, seat, reason string) {
			sh := m.lockShow(show, true)
			defer sh.mu.Unlock()
			sh.blocked[seat] = memBlock{reason: reason}
		},
		storedParts: func(show int64) int64 {
			sh := m.lockShow(show, false)
			if sh == nil {
				return 0
			}
			defer sh.mu.Unlock()
			var n int64
			for _, size := range []int{len(sh.seats), len(sh.limits), len(sh.blocked)} {
				if size > 0 {
					n++
				}
			}
			return n
		},
	}
}

// step is a fixture action: Lock (at t0, no limit) or MarkSold.
type step struct {
	sell  bool
	order string
	user  int64
	seats []string
}

func given(t *testing.T, s Interface, show int64, steps []step) {
	t.Helper()
	ctx := context.Background()
	for _, st := range steps {
		var err error
		if st.sell {
			err = s.MarkSold(ctx, show, st.user, st.order, st.seats)
		} else {
			err = s.Lock(ctx, show, st.user, st.order, st.seats, 0, t0)
		}
		if err != nil {
			t.Fatalf("fixture %+v: %v", st, err)
		}
	}
}

func lk(seat, order string, user int64) core.SeatHold {
	return core.SeatHold{SeatID: seat, State: core.SeatLocked, OrderNo: order, UserID: user, LockedAt: t0}
}

func sd(seat, order string, user int64, lockedAt time.Time) core.SeatHold {
	return core.SeatHold{SeatID: seat, State: core.SeatSold, OrderNo: order, UserID: user, LockedAt: lockedAt}
}

// wantState checks the show's holds and counters, and that the counters are
// exactly what the holds imply.
func wantState(t *testing.T, s Interface, show int64, holds []core.SeatHold, limits map[int64]int) {
	t.Helper()
	ctx := context.Background()
	got, err := s.Holds(ctx, show)
	if err != nil {
		t.Fatal(err)
	}
	if holds == nil {
		holds = []core.SeatHold{}
	}
	if !reflect.DeepEqual(got, holds) {
		t.Errorf("holds:\n got %+v\nwant %+v", got, holds)
	}
	gotLimits, err := s.Limits(ctx, show)
	if err != nil {
		t.Fatal(err)
	}
	if limits == nil {
		limits = map[int64]int{}
	}
	if !reflect.DeepEqual(gotLimits, limits) {
		t.Errorf("limits: got %v, want %v", gotLimits, limits)
	}
	if implied := impliedLimits(got); !reflect.DeepEqual(gotLimits, implied) {
		t.Errorf("limits %v drift from the holds, which imply %v", gotLimits, implied)
	}
}

func impliedLimits(holds []core.SeatHold) map[int64]int {
	m := map[int64]int{}
	for _, h := range holds {
		m[h.UserID]++
	}
	return m
}
