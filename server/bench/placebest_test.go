package bench

import (
	"context"
	"io"
	"testing"
	"time"

	"seatflow/core/admission"
)

// TestPlaceBestShort is the best-available place phase's CI mode, on the
// embedded stack in process: correctness only, never timings. The show
// sells out (runPlaceBest fails otherwise), no seat is held twice, and the
// seat store agrees with the database. Clients stay within the least
// limit of work in flight, so none is shed (a shed answer fails a
// place phase).
func TestPlaceBestShort(t *testing.T) {
	o := Options{Scenario: ScenarioPlace, Stack: StackEmbedded, Clients: admission.DefaultMinLimit, Rows: 10, Cols: 20, Rounds: 1,
		LimitTime: time.Second, MaxTime: 50 * time.Second}
	// The place scenario's settings: no per-address limits (stack.go).
	s := inProcessStack(t, o, "SEATFLOW_RATE_PER_CLIENT=0", "SEATFLOW_MAX_HOLDS_PER_CLIENT=0")
	res, err := runPlaceBest(context.Background(), o, s, newProgress(io.Discard, true))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 1 || res.Rounds[0].Orders == 0 || res.Latency.Count == 0 {
		t.Fatalf("rounds %+v, latency %+v", res.Rounds, res.Latency)
	}
	for _, r := range placeBestRows(o.stackLabel(), res, placeResult{Latency: res.Latency}) {
		if r.Met == "no" && r.Target == "= 0" {
			t.Errorf("%s = %v, want 0", r.Metric, r.Value)
		}
	}
}

// TestPlaceBestP99Target: the p99 row meets its target exactly when the
// best-available p99 is at most 1.5 times the named-seat one.
func TestPlaceBestP99Target(t *testing.T) {
	tests := []struct {
		name        string
		best, named time.Duration
		want        string
	}{
		{"equal", 10 * time.Millisecond, 10 * time.Millisecond, "yes"},
		{"at the bound", 15 * time.Millisecond, 10 * time.Millisecond, "yes"},
		{"past the bound", 16 * time.Millisecond, 10 * time.Millisecond, "no"},
		{"nothing named", 10 * time.Millisecond, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			best := placeBestResult{Latency: Summary{Count: 1, P99: tt.best}}
			named := placeResult{Latency: Summary{P99: tt.named}}
			if tt.named > 0 {
				named.Latency.Count = 1
			}
			for _, r := range placeBestRows("embedded", best, named) {
				if r.Metric == "best available: latency p99" && r.Met != tt.want {
					t.Errorf("met = %q, want %q", r.Met, tt.want)
				}
			}
		})
	}
}
