package seats

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"sync"
	"testing"

	"seatflow/core"
	"seatflow/core/testenv"
)

// TestChooseAndLockConcurrent sends 500 best-available requests of 1-8
// seats at once to a 2,000-seat show, a tenth of it sold, and checks the
// final map: no seat went to two requests, the store holds exactly what it
// answered, no request was refused while a set fitting it is still free
// (seats are only taken here, so one free at the end was free when it was
// refused), and every single seat left alone by the rush was reported
// stranded by a request that took a neighbour of it (the last one to do so
// reports it, so an unreported stranding leaves no such request).
func TestChooseAndLockConcurrent(t *testing.T) {
	stores := []struct {
		name  string
		store func(t *testing.T) *subject
	}{
		{"memory", func(*testing.T) *subject { return memorySubject(NewMemory()) }},
		{"real", func(t *testing.T) *subject {
			// The rush waits for a connection of a bounded pool, and for its
			// reply behind the other scripts, as long as it takes: what is
			// checked here is the outcome, not the time (a loaded CI machine
			// under -race once took longer than the default 3 s read).
			u, err := url.Parse(testenv.Redis(t))
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			q.Set("pool_timeout", "60s")
			q.Set("read_timeout", "60s")
			u.RawQuery = q.Encode()
			rdb, err := DialWith(context.Background(), u.String(), DialOptions{PoolSize: 64})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = rdb.Close() })
			return redisSubject(rdb)
		}},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			s := st.store(t)
			ctx := context.Background()
			show := s.newShow(t)
			t.Cleanup(func() { _ = s.DeleteShow(ctx, show) })
			seed := bestSeed(t)
			rng := rand.New(rand.NewPCG(seed, 500))
			var plan []core.Seat
			var sold []core.SeatHold
			for r := 1; r <= 20; r++ {
				for c := 1; c <= 100; c++ {
					id := "r" + strconv.Itoa(r) + "c" + strconv.Itoa(c)
					plan = append(plan, core.Seat{SeatID: id, Row: r, Col: c, Category: []string{"A", "B"}[(r-1)/10],
						X: c, Y: r, AisleAfter: c%25 == 0})
					if rng.IntN(10) == 0 {
						sold = append(sold, core.SeatHold{SeatID: id, State: core.SeatSold, OrderNo: "sold", UserID: 9, LockedAt: t0})
					}
				}
			}
			if err := s.Replace(ctx, show, sold); err != nil {
				t.Fatal(err)
			}
			idx := core.BuildSeatIndex(plan, core.BestRules{})
			reqs := make([]core.BestRequest, 500)
			for i := range reqs {
				reqs[i] = core.BestRequest{Count: 1 + rng.IntN(8), Together: rng.IntN(4) != 0,
					Category: []string{"", "A", "B"}[rng.IntN(3)], AvoidSingles: true}
			}
			before := freeMap(idx, sold)

			got := make([]core.BestChoice, len(reqs))
			errs := make([]error, len(reqs))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, req := range reqs {
				wg.Go(func() {
					<-start
					got[i], errs[i] = s.ChooseAndLock(ctx, show, int64(100+i), fmt.Sprintf("rush%d", i), idx, req, 0, t0)
				})
			}
			close(start)
			wg.Wait()

			owner := map[string]int{} // seat → request
			refused, stranded := 0, 0
			for i, err := range errs {
				switch {
				case errors.Is(err, core.ErrNotEnoughSeats):
					refused++
					continue
				case err != nil:
					t.Fatalf("request %d %+v: %v", i, reqs[i], err)
				}
				if len(got[i].SeatIDs) != reqs[i].Count {
					t.Errorf("request %d %+v: chose %v", i, reqs[i], got[i].SeatIDs)
				}
				if got[i].Stranded {
					stranded++
				}
				for _, id := range got[i].SeatIDs {
					if j, dup := owner[id]; dup {
						t.Errorf("seat %s went to requests %d and %d", id, j, i)
					}
					owner[id] = i
				}
			}
			holds, err := s.Holds(ctx, show)
			if err != nil {
				t.Fatal(err)
			}
			var final []core.SeatHold
			for _, h := range holds {
				if h.OrderNo == "sold" {
					final = append(final, h)
					continue
				}
				if i, ok := owner[h.SeatID]; !ok || h.OrderNo != fmt.Sprintf("rush%d", i) {
					t.Errorf("store holds %s for %s, answered to request %d (%v)", h.SeatID, h.OrderNo, i, ok)
				}
				final = append(final, h)
			}
			if len(final) != len(sold)+len(owner) {
				t.Errorf("store holds %d seats, %d sold and %d answered", len(final), len(sold), len(owner))
			}
			after := freeMap(idx, final)
			for i, err := range errs {
				if err == nil {
					continue
				}
				if c, _, ok := refChoose(idx.Rows, after, reqs[i]); ok {
					t.Errorf("request %d %+v refused, but %v is free at the end", i, reqs[i], c.SeatIDs)
				}
			}
			for r, row := range idx.Rows {
				alone, was := refIsolated(row, after[r]), refIsolated(row, before[r])
				for i := range row {
					if !alone[i] || was[i] {
						continue
					}
					reported := false
					for _, j := range []int{i - 1, i + 1} {
						if j < 0 || j >= len(row) || (j < i && row[j].Break) || (j > i && row[i].Break) {
							continue
						}
						if k, ok := owner[row[j].ID]; ok && got[k].Stranded {
							reported = true
						}
					}
					if !reported {
						t.Errorf("seat %s left alone, and no request beside it said so", row[i].ID)
					}
				}
			}
			t.Logf("%d placed (%d stranding a seat), %d refused", len(reqs)-refused, stranded, refused)
		})
	}
}

// freeMap is which seats of idx are free with holds taken.
func freeMap(idx *core.SeatIndex, holds []core.SeatHold) [][]bool {
	taken := map[string]bool{}
	for _, h := range holds {
		taken[h.SeatID] = true
	}
	free := make([][]bool, len(idx.Rows))
	for r, row := range idx.Rows {
		for _, s := range row {
			free[r] = append(free[r], !taken[s.ID])
		}
	}
	return free
}
