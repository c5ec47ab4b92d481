package admission

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func testRoom(t *testing.T, overloaded *bool) (*Room, *Keys) {
	t.Helper()
	key, err := ParseKey(NewKey())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := NewKeys(key)
	if err != nil {
		t.Fatal(err)
	}
	sig := Signals{}
	if overloaded != nil {
		sig.Overloaded = func() bool { return *overloaded }
	}
	cfg := RoomConfig{Tick: time.Hour, Controller: ControllerConfig{MinRate: 2, MaxRate: 2, InitialRate: 2}}
	return NewRoom(NewMemory(), keys, cfg, sig, nil, nil), keys
}

// Concurrent joins of the same users get one entry each, the same ticket
// on every join, and positions 1..n.
func TestRoomConcurrentJoins(t *testing.T) {
	r, _ := testRoom(t, nil)
	ctx := t.Context()
	if _, err := r.Configure(ctx, 1, Settings{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	const users, joins = 50, 4
	var mu sync.Mutex
	tickets := map[int64]map[string]bool{}
	var wg sync.WaitGroup
	for u := int64(1); u <= users; u++ {
		for range joins {
			wg.Go(func() {
				v, _, err := r.Join(ctx, 1, u, time.Now())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if tickets[u] == nil {
					tickets[u] = map[string]bool{}
				}
				tickets[u][v.Ticket] = true
			})
		}
	}
	wg.Wait()
	seen := map[int64]bool{}
	for u, ts := range tickets {
		if len(ts) != 1 {
			t.Fatalf("user %d got %d tickets", u, len(ts))
		}
		for tk := range ts {
			v, err := r.Poll(ctx, tk, time.Now())
			if err != nil || v.Position < 1 || v.Position > users || seen[v.Position] {
				t.Fatalf("user %d: %+v %v", u, v, err)
			}
			seen[v.Position] = true
		}
	}
}

// The loop admits rate × time, the estimate follows the rate, and every
// admission check has its answer.
func TestRoomStepAndCheck(t *testing.T) {
	r, keys := testRoom(t, nil)
	ctx := t.Context()
	if _, err := r.Configure(ctx, 1, Settings{Enabled: true, Window: time.Minute}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	var tickets []string
	for u := int64(1); u <= 5; u++ {
		v, _, err := r.Join(ctx, 1, u, t0)
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, v.Ticket)
	}
	for _, at := range []time.Duration{0, time.Second} { // 2 a second: 2 admitted
		if err := r.Step(ctx, t0.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	snap, ok := r.Snapshot(1)
	if !ok || snap.Status.Admitted != 2 || snap.EstimatedWait(5) != 1500*time.Millisecond || snap.Waiting() != 3 {
		t.Fatalf("snapshot %+v %v, wait at 5: %v", snap, ok, snap.EstimatedWait(5))
	}
	v, err := r.Poll(ctx, tickets[0], t0)
	if err != nil || v.State != StateAdmitted || v.Admission == "" {
		t.Fatalf("first: %+v %v", v, err)
	}
	if w, _ := r.Poll(ctx, tickets[2], t0); w.State != StateWaiting || w.Admission != "" {
		t.Fatalf("third: %+v", w)
	}
	if !r.Required(1) || r.Required(2) {
		t.Fatal("Required: show 1 has an always queue, show 2 none")
	}
	other := keys.SignAdmission(Grant{Show: 2, User: 1, Seq: 1, Until: t0.Add(time.Minute)})
	for _, tc := range []struct {
		name      string
		user      int64
		admission string
		now       time.Time
		want      error
	}{
		{"missing", 1, "", t0, ErrAdmissionRequired},
		{"valid", 1, v.Admission, t0, nil},
		{"other user", 2, v.Admission, t0, ErrAdmissionInvalid},
		{"other show", 1, other, t0, ErrAdmissionInvalid},
		{"expired", 1, v.Admission, t0.Add(2 * time.Minute), ErrAdmissionInvalid},
	} {
		end, err := r.BeginPlacement(ctx, 1, tc.user, tc.admission, tc.now)
		if !errors.Is(err, tc.want) && err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if end != nil {
			if err := end(ctx, false); err != nil { // a 409: the admission stays usable
				t.Fatal(err)
			}
		}
	}
	// One placement at a time per admission: a second one while the first
	// is in flight is busy; after a 409 the admission is usable again;
	// after a success it is used.
	first, err := r.BeginPlacement(ctx, 1, 1, v.Admission, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.BeginPlacement(ctx, 1, 1, v.Admission, t0); !errors.Is(err, ErrAdmissionBusy) {
		t.Errorf("second placement in flight: %v, want %v", err, ErrAdmissionBusy)
	}
	if err := first(ctx, false); err != nil {
		t.Fatal(err)
	}
	retry, err := r.BeginPlacement(ctx, 1, 1, v.Admission, t0)
	if err != nil {
		t.Fatalf("retry after a 409: %v", err)
	}
	if err := retry(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := r.BeginPlacement(ctx, 1, 1, v.Admission, t0); !errors.Is(err, ErrAdmissionInvalid) {
		t.Errorf("used: %v", err)
	}
	// The window counts from the first poll that saw the admission; past
	// it a poll says expired, with no admission.
	if a, _ := r.Poll(ctx, tickets[1], t0); a.State != StateAdmitted {
		t.Fatalf("second: %+v", a)
	}
	if e, _ := r.Poll(ctx, tickets[1], t0.Add(2*time.Minute)); e.State != StateExpired || e.Admission != "" {
		t.Errorf("past the window: %+v", e)
	}
}

// Mode overload: admitted at once and no admission needed while the
// engine copes; queued while it is overloaded.
func TestRoomModeOverload(t *testing.T) {
	overloaded := false
	r, _ := testRoom(t, &overloaded)
	ctx := t.Context()
	if _, err := r.Configure(ctx, 1, Settings{Enabled: true, Mode: ModeOverload}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		overloaded bool
		user       int64
		state      State
		required   bool
	}{
		{false, 1, StateAdmitted, false},
		{true, 2, StateWaiting, true},
		{true, 3, StateWaiting, true},
		{false, 4, StateAdmitted, false},
	} {
		overloaded = tc.overloaded
		v, _, err := r.Join(ctx, 1, tc.user, time.Now())
		if err != nil || v.State != tc.state || r.Required(1) != tc.required {
			t.Errorf("user %d, overloaded %v: %+v %v, required %v", tc.user, tc.overloaded, v, err, r.Required(1))
		}
	}
}
