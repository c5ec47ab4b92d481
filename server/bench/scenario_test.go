package bench

import (
	"maps"
	"slices"
	"testing"
	"time"

	"seatflow/core"
)

func TestPayJobs(t *testing.T) {
	tests := []struct {
		name            string
		k, every, lag   int
		wantLen, wantDp int
	}{
		{"every 9th of 2000: 10 % of callbacks repeat", 2000, 9, 128, 2223, 223},
		{"every order", 5, 1, 2, 10, 5},
		{"lag longer than the run", 10, 3, 100, 14, 4},
		{"one order", 1, 9, 128, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := payJobs(tt.k, tt.every, tt.lag)
			if len(jobs) != tt.wantLen {
				t.Fatalf("len = %d, want %d", len(jobs), tt.wantLen)
			}
			firstAt := map[int]int{}
			lastOriginal := 0
			for pos, j := range jobs {
				if !j.Dup {
					lastOriginal = pos
				}
			}
			dups := 0
			for pos, j := range jobs {
				if !j.Dup {
					if _, ok := firstAt[j.Order]; ok {
						t.Fatalf("order %d paid twice without being a repeat", j.Order)
					}
					firstAt[j.Order] = pos
					continue
				}
				dups++
				at, ok := firstAt[j.Order]
				if !ok {
					t.Fatalf("repeat of order %d before its original", j.Order)
				}
				// Only the tail, after the last original, may come sooner than lag.
				if pos-at < tt.lag && pos < lastOriginal {
					t.Errorf("repeat of order %d only %d jobs after the original, want ≥ %d", j.Order, pos-at, tt.lag)
				}
			}
			if dups != tt.wantDp || len(firstAt) != tt.k {
				t.Errorf("dups %d originals %d, want %d and %d", dups, len(firstAt), tt.wantDp, tt.k)
			}
		})
	}
}

func TestIdealHops(t *testing.T) {
	levels := core.DefaultDelayPolicy()
	timer := levels
	timer.Mode = core.DelayTimer
	tests := []struct {
		name string
		p    core.DelayPolicy
		ttl  time.Duration
		want int
	}{
		{"timer: one exact hop", timer, 25 * time.Second, 1},
		{"timer: beyond the broker's 3 days", timer, 100 * time.Hour, 2},
		{"levels: 15 min is 10 m then 5 m", levels, 15 * time.Minute, 2},
		{"levels: 25 s is 10 s, 10 s, 5 s", levels, 25 * time.Second, 3},
		{"levels: 30 s is one level", levels, 30 * time.Second, 1},
		{"levels: 3 s is three 1 s hops", levels, 3 * time.Second, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := idealHops(tt.p, tt.ttl); got != tt.want {
				t.Errorf("idealHops(%v) = %d, want %d", tt.ttl, got, tt.want)
			}
		})
	}
}

func TestDoubleSold(t *testing.T) {
	tests := []struct {
		name  string
		lists []string
		want  int
	}{
		{"none", nil, 0},
		{"disjoint", []string{"A-1,A-2", "A-3"}, 0},
		{"one seat in two orders", []string{"A-1,A-2", "A-2,A-3"}, 1},
		{"one seat in three orders counts once", []string{"A-1", "A-1", "A-1"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := doubleSold(tt.lists); got != tt.want {
				t.Errorf("doubleSold(%q) = %d, want %d", tt.lists, got, tt.want)
			}
		})
	}
}

func TestSeatPool(t *testing.T) {
	p := newSeatPool([]string{"A-1", "A-2", "A-3", "A-4"})
	got := p.pick(3)
	if len(got) != 3 || len(slices.Compact(slices.Sorted(slices.Values(got)))) != 3 {
		t.Fatalf("pick(3) = %v, want 3 distinct seats", got)
	}
	if p.size() != 4 {
		t.Fatalf("pick removed seats: size %d", p.size())
	}
	p.remove([]string{"A-1", "A-1", "Z-9", "A-4"})
	if p.size() != 2 {
		t.Fatalf("size after remove = %d, want 2", p.size())
	}
	rest := p.pick(10)
	slices.Sort(rest)
	if !slices.Equal(rest, []string{"A-2", "A-3"}) {
		t.Errorf("pick beyond the size = %v, want the two left", rest)
	}
	p.remove(rest)
	if got := p.pick(2); len(got) != 0 {
		t.Errorf("pick on an empty pool = %v", got)
	}
}

func TestSign(t *testing.T) {
	// printf '%s' '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret
	const want = "49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686"
	if got := sign("secret", "1700000000", []byte(`{"a":1}`)); got != want {
		t.Errorf("sign = %q, want %q", got, want)
	}
}

func TestHopStats(t *testing.T) {
	ev := func(order string, at int64, kind, detail string) hopEvent {
		return hopEvent{OrderNo: order, At: at, Kind: kind, Detail: detail}
	}
	sched, fired := core.EventTimeoutScheduled, core.EventTimeoutFired
	tests := []struct {
		name     string
		evs      []hopEvent
		wantHops map[string]int
		wantLate []time.Duration
		wantErr  bool
	}{
		{name: "two hops, the second handled 250 ms late", evs: []hopEvent{
			ev("A", 0, sched, `{"hop":1,"level":4,"due_at":"1970-01-01T00:00:30Z"}`),
			ev("A", 30_100, fired, `{"hop":1,"outcome":"rearmed"}`),
			ev("A", 30_100, sched, `{"hop":2,"level":3,"due_at":"1970-01-01T00:00:40.1Z"}`),
			ev("A", 40_350, fired, `{"hop":2,"outcome":"cancelled"}`),
		}, wantHops: map[string]int{"A": 2}, wantLate: []time.Duration{100 * time.Millisecond, 250 * time.Millisecond}},
		{name: "a redelivery does not count as the arrival", evs: []hopEvent{
			ev("B", 0, sched, `{"hop":1,"due_at":"1970-01-01T00:00:01Z"}`),
			ev("B", 1_900, fired, `{"hop":1,"outcome":"ignored"}`),
			ev("B", 1_010, fired, `{"hop":1,"outcome":"cancelled"}`),
		}, wantHops: map[string]int{"B": 1}, wantLate: []time.Duration{10 * time.Millisecond}},
		{name: "a hop not delivered yet has no lateness", evs: []hopEvent{
			ev("C", 0, sched, `{"hop":1,"due_at":"1970-01-01T00:00:01Z"}`),
		}, wantHops: map[string]int{"C": 1}},
		{name: "bad detail", evs: []hopEvent{ev("D", 0, sched, `{`)}, wantErr: true},
		{name: "bad due_at", evs: []hopEvent{ev("D", 0, sched, `{"hop":1,"due_at":"soon"}`)}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hops, late, err := hopStats(tt.evs)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			slices.Sort(late)
			if !maps.Equal(hops, tt.wantHops) || !slices.Equal(late, tt.wantLate) {
				t.Errorf("got hops %v lateness %v, want %v %v", hops, late, tt.wantHops, tt.wantLate)
			}
		})
	}
}
