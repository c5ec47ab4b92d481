package seats

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// rawEval is the yardstick for BenchmarkLock: one round trip running a
// script that reads and writes one field of one hash.
const rawEval = `local v = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return v`

// seatsPerShow bounds each benchmark hash; iterations move to the next show.
const seatsPerShow = 4000

// benchOp runs op once per iteration with a fresh iteration number, serially
// and from parallel goroutines, on each backend. Every iteration writes new
// fields, in shows starting at a random id that are deleted afterwards.
func benchOp(b *testing.B, op func(ctx context.Context, rdb redis.UniversalClient, s *Store, show int64, i int64) error, perIter int64) {
	for _, be := range backends() {
		for _, parallel := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/parallel=%v", be.name, parallel), func(b *testing.B) {
				rdb := be.dial(b)
				s := New(rdb)
				ctx := context.Background()
				base := newShow(b, rdb)
				var next atomic.Int64
				b.Cleanup(func() {
					for show := base; show <= base+next.Load()*perIter/seatsPerShow; show++ {
						rdb.Unlink(ctx, KeySeats(show), KeyLimit(show))
					}
				})
				run := func() {
					i := next.Add(1)
					if err := op(ctx, rdb, s, base+i*perIter/seatsPerShow, i); err != nil {
						b.Error(err)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				if !parallel {
					for b.Loop() {
						run()
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						run()
					}
				})
			})
		}
	}
}

// BenchmarkLock locks fresh seats for a fresh order (no limit) per iteration.
func BenchmarkLock(b *testing.B) {
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("seats=%d", n), func(b *testing.B) {
			benchOp(b, func(ctx context.Context, _ redis.UniversalClient, s *Store, show, i int64) error {
				seats := make([]string, n)
				for k := range seats {
					seats[k] = strconv.FormatInt(i, 10) + "-" + strconv.Itoa(k)
				}
				return s.Lock(ctx, show, i%100, "b"+strconv.FormatInt(i, 10), seats, 0, t0)
			}, int64(n))
		})
	}
}

// BenchmarkRawEval runs the trivial HGET+HSET script the same way.
func BenchmarkRawEval(b *testing.B) {
	script := redis.NewScript(rawEval)
	benchOp(b, func(ctx context.Context, rdb redis.UniversalClient, _ *Store, show, i int64) error {
		field := strconv.FormatInt(i, 10)
		err := script.Run(ctx, rdb, []string{KeySeats(show)}, field, field).Err()
		if errors.Is(err, redis.Nil) { // a new field: HGET returned nil
			return nil
		}
		return err
	}, 1)
}

// BenchmarkMemoryLock is BenchmarkLock on the in-process store, from
// parallel goroutines into one show (a sale's rush) or spread over 64.
func BenchmarkMemoryLock(b *testing.B) {
	for _, shows := range []int64{1, 64} {
		for _, n := range []int{1, 4} {
			b.Run(fmt.Sprintf("shows=%d/seats=%d", shows, n), func(b *testing.B) {
				m := NewMemory()
				ctx := context.Background()
				var next atomic.Int64
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						i := next.Add(1)
						seats := make([]string, n)
						for k := range seats {
							seats[k] = strconv.FormatInt(i, 10) + "-" + strconv.Itoa(k)
						}
						// Each show holds up to seatsPerShow seats; then the next one.
						show := i%shows + shows*(i*int64(n)/seatsPerShow)
						if err := m.Lock(ctx, show, i%100, "b"+strconv.FormatInt(i, 10), seats, 0, t0); err != nil {
							b.Error(err)
						}
					}
				})
			})
		}
	}
}
