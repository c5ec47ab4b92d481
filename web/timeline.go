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

// emptyShown are the detail keys whose "" says something: the server's zone.
var emptyShown = map[string]bool{"time_zone": true, "previous_time_zone": true}

// detailFields lists the detail keys the engine writes, in display order;
// amounts are in currency. Keys not listed are still shown, after these,
// under their own name, so a new kind of event is never hidden from staff.
func detailFields(currency string) []detailField {
	var (
		money = func(p Page, v any) string {
			if f, ok := v.(float64); ok {
				return p.Money(int64(f), currency)
			}
			return fmt.Sprint(v)
		}
		outcome         = translated("ev.outcome.")
		status          = translated("status.")
		reason          = translated("reason.")
		discrepancyKind = translated("disc.kind.")
		checkName       = translated("reconcile.check.")
		role            = translated("role.")
		caseState       = translated("disc.tab.")
		repair          = translated("reconcile.action.")
		// The engine's own actors (system, sweep, reconcile); people
		// (user:7, staff:ann) and payment providers stay as written.
		actor = translated("actor.")
	)
	return []detailField{
		{"hop", "ev.hop", plain},
		{"level", "ev.level", level},
		{"delay_ms", "ev.delay", millis},
		{"due_at", "ev.due_at", timestamp},
		{"outcome", "ev.outcome", outcome},
		{"remaining_ms", "ev.remaining", millis},
		{"next_level", "ev.next_level", level},
		{"late_ms", "ev.late", millis},
		{"by_ms", "ev.by", millis},
		{"new_expire_at", "ev.new_expire_at", timestamp},
		{"winner_status", "ev.winner_status", status},
		{"current_hop", "ev.current_hop", plain},
		{"reason", "ev.reason", reason},
		{"actor", "ev.actor", actor},
		{"via", "ev.via", actor},
		{"note", "ev.note", plain},
		{"seat_ids", "ev.seats", list},
		{"kept_seat_ids", "ev.kept_seats", list},
		{"from_seat_ids", "ev.from_seats", list},
		{"to_seat_ids", "ev.to_seats", list},
		{"released", "ev.released", plain},
		{"txn_id", "ev.txn", plain},
		{"method", "ev.method", paymentMethod},
		{"tender", "ev.tender", tender},
		{"quick_sale", "ev.quick_sale", translated("ev.bool.")},
		{"reference", "ev.reference", plain},
		{"amount_cents", "ev.amount", money},
		{"order_amount_cents", "ev.order_amount", money},
		{"order_status", "ev.order_status", status},
		{"status", "ev.status", status},
		{"kind", "ev.discrepancy_kind", discrepancyKind},
		{"check", "ev.check", checkName},
		{"expire_at", "ev.expire_at", timestamp},
		{"user_id", "ev.user", plain},
		{"show_id", "ev.show", plain},
		{"error", "ev.error", plain},
		{"trace_id", "ev.trace", plain},
		// Keys of staff actions' audit details.
		{"minutes", "ev.minutes", plain},
		{"focal", "ev.focal", plain},
		{"allow_singles", "ev.allow_singles", plain},
		{"role", "ev.role", role},
		{"name", "ev.name", plain},
		{"from", "ev.from", caseState},
		{"to", "ev.to", caseState},
		{"owner", "ev.owner", plain},
		{"refund_id", "ev.refund_id", plain},
		{"clerk", "ev.clerk", plain},
		{"float_cents", "ev.float", money},
		{"counted_cents", "ev.counted", money},
		{"expected_cents", "ev.expected", money},
		{"difference_cents", "ev.difference", money},
		{"case_id", "ev.case_id", plain},
		{"requested_by", "ev.requested_by", plain},
		{"approved_by", "ev.approved_by", plain},
		{"dry_run", "ev.dry_run", plain},
		{"found", "ev.found", plain},
		{"fixed", "ev.fixed", plain},
		{"errors", "ev.errors", plain},
		{"result", "ev.result", plain},
		{"code", "ev.code", plain},
		{"scans", "ev.scans", plain},
		{"sessions", "ev.sessions", plain},
		{"seats", "ev.seat_count", plain},
		{"prices", "ev.prices", plain},
		{"categories", "ev.categories", plain},
		{"key", "ev.item", plain},
		{"prefix", "ev.key_prefix", plain},
		{"api_key", "ev.api_key", plain},
		{"scopes", "ev.scopes", plain},
		{"before", "ev.archived_before", timestamp},
		{"deleted", "ev.deleted", plain},
		{"dead_letter", "ev.dead_letter", plain},
		{"attempts", "ev.attempts", plain},
		{"source", "ev.source", plain},
		// Keys of the waiting list's hand-off.
		{"waitlist_entry", "ev.waitlist_entry", plain},
		{"entry", "ev.wait_entry", plain},
		// Keys of the waiting list's webhook events (core/handoff.go).
		{"order_no", "ev.order_no", plain},
		{"expires_at", "ev.expires_at", timestamp},
		{"from_order", "ev.from_order", plain},
		{"to_order", "ev.to_order", plain},
		// Keys of timeout hops, payments and repairs the table above has not.
		{"resent_hop", "ev.resent_hop", plain},
		{"early_ms", "ev.early", millis},
		{"resend_at", "ev.resend_at", timestamp},
		{"other_order_no", "ev.other_order", plain},
		{"other_amount_cents", "ev.other_amount", money},
		{"action", "ev.repair", repair},
		{"seat_id", "ev.seat", plain},
		{"time_zone", "ev.time_zone", zoneName},
		{"previous_time_zone", "ev.previous_time_zone", zoneName},
		// Keys of a waiting room's settings (the console's queue page).
		{"enabled", "ev.enabled", plain},
		{"mode", "ev.mode", translated("queue.mode.")},
		{"opens_at", "ev.opens_at", timestamp},
		{"window_seconds", "ev.window_seconds", plain},
		{"paused", "ev.paused", plain},
		// Keys of a waiting list's staff actions (console_waitlist.go).
		{"waitlist_enabled", "ev.waitlist_enabled", plain},
		{"join_when", "ev.join_when", translated("waitlist.join_when.")},
		{"offer_ttl_seconds", "ev.offer_ttl_seconds", plain},
		{"category", "ev.category", plain},
		{"together", "ev.together", plain},
		{"entry_state", "ev.entry_state", translated("waitlist.state.")},
		{"offer", "ev.offer", plain},
		// Keys of a show's edit and cancel (console_showlife.go).
		{"venue", "ev.venue", plain},
		{"starts_at", "ev.starts_at", timestamp},
		{"sales_end", "ev.sales_end", timestamp},
		{"cancelled_orders", "ev.cancelled_orders", list},
		{"paid_orders", "ev.paid_orders", list},
	}
}

