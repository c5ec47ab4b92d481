package bench

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"
)

// TestSeatLimitRows: the real stack keeps the Redis EVAL rows other tooling
// reads; the embedded stack names its in-process seat store's Lock.
func TestSeatLimitRows(t *testing.T) {
	fast, slow := loadResult{Rate: 9000}, loadResult{Rate: 100}
	for _, tc := range []struct {
		name       string
		lim        limitSet
		wantRows   []string
		wantSlower string
	}{
		{name: "real", lim: limitSet{Eval: slow, Commit: fast},
			wantRows:   []string{"Redis EVAL (lock.lua shape) rate", "Redis EVAL (lock.lua shape) p99"},
			wantSlower: "Redis EVAL"},
		{name: "embedded", lim: limitSet{SeatLock: slow, Commit: fast, inProcess: true},
			wantRows:   []string{"seat store lock (in-process) rate", "seat store lock (in-process) p99"},
			wantSlower: "seat store lock"},
		{name: "embedded, commit slower", lim: limitSet{SeatLock: fast, Commit: slow, inProcess: true},
			wantRows:   []string{"seat store lock (in-process) rate", "seat store lock (in-process) p99"},
			wantSlower: "DB commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range limitRows(tc.name, tc.lim)[:2] {
				got = append(got, r.Metric)
			}
			if !slices.Equal(got, tc.wantRows) {
				t.Errorf("rows %q, want %q", got, tc.wantRows)
			}
			if name, r := tc.lim.slower(); name != tc.wantSlower || r.Rate != slow.Rate {
				t.Errorf("slower limit %s at %v/s, want %s at %v/s", name, r.Rate, tc.wantSlower, slow.Rate)
			}
		})
	}
}

// TestMeasureSeatLock runs the in-process limit past several shows: every
// Lock succeeds, as each takes fresh seats.
func TestMeasureSeatLock(t *testing.T) {
	o := Options{Clients: 8, LimitTime: 300 * time.Millisecond}
	r := measureSeatLock(context.Background(), o, newProgress(io.Discard, true))
	if err := limitErr(r); err != nil || r.Errors != 0 {
		t.Fatalf("errors %d: %v (first %q)", r.Errors, err, r.FirstErr)
	}
	if r.Ops < 3*lockShowSeats/4 {
		t.Errorf("%d locks in %v: fewer than three shows' worth", r.Ops, o.LimitTime)
	}
}
