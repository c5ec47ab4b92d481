package bench

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestCheckinShort is the checkin scenario's CI mode, on the embedded
// stack in process: correctness only, never timings. Every ticket is
// admitted once, and each duplicate pair (fired at the same instant at two
// gates, through two clients) admits once and names that scan in its
// refusal.
func TestCheckinShort(t *testing.T) {
	o := Options{Scenario: ScenarioCheckin, Stack: StackEmbedded, Clients: 8, Scans: 200, DupPairs: 20, MaxTime: 50 * time.Second}
	// The scenario's server settings (stack.go): no per-address limits,
	// overload protection lifted.
	s := inProcessStack(t, o, "SEATFLOW_RATE_PER_CLIENT=0", "SEATFLOW_MAX_HOLDS_PER_CLIENT=0",
		"SEATFLOW_MAX_INFLIGHT=4096", "SEATFLOW_LATENCY_OBJECTIVE=1h")
	other := newAPIClient(s.api.base, s.api.token, s.api.secret, o.Clients)
	t.Cleanup(other.close)
	res, err := runCheckinScans(context.Background(), o, s, []*apiClient{s.api, other}, newProgress(io.Discard, true))
	if err != nil {
		t.Fatal(err)
	}
	if res.AdmittedInDB != 200 || res.Pairs != 20 || res.PairsRight != 20 || res.Scan.Ops != 200 {
		t.Fatalf("%+v", res)
	}
	for _, r := range checkinRows(o.stackLabel(), res) {
		if r.Met == "no" && r.Target == "all" {
			t.Errorf("%s = %v of %v", r.Metric, r.Value, r.LimitValue)
		}
	}
}

// TestPairWrong: a duplicate pair is right only when one scan admitted and
// the other was refused as already checked in naming its gate and time.
func TestPairWrong(t *testing.T) {
	at := "2026-12-07T20:00:00.123Z"
	when, _ := time.Parse(time.RFC3339Nano, at)
	refusal := func(code, gate string, at time.Time) *apiError {
		e := &apiError{Status: 409, Code: code}
		e.Detail.First = &struct {
			At   time.Time `json:"at"`
			Gate string    `json:"gate"`
		}{At: at, Gate: gate}
		return e
	}
	admitted := scanAnswer{Result: "admitted", At: at, gate: "north"}
	tests := []struct {
		name string
		a    [2]scanAnswer
		want string // "" right, else a part of the complaint
	}{
		{"right", [2]scanAnswer{admitted, {gate: "south", err: refusal("already_checked_in", "north", when)}}, ""},
		{"right, the other way round", [2]scanAnswer{{gate: "south", err: refusal("already_checked_in", "north", when)}, admitted}, ""},
		{"both admitted", [2]scanAnswer{admitted, admitted}, "want one admitted"},
		{"refusal names another gate", [2]scanAnswer{admitted, {gate: "south", err: refusal("already_checked_in", "east", when)}}, "names"},
		{"refusal names another time", [2]scanAnswer{admitted, {gate: "south", err: refusal("already_checked_in", "north", when.Add(time.Second))}}, "names"},
		{"refused as not valid", [2]scanAnswer{admitted, {gate: "south", err: refusal("not_valid", "north", when)}}, "not_valid"},
	}
	for _, tt := range tests {
		got := pairWrong(tt.a)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
