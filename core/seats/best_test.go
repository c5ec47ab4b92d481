package seats

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"seatflow/core"
	"seatflow/core/testenv"
)

// The best-available reference: every fitting set (or, apart, every seat
// of each pick) scored by the rules of core/bestseats.go, written the
// plain way, so the stores' one-pass algorithm is checked against it.

// refIsolated reports which free seats of a row have no free neighbour.
func refIsolated(row []core.IndexSeat, free []bool) []bool {
	out := make([]bool, len(row))
	for i := range row {
		left := i > 0 && !row[i-1].Break && free[i-1]
		right := !row[i].Break && i+1 < len(row) && free[i+1]
		out[i] = free[i] && !left && !right
	}
	return out
}

// refStrands reports whether taking picks leaves a free seat alone that
// was not alone before.
func refStrands(row []core.IndexSeat, free []bool, picks []int) bool {
	after := slices.Clone(free)
	for _, p := range picks {
		after[p] = false
	}
	before, now := refIsolated(row, free), refIsolated(row, after)
	for i := range row {
		if now[i] && !before[i] {
			return true
		}
	}
	return false
}

type refKey struct {
	strand bool
	score  int64
	row, i int
}

func (a refKey) less(b refKey) bool {
	if a.strand != b.strand {
		return !a.strand
	}
	return cmp.Or(cmp.Compare(a.score, b.score), cmp.Compare(a.row, b.row), cmp.Compare(a.i, b.i)) < 0
}

// refChoose is the reference choice on rows with free per seat.
func refChoose(rows [][]core.IndexSeat, free [][]bool, req core.BestRequest) (core.BestChoice, []core.SeatsLeft, bool) {
	free = slices.Clone(free)
	for r := range free {
		free[r] = slices.Clone(free[r])
	}
	ok := func(s core.IndexSeat, f bool) bool {
		return f && (req.Category == "" || s.Category == req.Category) && s.Accessible == req.Accessible
	}
	var c core.BestChoice
	if req.Together {
		var best *refKey
		var bestStrand bool
		for r, row := range rows {
			for i := 0; i+req.Count <= len(row); i++ {
				picks, sum, fits := refWindow(row, free[r], i, req.Count, ok)
				if !fits {
					continue
				}
				strand := refStrands(row, free[r], picks)
				k := refKey{strand && req.AvoidSingles, sum, r, i}
				if best == nil || k.less(*best) {
					best, bestStrand = &k, strand
				}
			}
		}
		if best == nil {
			return c, refLeft(rows, free, req), false
		}
		for j := best.i; j < best.i+req.Count; j++ {
			c.SeatIDs = append(c.SeatIDs, rows[best.row][j].ID)
		}
		c.Stranded = bestStrand
		return c, nil, true
	}
	n := 0
	for r, row := range rows {
		for i, s := range row {
			if ok(s, free[r][i]) {
				n++
			}
		}
	}
	if n < req.Count {
		return c, refLeft(rows, free, req), false
	}
	for range req.Count {
		var best *refKey
		var bestStrand bool
		for r, row := range rows {
			for i, s := range row {
				if !ok(s, free[r][i]) {
					continue
				}
				strand := refStrands(row, free[r], []int{i})
				k := refKey{strand && req.AvoidSingles, s.Score, r, i}
				if best == nil || k.less(*best) {
					best, bestStrand = &k, strand
				}
			}
		}
		c.Stranded = c.Stranded || bestStrand
		free[best.row][best.i] = false
		c.SeatIDs = append(c.SeatIDs, rows[best.row][best.i].ID)
	}
	return c, nil, true
}

// refWindow is the set of k seats from i when they fit: eligible, and no
// aisle between them.
func refWindow(row []core.IndexSeat, free []bool, i, k int, ok func(core.IndexSeat, bool) bool) ([]int, int64, bool) {
	var picks []int
	var sum int64
	for j := i; j < i+k; j++ {
		if !ok(row[j], free[j]) || (j < i+k-1 && row[j].Break) {
			return nil, 0, false
		}
		picks = append(picks, j)
		sum += row[j].Score
	}
	return picks, sum, true
}

