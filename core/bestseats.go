package core

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Best available: a buyer asks for N seats instead of naming them, and the
// seat store chooses them inside the atomic step that locks them (the Lua
// script best.lua on Redis, the show's mutex in the in-process store), so a
// choice is never stale and two requests never pick the same seat.
//
// The rules, which both stores and the Go reference in the tests apply:
//
//   - Eligible seats are free (neither held nor blocked), of the asked
//     category (any when none is asked), and accessible (wheelchair or
//     companion) exactly when accessible seats are asked for. Blocked seats
//     are never chosen.
//   - Adjacent: two seats are adjacent when they are next to each other in
//     their row (ordered by col) and the first is not marked aisle_after.
//     A run is a maximal stretch of adjacent seats.
//   - Score: each seat's score is its plan rank when the plan gives one
//     (rank × 1000), else its distance to the show's focal point in plan
//     units × 1000, rounded; lower is better. A set's score is the sum.
//   - Stranded single: a free seat, not chosen, next to the chosen seats,
//     whose both neighbours in its run are then taken, blocked or missing
//     (an aisle or the row end). Unless the show sets AllowSingles a set that strands none is preferred to any set that
//     strands one; when none exists the choice says so (Stranded).
//   - Together: the set is count adjacent seats of one run. Among the
//     fitting sets the one with the lowest (strands?, score) wins; ties go
//     to the lowest row, then the lowest position in the row.
//   - Not together: seats are picked one at a time, each the eligible seat
//     with the lowest (strands?, score, row, position) given the seats
//     picked before it.
//   - The purchase limit applies as for Lock, and is checked first.
//
// The choice reads the show's SeatIndex, built from the plan once per plan
// version. best.lua visits rows in the order of the best score each could
// give (Order) and stops once no row left can beat the orphan-free set it
// holds, reading only the rows it visits: on a show with free seats near
// the front it reads a few rows, not the whole show.

// Accessible kinds of a seat (Seat.Accessible).
const (
	AccessibleWheelchair = "wheelchair"
	AccessibleCompanion  = "companion"
)

// ValidAccessible reports whether a is a seat's accessible kind or "".
func ValidAccessible(a string) bool {
	return a == "" || a == AccessibleWheelchair || a == AccessibleCompanion
}

// MaxBestCount bounds one best-available request.
const MaxBestCount = 10

// ErrNotEnoughSeats: no set of seats fits a best-available request.
var ErrNotEnoughSeats = &Error{Kind: KindConflict, Code: "not_enough_seats", Message: "not enough seats fit the request"}

// BestRules are a show's best-available settings.
type BestRules struct {
	// FocalX, FocalY is the point seats are scored by distance to; when
	// FocalSet is false it is the stage centre of the plan (the middle of
	// its x range at its smallest y).
	FocalX, FocalY int
	FocalSet       bool
	// AllowSingles turns the stranded-single rule off; by default a
	// choice that strands no single seat is preferred.
	AllowSingles bool
}

// BestRequest asks the seat store for Count seats.
type BestRequest struct {
	Count        int
	Category     string // "" for any
	Together     bool
	Accessible   bool
	AvoidSingles bool
}

// BestChoice is what the seat store chose and locked.
type BestChoice struct {
	SeatIDs  []string // in the order chosen
	Stranded bool     // a single seat was stranded: no choice avoided it
}

// SeatsLeft is what remains of one category for a request that did not
// fit: free eligible seats, and the longest stretch of them together.
type SeatsLeft struct {
	Category string `json:"category"`
	Free     int    `json:"free"`
	Together int    `json:"together"`
}

// IndexSeat is one seat as best available reads it.
type IndexSeat struct {
	ID         string
	Category   string
	Accessible bool
	Score      int64
	Break      bool // not adjacent to the next seat of the row
}

// SeatIndex is a show's plan as best available reads it: rows, each in col
// order. Tag names its content, so a store keeping a copy knows when the
// copy is stale.
type SeatIndex struct {
	Rows    [][]IndexSeat
	Tag     string
	Longest int // the longest run: no together request may ask for more
	Encoded []string
	// Order[k-1] lists the rows with a run of k seats, "row,bound;..."
	// (rows from 1), by bound and then row: bound is the lowest score k
	// adjacent seats of the row can have, whatever is taken, so a row
	// whose bound is above a set already found cannot beat it. Order[0]
	// serves apart picks.
	Order []string
	// AllowSingles is the show's rule (BestRules.AllowSingles).
	AllowSingles bool
}

