package seats

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
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
	var plan []core.Seat
	for r := 1; r <= 200; r++ {
		for c := 1; c <= 100; c++ {
			plan = append(plan, core.Seat{SeatID: "r" + strconv.Itoa(r) + "c" + strconv.Itoa(c), Row: r, Col: c,
				Category: "A", X: c, Y: r, AisleAfter: c%20 == 0})
		}
	}
	idx := core.BuildSeatIndex(plan, core.BestRules{})
	stores := []struct {
		name string
		s    func(b *testing.B) *subject
	}{
		{"memory", func(*testing.B) *subject { return memorySubject(NewMemory()) }},
		{"redis", func(b *testing.B) *subject { return redisSubject(dial(b, testenv.Redis(b))) }},
	}
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
// together until none fit, then apart, each choice kept. It reports the
// mean and the slowest choice of a sell-out (one round trip on Redis), the
// late sale being where best.lua reads the most rows.
func BenchmarkChooseAndLockSellOut(b *testing.B) {
	var plan []core.Seat
	for r := 1; r <= 200; r++ {
		for c := 1; c <= 100; c++ {
			plan = append(plan, core.Seat{SeatID: "r" + strconv.Itoa(r) + "c" + strconv.Itoa(c), Row: r, Col: c,
				Category: "A", X: c, Y: r, AisleAfter: c%20 == 0})
		}
	}
	idx := core.BuildSeatIndex(plan, core.BestRules{})
	stores := []struct {
		name string
		s    func(b *testing.B) *subject
	}{
		{"memory", func(*testing.B) *subject { return memorySubject(NewMemory()) }},
		{"redis", func(b *testing.B) *subject { return redisSubject(dial(b, testenv.Redis(b))) }},
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			s := st.s(b)
			ctx := context.Background()
			var choices int
			var slowest time.Duration
			for b.Loop() {
				show := s.newShow(b)
				rng := rand.New(rand.NewPCG(1, 2))
				together := true
				for n := 0; ; n++ {
					req := core.BestRequest{Count: 1 + rng.IntN(4), Together: together, AvoidSingles: true}
					start := time.Now()
					_, err := s.ChooseAndLock(ctx, show, int64(n), "o"+strconv.Itoa(n), idx, req, 0, t0)
					slowest = max(slowest, time.Since(start))
					choices++
					if errors.Is(err, core.ErrNotEnoughSeats) {
						if !together {
							break
						}
						together = false
						continue
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				_ = s.DeleteShow(ctx, show)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(choices), "µs/choice")
			b.ReportMetric(float64(slowest.Microseconds()), "µs-slowest")
		})
	}
}
