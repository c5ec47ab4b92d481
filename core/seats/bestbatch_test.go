package seats

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"seatflow/core"

	"github.com/redis/go-redis/v9"
)

// TestBestQueuesBatch: a lone call runs at once; calls arriving while a
// batch runs are answered by the next run, together, one index tag per
// run, run by one of them (the first caller returns after its own batch);
// every caller gets its own answer.
func TestBestQueuesBatch(t *testing.T) {
	var q bestQueues
	tagA, tagB := &core.SeatIndex{Tag: "a"}, &core.SeatIndex{Tag: "b"}
	var (
		mu   sync.Mutex
		runs [][]string // the order numbers of each run
	)
	started, release, loneBack := make(chan struct{}), make(chan struct{}), make(chan struct{})
	run := func(_ context.Context, batch []*bestCall) {
		mu.Lock()
		var nos []string
		for _, c := range batch {
			nos = append(nos, c.orderNo)
			c.choice.SeatIDs = []string{"seat-of-" + c.orderNo}
		}
		runs = append(runs, nos)
		n := len(runs)
		mu.Unlock()
		switch n {
		case 1:
			close(started)
			<-release // the first run is under way while the others queue
		case 2:
			select {
			case <-loneBack:
			case <-time.After(10 * time.Second):
				t.Error("the first caller is still at work: it runs the others' batch instead of handing it on")
			}
		}
	}
	queued := func() int {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.queued[1])
	}
	var wg sync.WaitGroup
	call := func(no string, idx *core.SeatIndex) {
		wg.Go(func() {
			c := &bestCall{orderNo: no, idx: idx}
			q.choose(context.Background(), 1, c, run)
			if no == "lone" {
				close(loneBack)
			}
			if want := []string{"seat-of-" + no}; !slices.Equal(c.choice.SeatIDs, want) {
				t.Errorf("%s answered %v, want %v", no, c.choice.SeatIDs, want)
			}
		})
	}
	call("lone", tagA)
	<-started
	// While "lone" runs, a call of index a queues first, then b, a, b, a...
	for i, no := range []string{"a0", "b0", "a1", "b1", "a2", "a3", "a4"} {
		idx := tagA
		if no[0] == 'b' {
			idx = tagB
		}
		call(no, idx)
		for queued() != i+1 {
			runtime.Gosched()
		}
	}
	close(release)
	wg.Wait()
	if len(runs) != 3 || len(runs[0]) != 1 || len(runs[1]) != 5 || len(runs[2]) != 2 {
		t.Fatalf("runs %v: want the lone call, then the five of index a, then the two of b", runs)
	}
	slices.Sort(runs[1])
	if !slices.Equal(runs[1], []string{"a0", "a1", "a2", "a3", "a4"}) || !slices.Equal(runs[2], []string{"b0", "b1"}) {
		t.Fatalf("runs %v mix indexes", runs)
	}
	if n := queued(); n != 0 || len(q.queued) != 0 {
		t.Fatalf("%d calls still queued, %d shows running after the last run", n, len(q.queued))
	}
}

// TestBestBatchAnswersAsOneByOne: a batch of random requests run as one
// script answers each exactly as the same requests sent one by one to a
// show in the same state, and leaves the same seats and limits: what the
// batch shares (rows read, the walk, learnt bounds) changes no choice.
func TestBestBatchAnswersAsOneByOne(t *testing.T) {
	for _, b := range backends() {
		if b.name == "cluster" || b.name == "sentinel" {
			continue // the same script: the single node and the embedded server show it
		}
		t.Run(b.name, func(t *testing.T) {
			rdb := b.dial(t)
			s := New(rdb)
			seed := bestSeed(t)
			rng := rand.New(rand.NewPCG(seed, 31))
			ctx := context.Background()
			for n := range bestCases(t, 100) {
				c := genCase(rng)
				idx := core.BuildSeatIndex(c.plan, c.rules)
				var batch, oneByOne []*bestCall
				limit := []int{0, 0, 6}[rng.IntN(3)]
				for i := range 2 + rng.IntN(12) {
					req := core.BestRequest{Count: 1 + rng.IntN(6), Together: rng.IntN(4) != 0,
						Category: []string{"", "", "A", "B", "C"}[rng.IntN(5)], Accessible: rng.IntN(10) == 0,
						AvoidSingles: !c.rules.AllowSingles}
					user := int64(1 + rng.IntN(3))
					no := "o" + strconv.Itoa(i)
					batch = append(batch, &bestCall{userID: user, orderNo: no, idx: idx, req: req, limit: limit, now: t0})
					oneByOne = append(oneByOne, &bestCall{userID: user, orderNo: no, idx: idx, req: req, limit: limit, now: t0})
				}
				shows := [2]int64{newShow(t, rdb), newShow(t, rdb)}
				for _, show := range shows {
					setUpCase(t, s, show, c)
				}
				s.runBest(ctx, shows[0], batch)
				for _, call := range oneByOne {
					s.runBest(ctx, shows[1], []*bestCall{call})
				}
				for i := range batch {
					got, want := answer(batch[i], shows[0]), answer(oneByOne[i], shows[1])
					if got != want {
						t.Fatalf("case %d of seed %d (SEATFLOW_BEST_SEED=%d), request %d %+v: batch answered %s, one by one %s",
							n, seed, seed, i, batch[i].req, got, want)
					}
				}
				for _, read := range []func(int64) (any, error){
					func(show int64) (any, error) { return s.Holds(ctx, show) },
					func(show int64) (any, error) { return s.Limits(ctx, show) },
				} {
					a, errA := read(shows[0])
					b, errB := read(shows[1])
					if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
						t.Fatalf("case %d of seed %d: after the batch %v (%v), one by one %v (%v)", n, seed, a, errA, b, errB)
					}
				}
			}
		})
	}
}