// BuildSeatIndex makes the index of a plan (seats ordered by row, col).
func BuildSeatIndex(seats []Seat, rules BestRules) *SeatIndex {
	fx, fy := focal(seats, rules)
	idx := &SeatIndex{AllowSingles: rules.AllowSingles}
	for i, s := range seats {
		if i == 0 || s.Row != seats[i-1].Row {
			idx.Rows = append(idx.Rows, nil)
		}
		var score int64
		if s.Rank > 0 {
			score = int64(s.Rank) * 1000
		} else {
			score = int64(math.Round(math.Hypot(float64(s.X)-fx, float64(s.Y)-fy) * 1000))
		}
		r := len(idx.Rows) - 1
		idx.Rows[r] = append(idx.Rows[r], IndexSeat{ID: s.SeatID, Category: s.Category,
			Accessible: s.Accessible != "", Score: score, Break: s.AisleAfter})
	}
	h := sha256.New()
	h.Write([]byte("v2\n")) // the stored layout: a new one makes stored indexes stale
	for _, row := range idx.Rows {
		row[len(row)-1].Break = true
		run := 0
		var b strings.Builder
		for i, s := range row {
			run++
			idx.Longest = max(idx.Longest, run)
			if s.Break {
				run = 0
			}
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(s.ID + "," + s.Category + "," + boolDigit(s.Accessible) + "," +
				strconv.FormatInt(s.Score, 10) + "," + boolDigit(s.Break))
		}
		idx.Encoded = append(idx.Encoded, b.String())
		h.Write([]byte(b.String()))
		h.Write([]byte{'\n'})
	}
	idx.Tag = hex.EncodeToString(h.Sum(nil)[:12])
	idx.Order = rowOrder(idx.Rows)
	return idx
}

