package core

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	Longest int      // the longest run: no together request may ask for more
	Encoded []string // each row as best.lua reads it (encodedRow)
	// Order[k-1] lists the rows with a run of k seats, "row,bound;..."
	// (rows from 1), by bound and then row: bound is the lowest score k
	// adjacent seats of the row can have, whatever is taken, so a row
	// whose bound is above a set already found cannot beat it. Order[0]
	// serves apart picks.
	Order []string
	order [][]rowBound // Order as ChooseBest reads it, rows from 0
	// Categories are the plan's categories, sorted.
	Categories []string
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
	h.Write([]byte("v4\n")) // the stored layout: a new one makes stored indexes stale
	for _, row := range idx.Rows {
		row[len(row)-1].Break = true
		run := 0
		var enc encodedRow
		for _, s := range row {
			run++
			idx.Longest = max(idx.Longest, run)
			if s.Break {
				run = 0
			}
			enc.IDs, enc.Categories = append(enc.IDs, s.ID), append(enc.Categories, s.Category)
			enc.Accessible, enc.Scores = append(enc.Accessible, s.Accessible), append(enc.Scores, s.Score)
			enc.Breaks = append(enc.Breaks, s.Break)
		}
		b, _ := json.Marshal(enc) // strings, numbers and booleans always encode
		idx.Encoded = append(idx.Encoded, string(b))
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	idx.Tag = hex.EncodeToString(h.Sum(nil)[:12])
	idx.Order, idx.order = rowOrder(idx.Rows)
	for _, s := range seats {
		idx.Categories = append(idx.Categories, s.Category)
	}
	slices.Sort(idx.Categories)
	idx.Categories = slices.Compact(idx.Categories)
	return idx
}

// encodedRow is a row of SeatIndex.Encoded: one array per attribute, so a
// script decodes a row in one cjson.decode call, in C, and reads it as is.
type encodedRow struct {
	IDs        []string `json:"i"`
	Categories []string `json:"c"`
	Accessible []bool   `json:"a"`
	Scores     []int64  `json:"s"`
	Breaks     []bool   `json:"b"` // not adjacent to the next seat
}

// rowBound is a row and the lowest score some k adjacent seats of it have.
type rowBound struct {
	row   int
	score int64
}

// rowOrder is SeatIndex.Order of rows, encoded and as is.
func rowOrder(rows [][]IndexSeat) ([]string, [][]rowBound) {
	by := make([][]rowBound, MaxBestCount)
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
				by[k-1] = append(by[k-1], rowBound{r, low})
			}
		}
	}
	out := make([]string, MaxBestCount)
	for k, bs := range by {
		slices.SortFunc(bs, func(a, b rowBound) int { return cmp.Or(cmp.Compare(a.score, b.score), cmp.Compare(a.row, b.row)) })
		var b strings.Builder
		for i, x := range bs {
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(strconv.Itoa(x.row+1) + "," + strconv.FormatInt(x.score, 10))
		}
		out[k] = b.String()
	}
	return out, by
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

// RowBounds is what a seat store keeps of a show between choices: for
// each row r and count k, at 2*(r*MaxBestCount+k-1), the lowest score of
// k adjacent free seats of the row when ChooseBest last read it, and next
// to it the lowest of those sets that strand no single seat; NoBound when
// there is none, UnknownBound when the row was not read. The store keeps
// them only while ChooseBest is the only change to its seats (it records
// its own): every other change of which seats are free, freeing or taking
// (a release, a named lock, a block, a sale written over), must forget
// them. Then a row not read is as last seen, and ChooseBest passes a row
// that cannot beat the set in hand without reading it.
type RowBounds []int64

// Stored bounds that are not scores.
const (
	UnknownBound int64 = -1
	NoBound      int64 = -2
)

// NewRowBounds is the bounds of idx with no row read.
func NewRowBounds(idx *SeatIndex) RowBounds {
	b := make(RowBounds, 2*len(idx.Rows)*MaxBestCount)
	for i := range b {
		b[i] = UnknownBound
	}
	return b
}