// answer is a call's outcome on show as text, to compare two of them.
func answer(c *bestCall, show int64) string {
	if c.err != nil {
		return "error: " + strings.ReplaceAll(c.err.Error(), strconv.FormatInt(show, 10), "SHOW")
	}
	return fmt.Sprintf("%v stranded=%v", c.choice.SeatIDs, c.choice.Stranded)
}

// setUpCase gives show the taken and blocked seats of c.
func setUpCase(t *testing.T, s Interface, show int64, c bestCase) {
	t.Helper()
	ctx := context.Background()
	var holds []core.SeatHold
	for _, id := range c.taken {
		holds = append(holds, core.SeatHold{SeatID: id, State: core.SeatSold, OrderNo: "other", UserID: 9, LockedAt: t0})
	}
	var blocks []core.SeatBlock
	for _, id := range c.blocked {
		blocks = append(blocks, core.SeatBlock{SeatID: id, Reason: core.BlockHouse, BlockedAt: t0})
	}
	if err := s.Replace(ctx, show, holds); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceBlocks(ctx, show, blocks); err != nil {
		t.Fatal(err)
	}
}

// TestBestFailedApartLeavesSeatsOnSale: an apart request for more seats
// than are free picks them one by one, finds too few and gives them back;
// the rows it filled on the way are free again for the next request, in
// the same script run (a batch) and in the next.
func TestBestFailedApartLeavesSeatsOnSale(t *testing.T) {
	var plan []core.Seat
	for r := 1; r <= 3; r++ {
		for c := 1; c <= 3; c++ {
			plan = append(plan, core.Seat{SeatID: "r" + strconv.Itoa(r) + "c" + strconv.Itoa(c), Row: r, Col: c,
				Category: "A", X: c, Y: r})
		}
	}
	idx := core.BuildSeatIndex(plan, core.BestRules{AllowSingles: true})
	// One seat free in each of rows 1 and 2, row 3 sold out.
	var taken []core.SeatHold
	for _, p := range plan {
		if p.SeatID != "r1c2" && p.SeatID != "r2c2" {
			taken = append(taken, core.SeatHold{SeatID: p.SeatID, State: core.SeatSold, OrderNo: "other", UserID: 9, LockedAt: t0})
		}
	}
	apart := func(n int) core.BestRequest { return core.BestRequest{Count: n, Together: false} }
	eachBackend(t, func(t *testing.T, rdb redis.UniversalClient) {
		s := New(rdb)
		ctx := context.Background()
		show := newShow(t, rdb)
		if err := s.Replace(ctx, show, taken); err != nil {
			t.Fatal(err)
		}
		batch := []*bestCall{
			{userID: 1, orderNo: "three", idx: idx, req: apart(3), now: t0},
			{userID: 2, orderNo: "one", idx: idx, req: apart(1), now: t0},
		}
		s.runBest(ctx, show, batch)
		if !errors.Is(batch[0].err, core.ErrNotEnoughSeats) {
			t.Fatalf("3 apart of 2 free: %v %v, want not enough seats", batch[0].choice, batch[0].err)
		}
		if batch[1].err != nil || !slices.Equal(batch[1].choice.SeatIDs, []string{"r1c2"}) {
			t.Fatalf("1 seat after the failed 3, same run: %v %v, want r1c2", batch[1].choice, batch[1].err)
		}
		next := []*bestCall{{userID: 3, orderNo: "last", idx: idx, req: apart(1), now: t0}}
		s.runBest(ctx, show, next)
		if next[0].err != nil || !slices.Equal(next[0].choice.SeatIDs, []string{"r2c2"}) {
			t.Fatalf("the last free seat, next run: %v %v, want r2c2", next[0].choice, next[0].err)
		}
	})
}
