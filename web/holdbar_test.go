package web

import (
	"strings"
	"testing"
	"time"

	"seatflow/core"
)

// The bar runs from the placing to the last moment; each hop, extension
// and attempt is a mark at its place, in time order, the expiry too.
func TestHoldBar(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	o := core.Order{OrderNo: "SF1", CreatedAt: t0, ExpireAt: t0.Add(20 * time.Minute)}
	evs := []core.Event{
		{Kind: core.EventPlaced, At: t0},
		{Kind: core.EventTimeoutScheduled, At: t0},
		{Kind: core.EventExtended, At: t0.Add(5 * time.Minute), Detail: map[string]any{"actor": "staff:ann"}},
		{Kind: core.EventTimeoutFired, At: t0.Add(15 * time.Minute), Detail: map[string]any{"hop": 1.0}},
		{Kind: core.EventEndAttempt, At: t0.Add(20 * time.Minute), Detail: map[string]any{"actor": "user:7"}},
		{Kind: core.EventCancelled, At: t0.Add(20 * time.Minute), Detail: map[string]any{"actor": "system"}},
		{Kind: core.EventPaid, At: t0.Add(40 * time.Minute), Detail: map[string]any{"txn_id": "T9"}},
	}
	b := HoldBarOf(o, evs)
	type mark struct {
		kind, who string
		x         int
	}
	want := []mark{{MarkPlaced, "", 0}, {MarkExtended, "staff:ann", 75}, {MarkHop, "#1", 225},
		{MarkAttempt, "user:7", 300}, {MarkEnd, "system", 300}, {MarkExpiry, "", 300}, {MarkEnd, "T9", 600}}
	if len(b.Marks) != len(want) {
		t.Fatalf("marks %+v", b.Marks)
	}
	for i, w := range want {
		if m := b.Marks[i]; m.Kind != w.kind || m.Who != w.who || m.X != w.x {
			t.Errorf("mark %d = %s %q at %d, want %s %q at %d", i, m.Kind, m.Who, m.X, w.kind, w.who, w.x)
		}
	}
	if b.HoldX != 300 {
		t.Errorf("hold span to %d, want 300 (the expiry)", b.HoldX)
	}
	// Paid before its expiry: the hold ends there and no expiry is marked.
	paid := o
	paid.Status, paid.ClosedAt = core.StatusPaid, t0.Add(10*time.Minute)
	pb := HoldBarOf(paid, evs[:3])
	if pb.HoldX != HoldBarWidth || pb.Marks[len(pb.Marks)-1].Kind == MarkExpiry {
		t.Errorf("an order paid before its expiry: span to %d, marks %+v", pb.HoldX, pb.Marks)
	}
	page := render(t, holdBar(Page{Lang: LangZH}, b))
	if strings.Contains(page, "style=") {
		t.Error("the bar uses style attributes, which the console's CSP refuses")
	}
	for _, s := range []string{`class="hb-mark hb-extended" cx="75"`, "锁座已延长", `width="300"`} {
		if !strings.Contains(page, s) {
			t.Errorf("the bar lacks %q:\n%s", s, page)
		}
	}
}

// The one-click extensions are offered only within the hold's limit.
func TestQuickExtendWithinLimit(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	d := OrderData{Order: core.Order{OrderNo: "SF1", Status: core.StatusPending, CreatedAt: t0,
		ExpireAt: t0.Add(110 * time.Minute)}, MaxHold: 2 * time.Hour}
	page := render(t, extendForm(Page{Lang: LangEN}, d))
	for m, disabled := range map[string]bool{"5": false, "10": false, "15": true} {
		tag := `<button type="submit" class="secondary" name="quick" value="` + m + `"`
		i := strings.Index(page, tag)
		if i < 0 {
			t.Fatalf("no +%s button:\n%s", m, page)
		}
		rest := page[i+len(tag):]
		if got := strings.HasPrefix(rest, " disabled"); got != disabled {
			t.Errorf("+%s min disabled %t, want %t", m, got, disabled)
		}
	}
	d.Order.ExpireAt = t0.Add(2 * time.Hour)
	page = render(t, extendForm(Page{Lang: LangEN}, d))
	if strings.Contains(page, "quick-extend") || !strings.Contains(page, "This hold is at its limit of 2 h") {
		t.Errorf("a hold at its limit offers extensions:\n%s", page)
	}
}
