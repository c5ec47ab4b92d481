package seats

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/testenv"
)

// BenchmarkChooseAndLock20000 times one best-available choice (and the
// release that puts the seats back) on a 20,000-seat show, 200 rows of
// 100 with an aisle every 20 seats, empty and half sold: one round trip
// of best.lua on real Redis, the Go algorithm in memory. lock4 is a plain
// Lock and Release of 4 named seats on the same store: the yardstick the
// script's cost is read against.
func BenchmarkChooseAndLock20000(b *testing.B) {
	plan, idx := arena20000()
	stores := benchStores()
	for _, st := range stores {
		b.Run(st.name+"/lock4", func(b *testing.B) {
			s := st.s(b)
			ctx := context.Background()
			show := s.newShow(b)
			b.Cleanup(func() { _ = s.DeleteShow(ctx, show) })
			seats := []string{"r1c48", "r1c49", "r1c50", "r1c51"}
			for b.Loop() {
				if err := s.Lock(ctx, show, 1, "named", seats, 0, t0); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Release(ctx, show, 1, "named", seats); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, sold := range []float64{0, 0.5} {
			for _, together := range []bool{true, false} {
				b.Run(fmt.Sprintf("%s/sold=%v/together=%v", st.name, sold, together), func(b *testing.B) {
					s := st.s(b)
					ctx := context.Background()
					show := s.newShow(b)
					b.Cleanup(func() { _ = s.DeleteShow(ctx, show) })
					rng := rand.New(rand.NewPCG(1, 2))
					var holds []core.SeatHold
					for _, p := range plan {
						if rng.Float64() < sold {
							holds = append(holds, core.SeatHold{SeatID: p.SeatID, State: core.SeatSold, OrderNo: "o", UserID: 9})
						}
					}
					if err := s.Replace(ctx, show, holds); err != nil {
						b.Fatal(err)
					}
					req := core.BestRequest{Count: 4, Together: together, AvoidSingles: true}
					for b.Loop() {
						c, err := s.ChooseAndLock(ctx, show, 1, "best", idx, req, 0, t0)
						if err != nil {
							b.Fatal(err)
						}
						if _, err := s.Release(ctx, show, 1, "best", c.SeatIDs); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkChooseAndLockSellOut sells out a show of 200 rows of 100 (an
// aisle every 20 seats) the way the place bench does: 1 to 4 seats
// together until none fit, then apart, each choice kept, by 1 client or
// by 64 at once (whose choices Redis runs in batches, bestbatch.go). It
// reports the machine time per choice and the slowest choice (a round
// trip on Redis), the late sale being where best.lua reads the most rows.
func BenchmarkChooseAndLockSellOut(b *testing.B) {
	_, idx := arena20000()
	stores := benchStores()
	for _, st := range stores {
		for _, clients := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", st.name, clients), func(b *testing.B) {
				s := st.s(b)
				var choices atomic.Int64
				var slowest atomic.Int64 // µs
				for b.Loop() {
					show := s.newShow(b)
					sellOut(b, s, show, idx, clients, &choices, &slowest)
					_ = s.DeleteShow(context.Background(), show)
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(choices.Load()), "µs/choice")
				b.ReportMetric(float64(slowest.Load()), "µs-slowest")
			})
		}
	}
}

// sellOut sells show out with clients choosing at once, counting the
// choices and keeping the slowest.
func sellOut(b *testing.B, s *subject, show int64, idx *core.SeatIndex, clients int, choices, slowest *atomic.Int64) {
	var apart atomic.Bool
	var next atomic.Int64
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(1, uint64(c)))
			for {
				n := next.Add(1)
				together := !apart.Load()
				req := core.BestRequest{Count: 1 + rng.IntN(4), Together: together, AvoidSingles: true}
				start := time.Now()
				_, err := s.ChooseAndLock(context.Background(), show, n, "o"+strconv.FormatInt(n, 10), idx, req, 0, t0)
				took := time.Since(start).Microseconds()
				for old := slowest.Load(); took > old && !slowest.CompareAndSwap(old, took); old = slowest.Load() {
				}
				choices.Add(1)
				if errors.Is(err, core.ErrNotEnoughSeats) {
					if !together {
						return
					}
					apart.Store(true)
					continue
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// arena20000 is the benchmarks' show and its index: 200 rows of 100
// seats, an aisle every 20.
func arena20000() ([]core.Seat, *core.SeatIndex) {
	var plan []core.Seat
	for r := 1; r <= 200; r++ {
		for c := 1; c <= 100; c++ {
			plan = append(plan, core.Seat{SeatID: "r" + strconv.Itoa(r) + "c" + strconv.Itoa(c), Row: r, Col: c,
				Category: "A", X: c, Y: r, AisleAfter: c%20 == 0})
		}
	}
	return plan, core.BuildSeatIndex(plan, core.BestRules{})
}

// benchStore is a seat store the benchmarks run on.
type benchStore struct {
	name string
	s    func(b *testing.B) *subject
}

// benchStores are the in-process store and real Redis.
func benchStores() []benchStore {
	return []benchStore{
		{"memory", func(*testing.B) *subject { return memorySubject(NewMemory()) }},
		{"redis", func(b *testing.B) *subject { return redisSubject(dial(b, testenv.Redis(b))) }},
	}
}
