package bench

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRushBestShort is the best-available rush's CI mode, beside a
// named-seat rush of the same run, on the embedded stack in process. It
// asserts correctness only, never timings: both shows sell out, no seat is
// held twice, no 5xx other than shed 503s, no buyer gives up, and the
// best-available figures sit beside the named-seat ones.
func TestRushBestShort(t *testing.T) {
	// Each buyer leaves with one hold of 1 to 4 seats (about 2.2 on
	// average, late ones getting what is left): 150 buyers are enough to
	// sell 200 seats out, 100 were not always.
	o := Options{Scenario: ScenarioRush, Stack: StackEmbedded, Clients: 8, Buyers: 300, BaselineBuyers: 150,
		RushSeats: 200, Queue: QueueOff, BuyersMode: BuyersBoth, LimitTime: time.Second, MaxTime: 50 * time.Second}
	s := inProcessStack(t, o)
	rep := &Report{Details: map[string]any{}}
	if err := rushPhases(context.Background(), o, s, &procSampler{pid: os.Getpid()}, newProgress(io.Discard, true), rep); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + formatTable(rep.Rows))
	for _, r := range rep.Rows {
		// Correctness targets only; a failed /readyz probe is a timing.
		if r.Met == "no" && r.Target == "= 0" && !strings.Contains(r.Metric, "/readyz") {
			t.Errorf("%s = %v, want 0", r.Metric, r.Value)
		}
	}
	for _, w := range []string{"300 buyers, best available: goodput vs named-seat buyers",
		"300 buyers, best available: 409 answers per hold vs named-seat buyers",
		"300 buyers, best available: 409 answers per hold, sold-out answers apart",
		"300 buyers, best available: seats sold or held twice", "300 buyers: seats sold or held twice"} {
		if !hasRow(rep.Rows, w) {
			t.Errorf("no row %q", w)
		}
	}
	for _, key := range []string{"rush: 300 buyers", "rush: 300 buyers, best available"} {
		res, ok := rep.Details[key].(rushResult)
		if !ok {
			t.Fatalf("no details %q", key)
		}
		if res.Check.Taken != o.RushSeats || res.Holds == 0 || res.GaveUp != 0 || res.Other5xx != 0 || !res.Check.ok() {
			t.Errorf("%s: %d of %d seats taken, %d holds, %d gave up (%s), %d 5xx, check %+v", key, res.Check.Taken,
				o.RushSeats, res.Holds, res.GaveUp, res.FirstFailure, res.Other5xx, res.Check)
		}
		if key != "rush: 300 buyers" && res.Statuses["201"] != res.Holds {
			t.Errorf("%s: %d answers 201, %d holds", key, res.Statuses["201"], res.Holds)
		}
	}
}

func hasRow(rows []Row, metric string) bool {
	for _, r := range rows {
		if r.Metric == metric {
			return true
		}
	}
	return false
}
