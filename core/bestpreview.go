package core

import (
	"context"
	"slices"
)

// BestPreview asks which seats best available would choose now.
type BestPreview struct {
	ShowID     int64
	Count      int
	Category   string // "" for any
	Together   bool
	Accessible bool
}

// PreviewBest is the choice PlaceBest would make on the show's seat state
// as it is now: the same index and rules (ChooseBest, which the in-process
// store runs under its lock and best.lua mirrors), locking nothing. The
// counter shows it on the map and then holds those seats by name, so a
// seat taken in between fails that hold as any named hold fails; the
// state is read in two steps (holds, then blocks) for the same reason it
// need not be atomic. ErrNotEnoughSeats, its Left set, when nothing fits.
func (e *Engine) PreviewBest(ctx context.Context, r BestPreview) (BestChoice, error) {
	if r.ShowID <= 0 {
		return BestChoice{}, Invalidf("show_id must be a positive integer")
	}
	if err := e.checkBestCount(r.Count); err != nil {
		return BestChoice{}, err
	}
	p, err := e.currentPlan(ctx, r.ShowID)
	if err != nil {
		return BestChoice{}, err
	}
	if err := checkBestFits(p.index, r.ShowID, r.Category, r.Count, r.Together); err != nil {
		return BestChoice{}, err
	}
	holds, err := e.seats.Holds(ctx, r.ShowID)
	if err != nil {
		return BestChoice{}, err
	}
	blocked, err := e.seats.Blocks(ctx, r.ShowID)
	if err != nil {
		return BestChoice{}, err
	}
	taken := make(map[string]bool, len(holds)+len(blocked))
	for _, h := range holds {
		taken[h.SeatID] = true
	}
	for id := range blocked {
		taken[id] = true
	}
	req := BestRequest{Count: r.Count, Category: r.Category, Together: r.Together, Accessible: r.Accessible,
		AvoidSingles: !p.index.AllowSingles}
	c, left, ok := ChooseBest(p.index, req, func(id string) bool { return !taken[id] }, nil) // a preview keeps no bounds: it reads the live state once
	if !ok {
		nf := *ErrNotEnoughSeats
		nf.Left = left
		return BestChoice{}, &nf
	}
	return c, nil
}

// currentPlan is the cached plan, read again when the show's plan version
// moved on (rules changed on another instance): a preview has no
// transaction of its own to notice it, as Place's has.
func (e *Engine) currentPlan(ctx context.Context, showID int64) (cachedPlan, error) {
	show, err := e.store.Show(ctx, showID)
	if err != nil {
		return cachedPlan{}, err
	}
	p, err := e.plans.get(ctx, e.store, showID)
	if err == nil && p.version != show.PlanVersion {
		e.plans.forget(showID)
		p, err = e.plans.get(ctx, e.store, showID)
	}
	return p, err
}

// SeatScore is one seat of a plan with its best-available score (lower is
// better) and its place in the ranking: 1 for the best, seats of equal
// score sharing one.
type SeatScore struct {
	Seat
	Score int64
	Rank  int
}

// BestRanking scores the show's seats by r, the show's own rules or ones a
// manager is trying before saving them (checked as SetBestRules checks
// them), as the choice would: BuildSeatIndex. In plan order (row, col).
func (e *Engine) BestRanking(ctx context.Context, showID int64, r BestRules) ([]SeatScore, error) {
	if err := checkBestRules("", r); err != nil {
		return nil, err
	}
	if _, err := e.store.Show(ctx, showID); err != nil {
		return nil, err
	}
	seats, err := e.store.Seats(ctx, showID)
	if err != nil {
		return nil, err
	}
	idx := BuildSeatIndex(seats, r)
	out := make([]SeatScore, 0, len(seats))
	for _, row := range idx.Rows {
		for _, s := range row {
			out = append(out, SeatScore{Seat: seats[len(out)], Score: s.Score})
		}
	}
	scores := make([]int64, len(out))
	for i, s := range out {
		scores[i] = s.Score
	}
	slices.Sort(scores)
	for i := range out {
		at, _ := slices.BinarySearch(scores, out[i].Score) // the first of equal scores
		out[i].Rank = at + 1
	}
	return out, nil
}