// refLeft counts per category the free seats of the asked accessibility
// and their longest stretch of one category together.
func refLeft(rows [][]core.IndexSeat, free [][]bool, req core.BestRequest) []core.SeatsLeft {
	by := map[string]*core.SeatsLeft{}
	for r, row := range rows {
		for i, s := range row {
			l := by[s.Category]
			if l == nil {
				l = &core.SeatsLeft{Category: s.Category}
				by[s.Category] = l
			}
			counts := func(j int) bool {
				return free[r][j] && row[j].Accessible == req.Accessible && row[j].Category == s.Category
			}
			if !counts(i) {
				continue
			}
			l.Free++
			n := 1 // the stretch ending at i
			for j := i - 1; j >= 0 && !row[j].Break && counts(j); j-- {
				n++
			}
			l.Together = max(l.Together, n)
		}
	}
	out := []core.SeatsLeft{}
	for _, l := range by {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b core.SeatsLeft) int { return cmp.Compare(a.Category, b.Category) })
	return out
}

// bestCase is one random best-available situation.
type bestCase struct {
	plan    []core.Seat
	rules   core.BestRules
	taken   []string
	blocked []string
	req     core.BestRequest
	after   int // what follows a first choice: afterRelease, afterKeep, afterLock
}

// What a case does after a first choice, before the one checked.
const (
	afterRelease = iota // its seats are released
	afterKeep           // its seats stay held
	afterLock           // they stay, and the next seat of the plan is locked by name
)

// genCase draws a plan of 1-40 rows of 1-60 seats, with aisles, three
// categories, accessible seats, ranks or a focal point, some seats taken
// and some blocked, and a request of 1-10 seats.
func genCase(rng *rand.Rand) bestCase {
	var c bestCase
	rows, ranked := 1+rng.IntN(40), rng.IntN(3) == 0
	width := 1 + rng.IntN(60)
	taken := []float64{0, 0.2, 0.5, 0.8, 0.95}[rng.IntN(5)]
	for r := 1; r <= rows; r++ {
		n, x := width, 0
		if rng.IntN(3) == 0 {
			n = 1 + rng.IntN(60)
		}
		for col := 1; col <= n; col++ {
			s := core.Seat{SeatID: "r" + strconv.Itoa(r) + "c" + strconv.Itoa(col), Row: r, Col: col,
				Category: []string{"A", "B", "C"}[min(2, (r-1)*3/rows)], X: x, Y: 2 * r}
			x++
			if rng.IntN(10) == 0 {
				s.Category = []string{"A", "B", "C"}[rng.IntN(3)]
			}
			if rng.IntN(12) == 0 {
				s.AisleAfter = true
				x += 2
			}
			if rng.IntN(20) == 0 {
				s.Accessible = []string{core.AccessibleWheelchair, core.AccessibleCompanion}[rng.IntN(2)]
			}
			if ranked && rng.IntN(8) != 0 {
				s.Rank = 1 + rng.IntN(100)
			}
			switch f := rng.Float64(); {
			case f < taken:
				c.taken = append(c.taken, s.SeatID)
			case f < taken+0.03:
				c.blocked = append(c.blocked, s.SeatID)
			}
			c.plan = append(c.plan, s)
		}
	}
	if rng.IntN(2) == 0 {
		c.rules = core.BestRules{FocalX: rng.IntN(80), FocalY: rng.IntN(90), FocalSet: true, AllowSingles: rng.IntN(6) == 0}
	}
	c.req = core.BestRequest{Count: 1 + rng.IntN(10), Together: rng.IntN(4) != 0,
		Category: []string{"", "", "A", "B", "C"}[rng.IntN(5)], Accessible: rng.IntN(10) == 0,
		AvoidSingles: !c.rules.AllowSingles}
	c.after = rng.IntN(3)
	return c
}

// bestCases is how many random cases a store gets: n, or
// SEATFLOW_BEST_CASES for a longer run (10000 gives every store the full
// property run of issue 30).
func bestCases(t *testing.T, n int) int {
	if v := os.Getenv("SEATFLOW_BEST_CASES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("SEATFLOW_BEST_CASES=%q: want a positive count", v)
		}
	}
	return n
}

// bestSeed is SEATFLOW_BEST_SEED when set, to replay a failure, else new.
func bestSeed(t *testing.T) uint64 {
	seed := rand.Uint64()
	if v := os.Getenv("SEATFLOW_BEST_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("SEATFLOW_BEST_SEED=%q: %v", v, err)
		}
	}
	t.Logf("seed %d (replay with SEATFLOW_BEST_SEED=%d)", seed, seed)
	return seed
}

