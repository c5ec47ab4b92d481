package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/server"
)

// benchClients is the concurrency of BenchmarkPlace, as `seatflow bench
// place` (RunParallel runs parallelism × GOMAXPROCS goroutines).
const benchClients = 64

// slotSeats is how many seats each order owns in its show: order i takes the
// first 1 + i%4 of them (2.5 on average, like place), so no order conflicts
// and every iteration measures a successful placement.
const slotSeats = 4

// benchShows pre-creates the shows b.N orders need (5,000 seats each).
type benchShows struct {
	ids   []int64
	plan  [][]core.Seat
	slots int // orders per show
}

func newBenchShows(b *testing.B, s *stacktest.Stack, orders int) *benchShows {
	const rows, cols = 50, 100
	bs := &benchShows{slots: rows * cols / slotSeats}
	for range (orders + bs.slots - 1) / bs.slots {
		show := s.NewShow(b, rows, cols)
		plan, err := s.DB.Seats(context.Background(), show.ID)
		if err != nil {
			b.Fatal(err)
		}
		bs.ids = append(bs.ids, show.ID)
		bs.plan = append(bs.plan, plan)
	}
	return bs
}

// order returns the i-th order's request.
func (bs *benchShows) order(i int) core.PlaceRequest {
	show, slot := i/bs.slots, i%bs.slots
	seats := bs.plan[show][slot*slotSeats : slot*slotSeats+1+i%slotSeats]
	ids := make([]string, len(seats))
	for k, st := range seats {
		ids[k] = st.SeatID
	}
	return core.PlaceRequest{UserID: int64(i + 1), ShowID: bs.ids[show], SeatIDs: ids}
}

// BenchmarkPlace is the place path in-process, for pprof: the engine alone,
// and the whole HTTP handler (echo, middleware, JSON) without a network.
//
//	go test ./server/bench -run '^$' -bench BenchmarkPlace -cpuprofile cpu.out
//
// The real stack needs SEATFLOW_TEST_MYSQL, _REDIS and _ROCKETMQ (as make test sets them).
func BenchmarkPlace(b *testing.B) {
	stacks := []struct {
		name string
		make func(testing.TB) *stacktest.Stack
	}{{StackEmbedded, stacktest.Embedded}, {StackReal, stacktest.Real}}
	for _, st := range stacks {
		b.Run(st.name, func(b *testing.B) {
			s := st.make(b)
			cfg := core.Config{HoldTTL: time.Hour, PurchaseLimit: 6, Delay: serverPolicy(st.name, "")}
			e := s.Engine(b, cfg, nil)
			b.Run("engine", func(b *testing.B) {
				// The same engine with every store call timed: µs-<step>/op
				// is where a placement waits.
				var t steps
				timed, err := core.NewEngine(cfg, core.Deps{Store: timedStore{s.DB, &t},
					Seats: timedSeats{s.Seats, &t}, Queue: timedQueue{s.Queue, &t}})
				if err != nil {
					b.Fatal(err)
				}
				before := s.DB.X().Stats()
				runPlaceBench(b, s, func(ctx context.Context, r core.PlaceRequest) error {
					_, err := timed.Place(ctx, r)
					return err
				})
				t.report(b)
				// Waiting for a pooled connection, and connections closed
				// because the idle pool was full (then dialled again).
				after := s.DB.X().Stats()
				b.ReportMetric(float64(after.WaitDuration-before.WaitDuration)/float64(b.N)/1e3, "µs-poolwait/op")
				b.ReportMetric(float64(after.MaxIdleClosed-before.MaxIdleClosed)/float64(b.N), "idleclosed/op")
			})
			b.Run("http", func(b *testing.B) {
				const token = "bench-token-0123456789"
				h := server.NewServer(server.Config{APIToken: token, PaymentSecret: "bench-secret-0123456789",
					RequestTimeout: 10 * time.Second}, server.Deps{Engine: e, DB: s.DB,
					Hub: server.NewSeatHub(nil, nil), Registry: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
				runPlaceBench(b, s, func(ctx context.Context, r core.PlaceRequest) error {
					body, err := json.Marshal(map[string]any{"user_id": r.UserID, "show_id": r.ShowID, "seat_ids": r.SeatIDs})
					if err != nil {
						return err
					}
					req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/v1/orders", bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+token)
					req.Header.Set("Content-Type", "application/json")
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusCreated {
						return fmt.Errorf("HTTP %d: %s", rec.Code, rec.Body)
					}
					return nil
				})
			})
		})
	}
}

func runPlaceBench(b *testing.B, s *stacktest.Stack, place func(context.Context, core.PlaceRequest) error) {
	shows := newBenchShows(b, s, b.N)
	var (
		next  atomic.Int64
		once  sync.Once
		first error
	)
	b.SetParallelism(max(benchClients/runtime.GOMAXPROCS(0), 1))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if err := place(ctx, shows.order(int(next.Add(1)-1))); err != nil {
				once.Do(func() { first = err })
			}
		}
	})
	b.StopTimer()
	if first != nil {
		b.Fatal(first)
	}
}
