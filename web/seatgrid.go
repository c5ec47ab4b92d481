package web

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"strconv"
	"strings"

	"seatflow/core"

	"github.com/a-h/templ"
)

// Seat is one seat button of the map; the stream sends it with oob set, one
// per changed seat. A 20,000-seat map pays for every byte 20,000 times, so
// a button carries only its id, its state as its class (console.js reads
// the state from there and names it on focus) and its label; data-order
// names a holder's order and is left out when there is none, as data-n
// (the seat's number, for the find box) is when the id is ROW-NUMBER. The stream's
// buttons carry no price category: seatmap.js keeps the one of the button
// they replace, which never changes once a show has orders.
func Seat(s core.SeatView, oob bool) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := w.Write(appendSeat(nil, s, "", oob))
		return err
	})
}

// categoryColours is how many price-category colours seatmap.css has;
// past them the colours repeat.
const categoryColours = 8

// CategoryClass is the colour class of the i-th price category (in the
// order PriceCategories lists them). The first has none, the plain
// available colour, so a one-price plan of 20,000 seats costs no bytes.
func CategoryClass(i int) string {
	if i%categoryColours == 0 {
		return ""
	}
	return "c" + strconv.Itoa(i%categoryColours)
}

// categoryClasses maps each price category's code to its colour class.
func categoryClasses(cats []core.PriceCategory) map[string]string {
	m := make(map[string]string, len(cats))
	for i, c := range cats {
		if cls := CategoryClass(i); cls != "" {
			m[c.Code] = cls
		}
	}
	return m
}

// seatRun is how many seats of a row share one run at most: a run out of
// view skips style and layout (content-visibility in seatmap.css) as a
// row out of view does, so a 200-seat row lays out the runs the map
// shows. 20 seats are about the map's width at 1280 px.
const seatRun = 20

// seatRows writes the plan's rows (layoutPlan) straight into one buffer
// sized for them: going through a templ component per seat costs the
// server more than the HTML it writes. A row is a box placed on the map
// with its label inside, left of its seats; a section's name comes
// before its first row, placed above it. Seats next to each other, one
// pitch apart on one line, share a run laid out by the browser; a run
// starts anew after seatRun seats, off that line (a curve), and after a
// jump (an aisle: class gap). A run carries its seats as data (data-s,
// appendRunSeats), not as buttons: 20,000 buttons in the page cost the
// browser most of a second to parse and style before the first frame,
// so seatmap.js makes the buttons of the runs in view first and the rest
// when the browser is idle.
func seatRows(plan seatPlan, cats []core.PriceCategory) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		n := 0
		for _, r := range plan.rows {
			n += len(r.seats)
		}
		classes := categoryClasses(cats)
		b := make([]byte, 0, n*24+(len(plan.rows)+n/seatRun)*64)
		for _, r := range plan.rows {
			if r.heading != "" {
				b = append(b, `<h3 class="seat-section"`...)
				b = appendPlace(b, r.left, r.top-headingH, plan.w-r.left, 0)
				b = append(b, '>')
				b = append(b, escapeHTML(r.heading)...)
				b = append(b, `</h3>`...)
			}
			b = append(b, `<div class="seat-row"`...)
			b = appendPlace(b, r.left, r.top, r.right-r.left, r.bottom-r.top)
			b = append(b, `><span class="row-label" aria-hidden="true"`...)
			if r.labelY != 0 {
				b = appendPlace(b, 0, r.labelY, 0, 0)
			}
			b = append(b, '>')
			b = append(b, escapeHTML(rowLabel(r.seats[0].SeatView))...)
			b = append(b, `</span>`...)
			for i := 0; i < len(r.seats); {
				first := r.seats[i]
				end := i + 1
				for end < len(r.seats) && end-i < seatRun &&
					abs(r.seats[end].x-(first.x+(end-i)*pitchX)) <= 1 && r.seats[end].y == first.y {
					end++
				}
				b = append(b, `<span class="seat-run`...)
				if i > 0 && first.x-r.seats[i-1].x > pitchX*3/2 {
					b = append(b, ` gap`...)
				}
				b = append(b, '"')
				b = appendPlace(b, first.x-r.left, first.y-r.top, (end-i)*pitchX-seatGap, 0)
				b = appendRunSeats(b, r.seats[i:end], classes)
				b = append(b, `></span>`...)
				i = end
			}
			b = append(b, `</div>`...)
		}
		_, err := w.Write(b)
		return err
	})
}