// ChooseBest applies the rules to the index with free telling which seats
// are free. ok is false when no set fits; left then says what remains.
// bounds, when not nil, is read and updated (RowBounds).
func ChooseBest(idx *SeatIndex, req BestRequest, free func(id string) bool, bounds RowBounds) (c BestChoice, left []SeatsLeft, ok bool) {
	v := visit{idx: idx, req: req, free: free, bounds: bounds, st: make([][]bool, len(idx.Rows))}
	if req.Together {
		c, ok = v.together()
	} else {
		c, ok = v.apart()
	}
	if !ok {
		left = v.seatsLeft()
	}
	v.learn()
	return c, left, ok
}

// visit is one choice: the rows read so far (st[r] each seat free, then
// taken by this choice too; nil for a row not read) and the best set found.
type visit struct {
	idx    *SeatIndex
	req    BestRequest
	free   func(string) bool
	bounds RowBounds
	st     [][]bool
	read   []int // rows read, in the order read

	bestR, bestI int
	bestStrand   bool
	bestScore    int64
}

func (v *visit) load(r int) []bool {
	if v.st[r] == nil {
		row := v.idx.Rows[r]
		st := make([]bool, len(row))
		for i, s := range row {
			st[i] = v.free(s.ID)
		}
		v.st[r] = st
		v.read = append(v.read, r)
	}
	return v.st[r]
}

// known is the stored bounds of k seats of row r (any set, orphan-free
// sets), UnknownBound for a row read by this choice.
func (v *visit) known(r, k int) (any, orphanFree int64) {
	if v.bounds == nil || v.st[r] != nil {
		return UnknownBound, UnknownBound
	}
	i := 2 * (r*MaxBestCount + k - 1)
	return v.bounds[i], v.bounds[i+1]
}

func (v *visit) eligible(s IndexSeat) bool {
	return (v.req.Category == "" || s.Category == v.req.Category) && s.Accessible == v.req.Accessible
}

// better orders sets by (strands, score, row, position).
func (v *visit) better(strand bool, score int64, r, i int) bool {
	switch {
	case v.bestR < 0:
		return true
	case strand != v.bestStrand:
		return !strand
	case score != v.bestScore:
		return score < v.bestScore
	case r != v.bestR:
		return r < v.bestR
	}
	return i < v.bestI
}

// beaten reports whether no set of row r scoring at least score can beat
// the orphan-free set in hand.
func (v *visit) beaten(score int64, r int) bool {
	return v.bestR >= 0 && !v.bestStrand && (score > v.bestScore || (score == v.bestScore && r > v.bestR))
}

// rows calls fn on each row of order (by bound) that may hold a set of k
// seats beating the one in hand, reading it first, until none left can.
// A row known to have only sets that strand a seat waits for a second
// pass, which runs when no orphan-free set was found.
func (v *visit) rows(k int, fn func(r int)) {
	var stranding []rowBound
	for _, b := range v.idx.order[k-1] {
		if v.beaten(b.score, b.row) {
			break
		}
		d, free := v.known(b.row, k)
		switch {
		case d == NoBound || (d >= 0 && v.beaten(d, b.row)):
			continue
		case v.req.AvoidSingles && free == NoBound:
			if v.bestR < 0 || v.bestStrand {
				stranding = append(stranding, rowBound{b.row, d})
			}
			continue
		case v.req.AvoidSingles && free >= 0 && v.beaten(free, b.row):
			continue // its sets that strand lose to the orphan-free set in hand
		}
		v.load(b.row)
		fn(b.row)
	}
	if v.bestR >= 0 && !v.bestStrand {
		return
	}
	for _, b := range stranding {
		// Every set of these strands a seat, as the one in hand does (if any).
		if v.bestR >= 0 && (b.score > v.bestScore || (b.score == v.bestScore && b.row > v.bestR)) {
			continue
		}
		v.load(b.row)
		fn(b.row)
	}
}

