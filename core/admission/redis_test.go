package admission

import (
	"context"
	"testing"

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
