package web

import (
	"cmp"
	"slices"

	"seatflow/core"
)

// NewShowData is the new-show form as the manager filled it in, with the
// error that sent it back (already in words: it may name a CSV line).
type NewShowData struct {
	Name, Venue, StartsAt, Currency string
	Categories                      string // one "code,name,price_cents" a line
	Source                          string // grid | upload
	Rows, PerRow, GridCategory      string
	Draft                           bool // set up off sale, published later
	Error                           string
	// PlanText is an uploaded plan carried across a preview, so creating
	// the show afterwards needs no second upload.
	PlanText string
	// Preview is the map the form would create, after "Preview".
	Preview *ShowPreview
}

// ShowPreview is a plan checked but not stored.
type ShowPreview struct {
	Categories []core.PriceCategory
	Seats      []core.Seat
}

// Rows splits the seats into the map's rows, in row then column order.
func (v ShowPreview) Rows() [][]core.Seat {
	seats := slices.Clone(v.Seats)
	slices.SortStableFunc(seats, func(a, b core.Seat) int { return cmp.Or(cmp.Compare(a.Row, b.Row), cmp.Compare(a.Col, b.Col)) })
	return splitRows(seats, func(s core.Seat) int { return s.Row })
}

// CategoryCounts is how many seats each category has, in the categories' order.
func (v ShowPreview) CategoryCounts() []int {
	n := make(map[string]int, len(v.Categories))
	for _, s := range v.Seats {
		n[s.Category]++
	}
	out := make([]int, len(v.Categories))
	for i, c := range v.Categories {
		out[i] = n[c.Code]
	}
	return out
}

// CapacityCents is the takings of a sold-out show.
func (v ShowPreview) CapacityCents() int64 {
	var sum int64
	for _, s := range v.Seats {
		sum += s.PriceCents
	}
	return sum
}
