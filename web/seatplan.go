package web

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"seatflow/core"
)

// The live seat map draws every seat where its plan puts it (issue 31):
// rows of a rectangular hall line up, curved rows curve, and the map's
// size is known before the browser lays it out, so Fit is one division.
// Sizes are CSS pixels at zoom 1 and must match #seat-grid in seatmap.css.
const (
	seatW    = 42
	seatH    = 26
	seatGap  = 4
	pitchX   = seatW + seatGap // a row's neighbouring seats, one plan unit apart
	pitchY   = seatH + seatGap // neighbouring rows
	labelW   = 32              // a row's label, left of its leftmost seat
	headingH = 24              // a section's name, above its rows
	// maxPlanPx bounds a side of the drawn plan: coordinates far apart
	// with seats close together would otherwise draw a plan of millions
	// of pixels. Past it the plan is scaled down (seats may overlap).
	maxPlanPx = 60_000
)

type placedSeat struct {
	core.SeatView
	fx, fy float64 // on the plan, in its own units
	x, y   int     // drawn, from the map's top left corner
}

type planRow struct {
	seats                    []placedSeat // left to right
	heading                  string       // the section this row starts, if any
	left, top, right, bottom int          // the row's box, its label included
	labelY                   int          // the label's top, beside the leftmost seat
}

type seatPlan struct {
	rows []planRow
	w, h int
}

// layoutPlan places the seats. A plan with coordinates is drawn from its
// x and y; one without (all zero) from row and seat numbers. The plan's
// usual distance between neighbouring seats of a row becomes one seat's
// width and its usual distance between rows one row's height. Rows whose
// seats change y (curved rows) are drawn to one scale both ways, large
// enough that neighbours in a row do not overlap. A section's name needs
// room above its rows: a section is moved down, with what follows,
// until it clears the sections above it.
func layoutPlan(rows [][]core.SeatView) seatPlan {
	coords := false
	for _, row := range rows {
		for _, s := range row {
			coords = coords || s.X != 0 || s.Y != 0
		}
	}
	plan := seatPlan{rows: make([]planRow, len(rows))}
	var steps, rowYs []float64
	curved := false
	minX, minY := math.Inf(1), math.Inf(1)
	for i, row := range rows {
		ps := make([]placedSeat, len(row))
		for j, s := range row {
			ps[j] = placedSeat{SeatView: s, fx: float64(s.Col), fy: float64(s.Row)}
			if coords {
				ps[j].fx, ps[j].fy = float64(s.X), float64(s.Y)
			}
			minX, minY = min(minX, ps[j].fx), min(minY, ps[j].fy)
		}
		if coords {
			slices.SortStableFunc(ps, func(a, b placedSeat) int { return cmp.Compare(a.fx, b.fx) })
		}
		for j := 1; j < len(ps); j++ {
			dx, dy := ps[j].fx-ps[j-1].fx, ps[j].fy-ps[j-1].fy
			curved = curved || dy != 0
			if d := math.Hypot(dx, dy); d > 0 {
				steps = append(steps, d)
			}
		}
		rowYs = append(rowYs, ps[0].fy)
		plan.rows[i].seats = ps
	}
	slices.Sort(rowYs)
	var rises []float64
	for i := 1; i < len(rowYs); i++ {
		if d := rowYs[i] - rowYs[i-1]; d > 0 {
			rises = append(rises, d)
		}
	}
	unitX := median(steps, 1)
	sx, sy := pitchX/unitX, pitchY/median(rises, unitX)
	if curved {
		sx = max(sx, sy)
		for _, r := range plan.rows {
			for j := 1; j < len(r.seats); j++ {
				dx, dy := math.Abs(r.seats[j].fx-r.seats[j-1].fx), math.Abs(r.seats[j].fy-r.seats[j-1].fy)
				if dx == 0 && dy == 0 {
					continue // one place given twice: no scale parts them
				}
				sx = max(sx, min((seatW+seatGap/2)/dx, (seatH+seatGap/2)/dy))
			}
		}
		sy = sx
	}
	maxX, maxY := 0.0, 0.0
	for _, r := range plan.rows {
		for _, s := range r.seats {
			maxX, maxY = max(maxX, s.fx-minX), max(maxY, s.fy-minY)
		}
	}
	sx, sy = min(sx, maxPlanPx/max(maxX, 1)), min(sy, maxPlanPx/max(maxY, 1))
	for i := range plan.rows {
		r := &plan.rows[i]
		for j := range r.seats {
			s := &r.seats[j]
			s.x, s.y = labelW+int(math.Round((s.fx-minX)*sx)), int(math.Round((s.fy-minY)*sy))
		}
	}
	plan.placeSections(rows)
	for i := range plan.rows {
		r := &plan.rows[i]
		r.left, r.top, r.right, r.bottom = r.seats[0].x-labelW, math.MaxInt, 0, 0
		for _, s := range r.seats {
			r.top, r.right, r.bottom = min(r.top, s.y), max(r.right, s.x+seatW), max(r.bottom, s.y+seatH)
		}
		r.labelY = r.seats[0].y - r.top
		plan.w, plan.h = max(plan.w, r.right), max(plan.h, r.bottom)
	}
	return plan
}

// placeSections gives each run of rows of one section (as the rows come)
// room for its name above it, clear of the sections before it that share
// some of its width.
func (plan *seatPlan) placeSections(rows [][]core.SeatView) {
	type box struct{ left, top, right, bottom int }
	var done []box
	for start := 0; start < len(rows); {
		name := rows[start][0].Section
		end := start + 1
		for end < len(rows) && rows[end][0].Section == name {
			end++
		}
		b := box{math.MaxInt, math.MaxInt, 0, 0}
		for _, r := range plan.rows[start:end] {
			for _, s := range r.seats {
				b = box{min(b.left, s.x-labelW), min(b.top, s.y), max(b.right, s.x+seatW), max(b.bottom, s.y+seatH)}
			}
		}
		room := 0
		if name != "" {
			room = headingH
			plan.rows[start].heading = name
		}
		need := room
		for _, d := range done {
			if d.left < b.right && b.left < d.right {
				need = max(need, d.bottom+pitchY-seatH+room)
			}
		}
		if shift := need - b.top; shift > 0 {
			for i := start; i < end; i++ {
				for j := range plan.rows[i].seats {
					plan.rows[i].seats[j].y += shift
				}
			}
			b.top, b.bottom = b.top+shift, b.bottom+shift
		}
		done = append(done, b)
		start = end
	}
}

// median of vs (sorted here), or def when there are none.
func median(vs []float64, def float64) float64 {
	if len(vs) == 0 {
		return def
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// box is the map's size, the data-b of #seat-grid.
func (plan seatPlan) box() string {
	return string(appendBox(nil, 0, 0, plan.w+seatGap, plan.h+seatGap))
}

// appendBox appends where an element is drawn on the map, its left, top,
// width and height in pixels (a 0 size: as seatmap.css has it), which
// seatmap.js sets as its style: the console's CSP forbids style
// attributes, not styles set from script.
func appendBox(b []byte, x, y, w, h int) []byte {
	for i, v := range [...]int{x, y, w, h} {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return b
}

// appendPlace appends the data-b attribute of an element drawn at x, y.
func appendPlace(b []byte, x, y, w, h int) []byte {
	b = append(b, ` data-b="`...)
	return append(appendBox(b, x, y, w, h), '"')
}