func (v *visit) together() (BestChoice, bool) {
	k := v.req.Count
	v.bestR = -1
	v.rows(k, func(r int) {
		row, st := v.idx.Rows[r], v.st[r]
		run, sum := 0, int64(0) // eligible adjacent seats ending at i, and their scores' sum over the last k
		for i, s := range row {
			if !st[i] || !v.eligible(s) {
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
			strand := v.req.AvoidSingles && strands(row, st, i-k+1, i)
			if v.better(strand, sum, r, i-k+1) {
				v.bestR, v.bestI, v.bestStrand, v.bestScore = r, i-k+1, strand, sum
			}
		}
	})
	if v.bestR < 0 {
		return BestChoice{}, false
	}
	row, st := v.idx.Rows[v.bestR], v.st[v.bestR]
	c := BestChoice{Stranded: strands(row, st, v.bestI, v.bestI+k-1)}
	for i := v.bestI; i < v.bestI+k; i++ {
		st[i] = false
		c.SeatIDs = append(c.SeatIDs, row[i].ID)
	}
	return c, true
}

// apart picks one seat at a time, each time over the rows by bound again
// (the seats picked before change which strand).
func (v *visit) apart() (BestChoice, bool) {
	var c BestChoice
	type pick struct{ r, i int }
	var picks []pick
	for range v.req.Count {
		v.bestR = -1
		v.rows(1, func(r int) {
			row, st := v.idx.Rows[r], v.st[r]
			for i, s := range row {
				if !st[i] || !v.eligible(s) || v.beaten(s.Score, r) {
					continue
				}
				strand := v.req.AvoidSingles && strands(row, st, i, i)
				if v.better(strand, s.Score, r, i) {
					v.bestR, v.bestI, v.bestStrand, v.bestScore = r, i, strand, s.Score
				}
			}
		})
		if v.bestR < 0 {
			// Not enough: the seats picked go back before counting what is left.
			for _, p := range picks {
				v.st[p.r][p.i] = true
			}
			return BestChoice{}, false
		}
		row, st := v.idx.Rows[v.bestR], v.st[v.bestR]
		c.Stranded = c.Stranded || strands(row, st, v.bestI, v.bestI)
		st[v.bestI] = false
		picks = append(picks, pick{v.bestR, v.bestI})
		c.SeatIDs = append(c.SeatIDs, row[v.bestI].ID)
	}
	return c, true
}

// learn stores the bounds of every row read, after what this choice took.
func (v *visit) learn() {
	if v.bounds == nil {
		return
	}
	for _, r := range v.read {
		rowBounds(v.idx.Rows[r], v.st[r], v.bounds[2*r*MaxBestCount:2*(r+1)*MaxBestCount])
	}
}

// rowBounds sets out[2(k-1)] to the lowest score of k adjacent free seats
// of row and out[2(k-1)+1] to the lowest of those that strand no seat,
// NoBound when there is none.
func rowBounds(row []IndexSeat, st []bool, out []int64) {
	for k := range out {
		out[k] = NoBound
	}
	low := func(at int, sum int64) {
		if out[at] == NoBound || sum < out[at] {
			out[at] = sum
		}
	}
	run := 0
	for i := range row {
		if i > 0 && row[i-1].Break {
			run = 0
		}
		if !st[i] {
			run = 0
			continue
		}
		run++
		sum := int64(0)
		for k := 1; k <= min(run, MaxBestCount); k++ {
			sum += row[i-k+1].Score
			low(2*(k-1), sum)
			if !strands(row, st, i-k+1, i) {
				low(2*(k-1)+1, sum)
			}
		}
	}
}

// seatsLeft counts, per category, the free seats the request could have
// had apart from its category, and their longest stretch together. A row
// known to have no free seat is not read.
func (v *visit) seatsLeft() []SeatsLeft {
	by := make(map[string]*SeatsLeft, len(v.idx.Categories))
	out := make([]SeatsLeft, len(v.idx.Categories))
	for i, c := range v.idx.Categories {
		out[i].Category = c
		by[c] = &out[i]
	}
	for r, row := range v.idx.Rows {
		if d, _ := v.known(r, 1); d == NoBound {
			continue
		}
		st := v.load(r)
		run := 0
		for i, s := range row {
			if i > 0 && row[i-1].Break {
				run = 0
			}
			if !st[i] || s.Accessible != v.req.Accessible {
				run = 0
				continue
			}
			if i > 0 && !row[i-1].Break && run > 0 && row[i-1].Category != s.Category {
				run = 0
			}
			run++
			l := by[s.Category]
			l.Free++
			l.Together = max(l.Together, run)
		}
	}
	return out
}

// strands reports whether taking row[i..j] strands a single free seat.
func strands(row []IndexSeat, st []bool, i, j int) bool {
	// left neighbour i-1, alone if its own left is not free
	if i > 0 && !row[i-1].Break && st[i-1] && (i-2 < 0 || row[i-2].Break || !st[i-2]) {
		return true
	}
	return !row[j].Break && j+1 < len(row) && st[j+1] && (row[j+1].Break || j+2 >= len(row) || !st[j+2])
}
