package web

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"seatflow/core"
)

// Fact is one labelled value of a timeline entry.
type Fact struct {
	Label string // already translated
	Value string
}

// detailField says how one known key of an event's detail is shown.
type detailField struct {
	name   string // key in core.Event.Detail
	label  string // catalog key
	format func(p Page, v any) string
}

// detailFields lists the detail keys the engine writes, in display order.
// Keys not listed are still shown, after these, under their own name, so a
// new kind of event is never hidden from staff.
func detailFields() []detailField {
	return []detailField{
		{"hop", "ev.hop", plain},
		{"level", "ev.level", level},
		{"delay_ms", "ev.delay", millis},
		{"due_at", "ev.due_at", timestamp},
		{"outcome", "ev.outcome", outcome},
		{"remaining_ms", "ev.remaining", millis},
		{"next_level", "ev.next_level", level},
		{"late_ms", "ev.late", millis},
		{"current_hop", "ev.current_hop", plain},
		{"reason", "ev.reason", reason},
		{"actor", "ev.actor", plain},
		{"note", "ev.note", plain},
		{"seat_ids", "ev.seats", list},
		{"released", "ev.released", plain},
		{"txn_id", "ev.txn", plain},
		{"amount_cents", "ev.amount", money},
		{"order_amount_cents", "ev.order_amount", money},
		{"order_status", "ev.order_status", plain},
		{"status", "ev.status", plain},
		{"kind", "ev.discrepancy_kind", plain},
		{"check", "ev.check", plain},
		{"expire_at", "ev.expire_at", timestamp},
		{"user_id", "ev.user", plain},
		{"show_id", "ev.show", plain},
		{"error", "ev.error", plain},
		{"trace_id", "ev.trace", plain},
	}
}

// EventFacts turns an event's detail into labelled values.
func EventFacts(p Page, ev core.Event) []Fact {
	var out []Fact
	seen := map[string]bool{}
	for _, f := range detailFields() {
		v, ok := ev.Detail[f.name]
		seen[f.name] = true
		if !ok || v == "" { // an empty trace id says nothing
			continue
		}
		out = append(out, Fact{Label: p.T(f.label), Value: f.format(p, v)})
	}
	var rest []string
	for k := range ev.Detail {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		out = append(out, Fact{Label: k, Value: plain(p, ev.Detail[k])})
	}
	return out
}

// EventKind is the translated name of an event kind.
func EventKind(p Page, kind string) string { return TranslateOr(p.Lang, "ev.kind."+kind, kind) }

// EventClass is the CSS class of a timeline entry: its kind, and for a
// timeout firing its outcome as well.
func EventClass(ev core.Event) string {
	c := "ev ev-" + ev.Kind
	if o, ok := ev.Detail["outcome"].(string); ok {
		c += " outcome-" + o
	}
	return c
}

func plain(_ Page, v any) string {
	switch x := v.(type) {
	case float64: // JSON numbers
		if x == float64(int64(x)) {
			return fmt.Sprint(int64(x))
		}
		return fmt.Sprint(x)
	case nil:
		return "—"
	}
	return fmt.Sprint(v)
}

func millis(_ Page, v any) string {
	if f, ok := v.(float64); ok {
		return Duration(time.Duration(f) * time.Millisecond)
	}
	return fmt.Sprint(v)
}

func money(_ Page, v any) string {
	if f, ok := v.(float64); ok {
		return Money(int64(f))
	}
	return fmt.Sprint(v)
}

func timestamp(p Page, v any) string {
	if s, ok := v.(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return p.Time(t)
		}
	}
	return fmt.Sprint(v)
}

// level shows a delay level; 0 means an exact timer delay.
func level(p Page, v any) string {
	if f, ok := v.(float64); ok && f == 0 {
		return p.T("ev.level_timer")
	}
	return plain(p, v)
}

func outcome(p Page, v any) string {
	s := fmt.Sprint(v)
	return TranslateOr(p.Lang, "ev.outcome."+s, s)
}

func reason(p Page, v any) string {
	s := fmt.Sprint(v)
	return TranslateOr(p.Lang, "reason."+s, s)
}

func list(_ Page, v any) string {
	if xs, ok := v.([]any); ok {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, " ")
	}
	return fmt.Sprint(v)
}