// EventFacts turns an event's detail into labelled values, its amounts in
// currency (the order's show's) unless the detail names its own.
func EventFacts(p Page, ev core.Event, currency string) []Fact {
	var out []Fact
	// The currency says what the amounts are in; it is no fact of its own.
	seen := map[string]bool{"currency": true}
	if c, ok := ev.Detail["currency"].(string); ok && c != "" {
		currency = c
	}
	for _, f := range detailFields(currency) {
		v, ok := ev.Detail[f.name]
		seen[f.name] = true
		if !ok || (v == "" && !emptyShown[f.name]) { // an empty trace id says nothing
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

func millis(p Page, v any) string {
	if f, ok := v.(float64); ok {
		return p.Duration(time.Duration(f) * time.Millisecond)
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

// translated shows a value as the catalog word under prefix+value, or as
// written when the catalog has none (a new value is never hidden).
func translated(prefix string) func(Page, any) string {
	return func(p Page, v any) string {
		s := fmt.Sprint(v)
		return TranslateOr(p.Lang, prefix+s, s)
	}
}

// CheckName is the translated name of a reconcile check.
func CheckName(p Page, name string) string { return TranslateOr(p.Lang, "reconcile.check."+name, name) }

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

// Attempt is one try to end an order — by the payment, the timeout, the
// customer, staff or reconcile — as the order page's race view shows it.
type Attempt struct {
	At      time.Time
	Who     string // the actor: system, user:7, staff:ann, reconcile, sweep, or the payment's txn
	Path    string // timeout | customer | staff | reconcile | payment
	Won     bool   // this attempt's conditional update ended the order
	Did     string // for a loser, the catalog key of what it did instead
	Repeats int    // further identical attempts (a double click, a redelivery)
}

// RaceAttempts builds the race view from an order's timeline: the winner's
// own event (cancelled or paid), an end_attempt for every loser but the
// payment, and the discrepancy a losing payment recorded. It returns nil
// unless at least two attempts were made: then there was no race to show.
func RaceAttempts(evs []core.Event) []Attempt {
	var out []Attempt
	add := func(a Attempt) {
		for i := range out {
			if out[i].Who == a.Who && out[i].Path == a.Path && out[i].Won == a.Won && out[i].Did == a.Did {
				out[i].Repeats++
				return
			}
		}
		out = append(out, a)
	}
	str := func(ev core.Event, k string) string { s, _ := ev.Detail[k].(string); return s }
	for _, ev := range evs {
		switch ev.Kind {
		case core.EventCancelled:
			add(Attempt{At: ev.At, Who: str(ev, "actor"), Path: str(ev, "reason"), Won: true})
		case core.EventPaid:
			add(Attempt{At: ev.At, Who: str(ev, "txn_id"), Path: "payment", Won: true})
		case core.EventEndAttempt:
			did := "race.did." + str(ev, "reason")
			if str(ev, "outcome") == core.AttemptNotExpired {
				did = "race.did.not_expired"
			}
			add(Attempt{At: ev.At, Who: str(ev, "actor"), Path: str(ev, "reason"), Did: did})
		case core.EventDiscrepancy:
			// A payment that found the order cancelled or paid already; an
			// amount mismatch never tried to end the order and is no racer.
			add(Attempt{At: ev.At, Who: str(ev, "txn_id"), Path: "payment", Did: "race.did.payment"})
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// PathName is the translated name of an attempt's path.
func PathName(p Page, path string) string { return TranslateOr(p.Lang, "race.path."+path, path) }

// ClockHM is Clock to the minute, for chart axes.
func (p Page) ClockHM(t time.Time) string { return t.In(p.loc()).Format("15:04") }

// TimeMS formats t to the millisecond: attempts of one race are often
// within the same second.
func (p Page) TimeMS(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(p.loc()).Format("15:04:05.000")
}

func paymentMethod(p Page, v any) string {
	s, _ := v.(string)
	return TranslateOr(p.Lang, "payments.method."+s, s)
}

func tender(p Page, v any) string {
	s, _ := v.(string)
	return TranslateOr(p.Lang, "tender."+s, s)
}
