package admission

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core/testenv"
)

// redisBackends are the servers the Redis store is tested on: the embedded
// one (always) and the real Redis of SEATFLOW_TEST_REDIS (skipped locally
// without it, required in CI, see testenv).
func redisBackends() []struct {
	name string
	url  func(t *testing.T) string
} {
	return []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"embedded", func(t *testing.T) string {
			e, err := testenv.StartEmbeddedRedis()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			return e.URL()
		}},
		{"real", func(t *testing.T) string { return testenv.Redis(t) }},
	}
}

func dialRedis(t *testing.T, url string) redis.UniversalClient {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("redis %s: %v", url, err)
	}
	return c
}

// eachRedis runs fn once per backend with a store on it.
func eachRedis(t *testing.T, fn func(t *testing.T, newStore func(t *testing.T) Store)) {
	for _, b := range redisBackends() {
		t.Run(b.name, func(t *testing.T) {
			st := NewRedis(dialRedis(t, b.url(t)))
			fn(t, func(*testing.T) Store { return st })
		})
	}
}

func TestRedisStore(t *testing.T) { eachRedis(t, storeContract) }

func TestRedisConcurrency(t *testing.T) { eachRedis(t, concurrencyContract) }

// TestRedisShuffleRace: what happens between a Shuffle's close and its
// store, run at that exact point by a client hook: another instance draws
// the order (the later store changes nothing), or the queue is deleted and
// made anew with another seed (the stale draw is not stored).
func TestRedisShuffleRace(t *testing.T) {
	ctx := context.Background()
	opens := t0.Add(time.Hour)
	cases := []struct {
		name    string
		between func(t *testing.T, other Store, show int64)
		drawn   bool // the queue's order is drawn at the end
	}{
		{"another instance draws", func(t *testing.T, other Store, show int64) {
			if !shuffle(t, other, show, opens) {
				t.Error("the other instance did not draw")
			}
		}, true},
		{"the queue is made anew", func(t *testing.T, other Store, show int64) {
			if err := other.Delete(ctx, show); err != nil {
				t.Fatal(err)
			}
			configure(t, other, show, Settings{Enabled: true, OpensAt: opens})
			join(t, other, show, 1, t0)
		}, false},
	}
	for _, b := range redisBackends() {
		t.Run(b.name, func(t *testing.T) {
			url := b.url(t)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					first, other := dialRedis(t, url), NewRedis(dialRedis(t, url))
					st := NewRedis(first)
					show := newShow(t, st)
					configure(t, st, show, Settings{Enabled: true, OpensAt: opens})
					for u := int64(1); u <= 30; u++ {
						join(t, st, show, u, t0)
					}
					var once sync.Once
					first.AddHook(beforeScript{hash: st.draw.Hash(), fn: func() {
						once.Do(func() { c.between(t, other, show) })
					}})
					if shuffle(t, st, show, opens) {
						t.Error("a draw stored over another")
					}
					s := status(t, st, show)
					if s.Shuffled != c.drawn {
						t.Fatalf("drawn %v, want %v", s.Shuffled, c.drawn)
					}
					if !c.drawn {
						return
					}
					entries, positions, err := st.Entries(ctx, show)
					if err != nil {
						t.Fatal(err)
					}
					if err := Verify(s.Seed, s.SeedHash, entries, positions); err != nil || !isPermutation(positions) {
						t.Errorf("after two draws: %v, positions %v", err, positions)
					}
				})
			}
		})
	}
}

// beforeScript runs fn before the script of the given hash runs.
type beforeScript struct {
	hash string
	fn   func()
}

func (beforeScript) DialHook(next redis.DialHook) redis.DialHook { return next }

func (beforeScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h beforeScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if a := cmd.Args(); cmd.Name() == "evalsha" && len(a) > 1 && a[1] == h.hash {
			h.fn()
		}
		return next(ctx, cmd)
	}
}
