package seats

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
)

//go:embed best.lua
var bestLua string

// best holds no state but the script and its hash: one serves every Store.
var best = redis.NewScript(bestLua)

// KeyBest is the hash of a show's seat index for best available: field t
// the index's tag, n its row count, 1..n its rows, o1..o10 its row orders,
// c its categories (best.lua).
func KeyBest(showID int64) string { return fmt.Sprintf("sf:{show:%d}:best", showID) }

// KeyBestBounds is the hash of the row bounds best.lua learnt of a show
// (core.RowBounds), field row → its bounds. Every other change of which
// seats are free deletes it (a release, a named lock, a block...).
func KeyBestBounds(showID int64) string { return fmt.Sprintf("sf:{show:%d}:bestb", showID) }

// ChooseAndLock implements core.SeatStore (best.lua), in one script run
// with the show's other choices under way (bestbatch.go).
func (s *Store) ChooseAndLock(ctx context.Context, showID, userID int64, orderNo string, idx *core.SeatIndex, req core.BestRequest, limit int, now time.Time) (core.BestChoice, error) {
	if err := checkBest(orderNo, req); err != nil {
		return core.BestChoice{}, err
	}
	c := &bestCall{userID: userID, orderNo: orderNo, idx: idx, req: req, limit: limit, now: now}
	s.best.choose(ctx, showID, c, func(ctx context.Context, batch []*bestCall) { s.runBest(ctx, showID, batch) })
	return c.choice, c.err
}

// runBest answers a batch of choices of one show and index. The index is
// written when the stored one is missing or has another tag (a new plan,
// new rules, a Redis that lost it), then the script runs once more.
func (s *Store) runBest(ctx context.Context, showID int64, batch []*bestCall) {
	idx := batch[0].idx
	keys := []string{KeySeats(showID), KeyLimit(showID), KeyBlocked(showID), KeyBest(showID), KeyBestBounds(showID)}
	args := make([]any, 0, 1+9*len(batch))
	args = append(args, idx.Tag)
	for _, c := range batch {
		args = append(args, c.orderNo, strconv.FormatInt(c.userID, 10), c.limit, c.now.UnixMilli(), c.req.Count,
			c.req.Category, digit(c.req.Together), digit(c.req.Accessible), digit(c.req.AvoidSingles))
	}
	fail := func(err error) {
		for _, c := range batch {
			c.err = err
		}
	}
	what := fmt.Sprintf("choose seats of show %d for %d orders from %s", showID, len(batch), batch[0].orderNo)
	for range 2 {
		res, err := best.Run(ctx, s.rdb, keys, args...).Slice()
		if err != nil {
			fail(wrap(what, err))
			return
		}
		if len(res) == 1 && res[0] == "index" {
			if err := s.writeIndex(ctx, showID, idx); err != nil {
				fail(err)
				return
			}
			continue
		}
		if len(res) != len(batch) {
			fail(fmt.Errorf("seats: %s: %d replies", what, len(res)))
			return
		}
		for i, c := range batch {
			c.choice, c.err = bestReply(showID, c, res[i])
		}
		return
	}
	// Another instance wrote another index between: its plan or ours is
	// stale, and Place reloads the plan on this error.
	fail(core.ErrPlanChanged)
}

// bestReply is what best.lua answered one call.
func bestReply(showID int64, c *bestCall, reply any) (core.BestChoice, error) {
	items, _ := reply.([]any)
	res := make([]string, len(items))
	for i, v := range items {
		res[i], _ = v.(string)
	}
	switch {
	case len(res) >= 2 && res[0] == "ok":
		return core.BestChoice{Stranded: res[1] == "1", SeatIDs: res[2:]}, nil
	case len(res) == 1 && res[0] == "limit":
		return core.BestChoice{}, limitErr(showID, c.userID, c.req.Count, c.limit)
	case len(res) >= 1 && res[0] == "none":
		return core.BestChoice{}, notEnough(parseLeft(res[1:]))
	}
	return core.BestChoice{}, fmt.Errorf("seats: choose seats of show %d for order %s: unexpected script reply %q",
		showID, c.orderNo, res)
}

// writeIndex replaces the show's stored index in one MULTI/EXEC.
func (s *Store) writeIndex(ctx context.Context, showID int64, idx *core.SeatIndex) error {
	fields := make([]any, 0, 6+2*len(idx.Encoded)+2*len(idx.Order))
	var cats strings.Builder
	for _, c := range idx.Categories {
		cats.WriteString(c + ";")
	}
	fields = append(fields, "t", idx.Tag, "n", len(idx.Encoded), "c", cats.String())
	for i, row := range idx.Encoded {
		fields = append(fields, strconv.Itoa(i+1), row)
	}
	for k, order := range idx.Order {
		fields = append(fields, "o"+strconv.Itoa(k+1), order)
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, KeyBest(showID), KeyBestBounds(showID))
		p.HSet(ctx, KeyBest(showID), fields...)
		return nil
	})
	if err != nil {
		return wrap(fmt.Sprintf("write the seat index of show %d", showID), err)
	}
	return nil
}

func digit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// parseLeft reads the script's category, free, together triples.
func parseLeft(res []string) []core.SeatsLeft {
	out := make([]core.SeatsLeft, 0, len(res)/3)
	for i := 0; i+2 < len(res); i += 3 {
		free, _ := strconv.Atoi(res[i+1])
		together, _ := strconv.Atoi(res[i+2])
		out = append(out, core.SeatsLeft{Category: res[i], Free: free, Together: together})
	}
	slices.SortFunc(out, func(a, b core.SeatsLeft) int { return strings.Compare(a.Category, b.Category) })
	return out
}

// checkBest validates a ChooseAndLock's arguments.
func checkBest(orderNo string, req core.BestRequest) error {
	if err := checkOrderNo(orderNo); err != nil {
		return err
	}
	if req.Count < 1 || req.Count > core.MaxBestCount {
		return core.Invalidf("%d seats to choose, want 1 to %d", req.Count, core.MaxBestCount)
	}
	return nil
}

func limitErr(showID, userID int64, n, limit int) error {
	return fmt.Errorf("seats: lock %d seats of show %d for user %d (limit %d): %w",
		n, showID, userID, limit, core.ErrPurchaseLimit)
}

// notEnough is ErrNotEnoughSeats saying what is left.
func notEnough(left []core.SeatsLeft) error {
	e := *core.ErrNotEnoughSeats
	e.Left = left
	return &e
}