// rowOrder is SeatIndex.Order of rows.
func rowOrder(rows [][]IndexSeat) []string {
	type bound struct {
		row   int
		score int64
	}
	by := make([][]bound, MaxBestCount)
	for r, row := range rows {
		for k := 1; k <= MaxBestCount; k++ {
			low, found := int64(0), false
			run, sum := 0, int64(0)
			for i, s := range row {
				if i > 0 && row[i-1].Break {
					run, sum = 0, 0
				}
				run++
				sum += s.Score
				if run > k {
					sum -= row[i-k].Score
				}
				if run >= k && (!found || sum < low) {
					low, found = sum, true
				}
			}
			if found {
				by[k-1] = append(by[k-1], bound{r + 1, low})
			}
		}
	}
	out := make([]string, MaxBestCount)
	for k, bs := range by {
		slices.SortFunc(bs, func(a, b bound) int { return cmp.Or(cmp.Compare(a.score, b.score), cmp.Compare(a.row, b.row)) })
		var b strings.Builder
		for i, x := range bs {
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(strconv.Itoa(x.row) + "," + strconv.FormatInt(x.score, 10))
		}
		out[k] = b.String()
	}
	return out
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// focal is the point seats are scored by.
func focal(seats []Seat, r BestRules) (float64, float64) {
	if r.FocalSet || len(seats) == 0 {
		return float64(r.FocalX), float64(r.FocalY)
	}
	minX, maxX, minY := seats[0].X, seats[0].X, seats[0].Y
	for _, s := range seats {
		minX, maxX, minY = min(minX, s.X), max(maxX, s.X), min(minY, s.Y)
	}
	return float64(minX+maxX) / 2, float64(minY)
}

// ChooseBest applies the rules to the index with free telling which seats
// are free. ok is false when no set fits; left then says what remains.
func ChooseBest(idx *SeatIndex, req BestRequest, free func(id string) bool) (c BestChoice, left []SeatsLeft, ok bool) {
	st := make([][]bool, len(idx.Rows)) // free, then taken by this choice too
	for r, row := range idx.Rows {
		st[r] = make([]bool, len(row))
		for i, s := range row {
			st[r][i] = free(s.ID)
		}
	}
	eligible := func(s IndexSeat) bool {
		return (req.Category == "" || s.Category == req.Category) && s.Accessible == req.Accessible
	}
	if req.Together {
		c, ok = chooseTogether(idx, st, req, eligible)
	} else {
		c, ok = chooseApart(idx, st, req, eligible)
	}
	if !ok {
		return BestChoice{}, seatsLeft(idx, st, req), false
	}
	return c, nil, true
}

// strands reports whether taking row[i..j] strands a single free seat.
func strands(row []IndexSeat, st []bool, i, j int) bool {
	// left neighbour i-1, alone if its own left is not free
	if i > 0 && !row[i-1].Break && st[i-1] && (i-2 < 0 || row[i-2].Break || !st[i-2]) {
		return true
	}
	return !row[j].Break && j+1 < len(row) && st[j+1] && (row[j+1].Break || j+2 >= len(row) || !st[j+2])
}

func chooseTogether(idx *SeatIndex, st [][]bool, req BestRequest, eligible func(IndexSeat) bool) (BestChoice, bool) {
	k := req.Count
	bestR, bestI, bestStrand, bestScore := -1, 0, false, int64(0)
	for r, row := range idx.Rows {
		run, sum := 0, int64(0) // eligible adjacent seats ending at i, and their scores' sum over the last k
		for i, s := range row {
			if !st[r][i] || !eligible(s) {
				run, sum = 0, 0
				continue
			}
			if i > 0 && row[i-1].Break {
				run, sum = 0, 0
			}
			run++
			sum += s.Score
			if run > k {
				sum -= row[i-k].Score
			}
			if run < k {
				continue
			}
			strand := req.AvoidSingles && strands(row, st[r], i-k+1, i)
			if bestR < 0 || (!strand && bestStrand) || (strand == bestStrand && sum < bestScore) {
				bestR, bestI, bestStrand, bestScore = r, i-k+1, strand, sum
			}
		}
	}
	if bestR < 0 {
		return BestChoice{}, false
	}
	row := idx.Rows[bestR]
	c := BestChoice{Stranded: strands(row, st[bestR], bestI, bestI+k-1)}
	for i := bestI; i < bestI+k; i++ {
		c.SeatIDs = append(c.SeatIDs, row[i].ID)
	}
	return c, true
}

func chooseApart(idx *SeatIndex, st [][]bool, req BestRequest, eligible func(IndexSeat) bool) (BestChoice, bool) {
	n := 0 // enough first, so a failed choice leaves st as it found it
	for r, row := range idx.Rows {
		for i, s := range row {
			if st[r][i] && eligible(s) {
				n++
			}
		}
	}
	if n < req.Count {
		return BestChoice{}, false
	}
	var c BestChoice
	for range req.Count {
		bestR, bestI, bestStrand, bestScore := -1, 0, false, int64(0)
		for r, row := range idx.Rows {
			for i, s := range row {
				if !st[r][i] || !eligible(s) {
					continue
				}
				if bestR >= 0 && !bestStrand && s.Score >= bestScore {
					continue // cannot beat the best found, whatever it strands
				}
				strand := req.AvoidSingles && strands(row, st[r], i, i)
				if bestR < 0 || (!strand && bestStrand) || (strand == bestStrand && s.Score < bestScore) {
					bestR, bestI, bestStrand, bestScore = r, i, strand, s.Score
				}
			}
		}
		c.Stranded = c.Stranded || strands(idx.Rows[bestR], st[bestR], bestI, bestI)
		st[bestR][bestI] = false
		c.SeatIDs = append(c.SeatIDs, idx.Rows[bestR][bestI].ID)
	}
	return c, true
}

// seatsLeft counts, per category, the free seats the request could have
// had apart from its category, and their longest stretch together.
func seatsLeft(idx *SeatIndex, st [][]bool, req BestRequest) []SeatsLeft {
	by := map[string]*SeatsLeft{}
	for r, row := range idx.Rows {
		run := 0
		for i, s := range row {
			if i > 0 && row[i-1].Break {
				run = 0
			}
			l := by[s.Category]
			if l == nil {
				l = &SeatsLeft{Category: s.Category}
				by[s.Category] = l
			}
			if !st[r][i] || s.Accessible != req.Accessible {
				run = 0
				continue
			}
			if i > 0 && !row[i-1].Break && run > 0 && row[i-1].Category != s.Category {
				run = 0
			}
			run++
			l.Free++
			l.Together = max(l.Together, run)
		}
	}
	out := make([]SeatsLeft, 0, len(by))
	for _, l := range by {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b SeatsLeft) int { return cmp.Compare(a.Category, b.Category) })
	return out
}
