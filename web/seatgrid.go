package web

import (
	"context"
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
// names a holder's order and is left out when there is none. The stream's
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

// seatRun is how many seats of a row share one run: a run out of view
// sideways skips style and layout (content-visibility in seatmap.css) as
// a row out of view vertically does, so a 200-seat row lays out the one or
// two runs the map shows. 20 seats are about the map's width at 1280 px.
const seatRun = 20

// seatRows writes the grid's rows straight into one buffer sized for them:
// going through a templ component per seat costs the server more than the
// HTML it writes. Each row starts with its label; a section of the plan
// starts with its name as a heading when it starts a row, and with a gap
// when it starts inside one, as does a jump in the seats' x (an aisle).
func seatRows(rows [][]core.SeatView, cats []core.PriceCategory) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		n := 0
		for _, row := range rows {
			n += len(row)
		}
		classes := categoryClasses(cats)
		b := make([]byte, 0, n*48+(len(rows)+n/seatRun)*32)
		section := ""
		for _, row := range rows {
			if s := row[0].Section; s != section && s != "" {
				b = append(b, `<h3 class="seat-section">`...)
				b = append(b, escapeHTML(s)...)
				b = append(b, `</h3>`...)
			}
			section = row[0].Section
			b = append(b, `<div class="seat-row"><span class="row-label" aria-hidden="true">`...)
			b = append(b, escapeHTML(rowLabel(row[0]))...)
			b = append(b, `</span>`...)
			inRun := 0
			for i, s := range row {
				gap := i > 0 && (s.Section != section || s.X > 0 && row[i-1].X > 0 && s.X > row[i-1].X+1)
				section = s.Section
				if inRun == seatRun || gap {
					b = append(b, `</span>`...)
					inRun = 0
				}
				if inRun == 0 {
					if gap {
						b = append(b, `<span class="seat-run gap">`...)
					} else {
						b = append(b, `<span class="seat-run">`...)
					}
				}
				b = appendSeat(b, s, classes[s.Category], false)
				inRun++
			}
			b = append(b, `</span></div>`...)
		}
		_, err := w.Write(b)
		return err
	})
}

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