// TestChooseAndLockMatchesReference runs random cases on each store and
// compares its choice, its stranded flag, what it locked and, when nothing
// fits, what it says is left, with the reference's.
func TestChooseAndLockMatchesReference(t *testing.T) {
	stores := []struct {
		name  string
		cases int
		store func(t *testing.T) *subject
	}{
		{"memory", 10_000, func(*testing.T) *subject { return memorySubject(NewMemory()) }},
		{"real", 2_000, func(t *testing.T) *subject { return redisSubject(dial(t, testenv.Redis(t))) }},
		{"cluster", 200, func(t *testing.T) *subject { return redisSubject(dial(t, testenv.RedisCluster(t))) }},
		{"sentinel", 200, func(t *testing.T) *subject { return redisSubject(dial(t, testenv.RedisSentinel(t))) }},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			s := st.store(t)
			seed := bestSeed(t)
			rng := rand.New(rand.NewPCG(seed, 30))
			ctx := context.Background()
			for n := range bestCases(t, st.cases) {
				c := genCase(rng)
				show := s.newShow(t)
				failed := checkCase(t, s, show, c)
				if err := s.DeleteShow(ctx, show); err != nil {
					t.Fatal(err)
				}
				if failed {
					t.Fatalf("case %d of seed %d (SEATFLOW_BEST_SEED=%d): request %+v", n, seed, seed, c.req)
				}
			}
		})
	}
}

// checkCase sets the case up in show, chooses, and reports a mismatch.
func checkCase(t *testing.T, s *subject, show int64, c bestCase) (failed bool) {
	t.Helper()
	ctx := context.Background()
	setUpCase(t, s, show, c)
	idx := core.BuildSeatIndex(c.plan, c.rules)
	notFree := map[string]bool{}
	// A first choice: the store learns the rows it read, and what follows
	// (c.after) must leave that true or make the store forget it.
	warm, err := s.ChooseAndLock(ctx, show, 2, "warm", idx, c.req, 0, t0)
	switch {
	case errors.Is(err, core.ErrNotEnoughSeats):
	case err != nil:
		t.Fatal(err)
	case c.after == afterRelease:
		if _, err := s.Release(ctx, show, 2, "warm", warm.SeatIDs); err != nil {
			t.Fatal(err)
		}
	default:
		for _, id := range warm.SeatIDs {
			notFree[id] = true
		}
		if c.after == afterLock {
			next := slices.IndexFunc(c.plan, func(p core.Seat) bool { return p.SeatID == warm.SeatIDs[len(warm.SeatIDs)-1] }) + 1
			if next < len(c.plan) && !slices.Contains(c.taken, c.plan[next].SeatID) &&
				!slices.Contains(c.blocked, c.plan[next].SeatID) && !notFree[c.plan[next].SeatID] {
				if err := s.Lock(ctx, show, 3, "named", []string{c.plan[next].SeatID}, 0, t0); err != nil {
					t.Fatal(err)
				}
				notFree[c.plan[next].SeatID] = true
			}
		}
	}
	for _, id := range append(slices.Clone(c.taken), c.blocked...) {
		notFree[id] = true
	}
	free := make([][]bool, len(idx.Rows))
	for r, row := range idx.Rows {
		for _, seat := range row {
			free[r] = append(free[r], !notFree[seat.ID])
		}
	}
	want, wantLeft, wantOK := refChoose(idx.Rows, free, c.req)
	got, err := s.ChooseAndLock(ctx, show, 1, "best", idx, c.req, 0, t0)
	if !wantOK {
		var ce *core.Error
		if !errors.Is(err, core.ErrNotEnoughSeats) || !errors.As(err, &ce) {
			t.Errorf("chose %+v (err %v), want not_enough_seats", got, err)
			return true
		}
		if !reflect.DeepEqual(ce.Left, wantLeft) {
			t.Errorf("left %+v, want %+v", ce.Left, wantLeft)
			return true
		}
		return false
	}
	if err != nil {
		t.Errorf("error %v, want %+v", err, want)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("chose %+v, want %+v", got, want)
		return true
	}
	locked, err := s.Holds(ctx, show)
	if err != nil {
		t.Fatal(err)
	}
	var mine []string
	for _, h := range locked {
		if h.OrderNo == "best" && h.State == core.SeatLocked && h.UserID == 1 {
			mine = append(mine, h.SeatID)
		}
	}
	if !reflect.DeepEqual(mine, slices.Sorted(slices.Values(got.SeatIDs))) {
		t.Errorf("locked %v, chose %v", mine, got.SeatIDs)
		return true
	}
	return false
}
