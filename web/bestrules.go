package web

import (
	"slices"

	"seatflow/core"
)

// HeatLevels is how many colours the ranking's heat map has (console.css,
// .heat0 … .heat5): level 0 the best sixth of the seats by rank.
const HeatLevels = 6

// heatBest is how many of the best seats the heat map lists in words.
const heatBest = 10

// BestRulesForm is the best-available rules as the form shows them:
// Custom is a focal point of its own (X, Y as typed), else the stage
// centre.
type BestRulesForm struct {
	Custom       bool
	X, Y         string
	AllowSingles bool
}

// BestRulesData is a show's best-available rules page.
type BestRulesData struct {
	Show core.Show
	Form BestRulesForm
	// Trying: the heat map is of Form, not yet saved.
	Trying bool
	Error  string
	// Seats are the plan's seats scored by the rules shown, in plan order.
	Seats []core.SeatScore
}

// HeatSeat is one seat of the heat map.
type HeatSeat struct {
	core.SeatScore
	Level int
}

// HeatRows is the plan's rows, each seat with its colour level by rank.
func (d BestRulesData) HeatRows() [][]HeatSeat {
	seats := make([]HeatSeat, len(d.Seats))
	for i, s := range d.Seats {
		seats[i] = HeatSeat{SeatScore: s, Level: (s.Rank - 1) * HeatLevels / max(len(d.Seats), 1)}
	}
	return splitRows(seats, func(s HeatSeat) int { return s.Row })
}

// HeatLegend is each level's range of ranks, best first: {level, first,
// last}. A plan of fewer seats than levels leaves some out.
func (d BestRulesData) HeatLegend() [][3]int {
	n := len(d.Seats)
	var out [][3]int
	for l := range HeatLevels {
		// the ranks r with (r-1)*HeatLevels/n == l, as HeatRows levels them
		first, last := ceilDiv(l*n, HeatLevels)+1, ceilDiv((l+1)*n, HeatLevels)
		if first <= last {
			out = append(out, [3]int{l, first, last})
		}
	}
	return out
}

// BestSeats is the best seats by rank, in words beside the heat map.
func (d BestRulesData) BestSeats() []core.SeatScore {
	out := slices.Clone(d.Seats)
	slices.SortStableFunc(out, func(a, b core.SeatScore) int { return a.Rank - b.Rank })
	return out[:min(len(out), heatBest)]
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
