package web

import (
	"slices"
	"strconv"
	"time"

	"seatflow/core"
)

// The order page's time bar of a hold: from its placing to the last thing
// that happened to it (or its expiry, if later), each moment a mark at its
// place on the bar. It is an SVG drawn by the server: positions are SVG
// attributes, colours classes (the console's CSP allows no inline styles).

// HoldBarWidth is the bar's width in its viewBox units.
const HoldBarWidth = 600

// Hold bar mark kinds (the CSS classes hb-<kind>).
const (
	MarkPlaced   = "placed"
	MarkHop      = "hop"      // a timeout hop arrived
	MarkExtended = "extended" // staff or the customer extended the hold
	MarkExpiry   = "expiry"   // the hold's expiry as it stands (not marked once an order closed before it)
	MarkAttempt  = "attempt"  // an attempt to end the order that lost
	MarkEnd      = "end"      // the attempt that ended it (paid or cancelled)
)

// HoldMark is one moment on the bar.
type HoldMark struct {
	At    time.Time
	Kind  string // a Mark* constant
	Label string // catalog key of what happened
	Who   string // the actor or payment, "" when the label says it all
	X     int    // position in 0..HoldBarWidth
}

// XAttr is X as an SVG attribute value.
func (m HoldMark) XAttr() string { return strconv.Itoa(m.X) }

// HoldBar is the bar of one order: the span of the hold and its marks in
// time order.
type HoldBar struct {
	Start, End time.Time
	HoldX      int // where the hold ended or will end; the span up to it is the hold
	Marks      []HoldMark
}

// HoldBarOf builds the bar of an order from its timeline.
func HoldBarOf(o core.Order, evs []core.Event) HoldBar {
	str := func(ev core.Event, k string) string { s, _ := ev.Detail[k].(string); return s }
	marks := []HoldMark{{At: o.CreatedAt, Kind: MarkPlaced, Label: "ev.kind.placed"}}
	for _, ev := range evs {
		switch ev.Kind {
		case core.EventTimeoutFired:
			marks = append(marks, HoldMark{At: ev.At, Kind: MarkHop, Label: "ev.kind.timeout_fired", Who: hopName(ev)})
		case core.EventExtended:
			marks = append(marks, HoldMark{At: ev.At, Kind: MarkExtended, Label: "ev.kind.extended", Who: str(ev, "actor")})
		case core.EventEndAttempt:
			marks = append(marks, HoldMark{At: ev.At, Kind: MarkAttempt, Label: "ev.kind.end_attempt", Who: str(ev, "actor")})
		case core.EventDiscrepancy:
			marks = append(marks, HoldMark{At: ev.At, Kind: MarkAttempt, Label: "ev.kind.discrepancy", Who: str(ev, "txn_id")})
		case core.EventCancelled:
			marks = append(marks, HoldMark{At: ev.At, Kind: MarkEnd, Label: "ev.kind.cancelled", Who: str(ev, "actor")})
		case core.EventPaid:
			marks = append(marks, HoldMark{At: ev.At, Kind: MarkEnd, Label: "ev.kind.paid", Who: str(ev, "txn_id")})
		}
	}
	// The hold lasts to its expiry, or to the end of an order closed
	// before it: then the expiry never came and is not marked.
	holdEnd := o.ExpireAt
	if o.Status != core.StatusPending && !o.ClosedAt.IsZero() && o.ClosedAt.Before(o.ExpireAt) {
		holdEnd = o.ClosedAt
	} else {
		marks = append(marks, HoldMark{At: o.ExpireAt, Kind: MarkExpiry, Label: "holdbar.expiry"})
	}
	b := HoldBar{Start: o.CreatedAt, End: holdEnd}
	for _, m := range marks {
		if m.At.After(b.End) {
			b.End = m.At
		}
	}
	// Stable by time: marks of one moment keep the timeline's order, the
	// expiry after them.
	slices.SortStableFunc(marks, func(a, b HoldMark) int { return a.At.Compare(b.At) })
	for i := range marks {
		marks[i].X = b.x(marks[i].At)
	}
	b.Marks, b.HoldX = marks, b.x(holdEnd)
	return b
}

// x places t on the bar.
func (b HoldBar) x(t time.Time) int {
	span := b.End.Sub(b.Start)
	if span <= 0 {
		return 0
	}
	return int(int64(t.Sub(b.Start)) * HoldBarWidth / int64(span))
}

// HoldXAttr is HoldX as an SVG attribute value.
func (b HoldBar) HoldXAttr() string { return strconv.Itoa(b.HoldX) }

func hopName(ev core.Event) string {
	if h, ok := ev.Detail["hop"].(float64); ok {
		return "#" + strconv.Itoa(int(h))
	}
	return ""
}
