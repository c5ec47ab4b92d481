package bench

import (
	"context"
	"io"
	"testing"
	"time"
)

// TestWaitlistShort is the waitlist scenario's CI mode, on the embedded
// stack in process: correctness only, never timings. Every baseline hold
// ends and its seat goes back on sale (where the hammer may buy it); on
// the list's show every entry is offered a seat, no public
// placement hammering the seats wins one, none is left on sale, and no
// seat is held twice or held in the seat store by another order than the
// database's.
func TestWaitlistShort(t *testing.T) {
	o := Options{Scenario: ScenarioWaitlist, Stack: StackEmbedded, Clients: 8, Holds: 300, Entries: 300,
		ExpiryRate: 300, Hammer: 4, MaxTime: 50 * time.Second} // HammerRate 0: as many tries as 4 clients make
	// The scenario's server settings (stack.go): no per-address limits,
	// overload protection lifted, the short hold TTL.
	s := inProcessStack(t, o, "SEATFLOW_RATE_PER_CLIENT=0", "SEATFLOW_MAX_HOLDS_PER_CLIENT=0",
		"SEATFLOW_MAX_INFLIGHT=4096", "SEATFLOW_LATENCY_OBJECTIVE=1h", "SEATFLOW_HOLD_TTL="+waitlistHoldTTL(o).String())
	res, err := waitlistPhases(context.Background(), o, s, newProgress(io.Discard, true))
	if err != nil {
		t.Fatal(err)
	}
	b, l := res.Baseline, res.List
	// The baseline's seats go back on sale, and the hammer holds some (on a
	// slow machine some of its holds end too, and their seats are on sale
	// again).
	if b.Holds != 300 || b.Reasons["pending"] != 0 || b.Offers != 0 || b.OnSale+b.PublicHeld != 300 ||
		int64(b.PublicInDB) != b.Hammer.Outcomes["201"] {
		t.Errorf("baseline: %d holds, %v, %d offers, %d seats on sale, %d public orders (%d still holding), %d answered 201; "+
			"want 300 ended, no offer, every seat on sale or held by a public order",
			b.Holds, b.Reasons, b.Offers, b.OnSale, b.PublicInDB, b.PublicHeld, b.Hammer.Outcomes["201"])
	}
	if l.Offers != 300 || l.Offered != 300 || l.OnSale != 0 || l.Handoff.Count != 300 {
		t.Errorf("list: %d offers, %d entries offered, %d seats on sale, %d hand-off times; want 300, 300, 0, 300",
			l.Offers, l.Offered, l.OnSale, l.Handoff.Count)
	}
	if l.Hammer.Ops == 0 || l.Hammer.Outcomes["201"] != 0 || l.PublicInDB != 0 || l.Hammer.Errors != 0 {
		t.Errorf("hammer: %d placements, %d won, %d public orders in the DB, %d failed (%s); want some, none won or failed",
			l.Hammer.Ops, l.Hammer.Outcomes["201"], l.PublicInDB, l.Hammer.Errors, l.Hammer.FirstErr)
	}
	for _, r := range waitlistRows(o.stackLabel(), res) {
		if r.Met == "no" && r.Target[0] == '=' {
			t.Errorf("%s = %v", r.Metric, r.Value)
		}
	}
	t.Log("\n" + formatTable(waitlistRows(o.stackLabel(), res)))
}
