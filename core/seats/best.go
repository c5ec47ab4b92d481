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

// ChooseAndLock implements core.SeatStore (best.lua). The index is written
// when the stored one is missing or has another tag (a new plan, new rules,
// a Redis that lost it), then the script runs once more.
func (s *Store) ChooseAndLock(ctx context.Context, showID, userID int64, orderNo string, idx *core.SeatIndex, req core.BestRequest, limit int, now time.Time) (core.BestChoice, error) {
	if err := checkBest(orderNo, req); err != nil {
		return core.BestChoice{}, err
	}
	keys := []string{KeySeats(showID), KeyLimit(showID), KeyBlocked(showID), KeyBest(showID), KeyBestBounds(showID)}
	args := []any{orderNo, strconv.FormatInt(userID, 10), limit, now.UnixMilli(), idx.Tag, req.Count,
		req.Category, digit(req.Together), digit(req.Accessible), digit(req.AvoidSingles)}
	what := fmt.Sprintf("choose seats of show %d for order %s", showID, orderNo)
	for range 2 {
		res, err := best.Run(ctx, s.rdb, keys, args...).StringSlice()
		if err != nil {
			return core.BestChoice{}, wrap(what, err)
		}
		switch res[0] {
		case "ok":
			return core.BestChoice{Stranded: res[1] == "1", SeatIDs: res[2:]}, nil
		case "limit":
			return core.BestChoice{}, limitErr(showID, userID, req.Count, limit)
		case "none":
			return core.BestChoice{}, notEnough(parseLeft(res[1:]))
		case "index":
			if err := s.writeIndex(ctx, showID, idx); err != nil {
				return core.BestChoice{}, err
			}
			continue
		}
		return core.BestChoice{}, fmt.Errorf("seats: %s: unexpected script reply %q", what, res)
	}
	// Another instance wrote another index between: its plan or ours is
	// stale, and Place reloads the plan on this error.
	return core.BestChoice{}, core.ErrPlanChanged
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