// appendRunSeats appends a run's data-s: a JSON array with one array per
// seat, [id, state, category class, order, number], its trailing empty
// fields left out; the number only when the id is not ROW-NUMBER, as
// Seat's data-n. The attribute is single-quoted, so JSON's double quotes
// need no escaping.
func appendRunSeats(b []byte, seats []placedSeat, classes map[string]string) []byte {
	b = append(b, ` data-s='[`...)
	for i, s := range seats {
		if i > 0 {
			b = append(b, ',')
		}
		n := shownNumber(s.SeatView)
		fields := [...]string{s.SeatID, s.State.String(), classes[s.Category], s.OrderNo}
		last := 1
		for j := range fields {
			if fields[j] != "" {
				last = j
			}
		}
		if n != "" {
			last = len(fields)
		}
		b = append(b, '[')
		for j := 0; j <= last && j < len(fields); j++ {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, fields[j])
		}
		if n != "" {
			b = append(b, ',')
			b = append(b, n...)
		}
		b = append(b, ']')
	}
	return append(b, `]'`...)
}

// appendJSONString appends s as a JSON string fit for a single-quoted
// attribute: json.Marshal escapes <, > and &, and ' is escaped here.
func appendJSONString(b []byte, s string) []byte {
	safe := true
	for i := 0; i < len(s) && safe; i++ {
		c := s[i]
		safe = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '\'' && c != '<' && c != '>' && c != '&'
	}
	if safe {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, strings.ReplaceAll(string(q), "'", `\u0027`)...)
}

// shownNumber is the seat's number as its button shows it apart from its
// id (data-n), or "" when the id already says it (ROW-NUMBER) or it has none.
func shownNumber(s core.SeatView) string {
	n := strconv.Itoa(s.Number)
	if s.Number <= 0 || s.SeatID == rowLabel(s)+"-"+n {
		return ""
	}
	return n
}

func abs(v int) int { return max(v, -v) }

// rowLabel is a row's name on the plan; seats set up without one are
// named by their row number as a grid names it.
func rowLabel(s core.SeatView) string {
	if s.RowLabel != "" {
		return s.RowLabel
	}
	return core.RowName(s.Row)
}

func appendSeat(b []byte, s core.SeatView, category string, oob bool) []byte {
	id := escapeHTML(s.SeatID)
	b = append(b, `<button id="seat-`...)
	b = append(b, id...)
	b = append(b, `" class="`...)
	b = append(b, s.State.String()...)
	if category != "" {
		b = append(b, ' ')
		b = append(b, category...)
	}
	b = append(b, '"')
	if n := shownNumber(s); n != "" {
		b = append(b, ` data-n="`...)
		b = append(b, n...)
		b = append(b, '"')
	}
	if s.OrderNo != "" {
		b = append(b, ` data-order="`...)
		b = append(b, escapeHTML(s.OrderNo)...)
		b = append(b, '"')
	}
	if oob {
		b = append(b, ` hx-swap-oob="true"`...)
	}
	b = append(b, '>')
	b = append(b, id...)
	return append(b, `</button>`...)
}

// escapeHTML escapes text for an attribute or an element's content; seat
// ids almost never need it, so the common case allocates nothing.
func escapeHTML(s string) string {
	if !strings.ContainsAny(s, `<>&'"`) {
		return s
	}
	return html.EscapeString(s)
}
