package web

import (
	"context"
	"html"
	"io"
	"strings"

	"seatflow/core"

	"github.com/a-h/templ"
)

// Seat is one seat button of the map; the stream sends it with oob set, one
// per changed seat. A 20,000-seat map pays for every byte 20,000 times, so
// a button carries only its id, its state as its class (console.js reads
// the state from there and names it on focus) and its label; data-order
// names a holder's order and is left out when there is none.
func Seat(s core.SeatView, oob bool) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := w.Write(appendSeat(nil, s, oob))
		return err
	})
}

// seatRun is how many seats of a row share one run: a run out of view
// sideways skips style and layout (content-visibility in console.css) as
// a row out of view vertically does, so a 200-seat row lays out the one or
// two runs the map shows. 20 seats are about the map's width at 1280 px.
const seatRun = 20

// seatRows writes the grid's rows straight into one buffer sized for them:
// going through a templ component per seat costs the server more than the
// HTML it writes.
func seatRows(rows [][]core.SeatView) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		n := 0
		for _, row := range rows {
			n += len(row)
		}
		b := make([]byte, 0, n*48+(len(rows)+n/seatRun)*32)
		for _, row := range rows {
			b = append(b, `<div class="seat-row">`...)
			for i, s := range row {
				if i%seatRun == 0 {
					b = append(b, `<span class="seat-run">`...)
				}
				b = appendSeat(b, s, false)
				if i%seatRun == seatRun-1 || i == len(row)-1 {
					b = append(b, `</span>`...)
				}
			}
			b = append(b, `</div>`...)
		}
		_, err := w.Write(b)
		return err
	})
}

func appendSeat(b []byte, s core.SeatView, oob bool) []byte {
	id := escapeHTML(s.SeatID)
	b = append(b, `<button id="seat-`...)
	b = append(b, id...)
	b = append(b, `" class="`...)
	b = append(b, s.State.String()...)
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
