package admission

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// t0 is the tests' clock, at millisecond precision as the stores keep it.
var t0 = time.UnixMilli(1_760_000_000_000).UTC()

// newShow returns a show id no other test (nor a concurrent run on the
// shared Redis) uses, and deletes its queue at the end.
func newShow(tb testing.TB, st Store) int64 {
	id := 1<<52 + rand.Int64N(1<<52)
	tb.Cleanup(func() { _ = st.Delete(context.Background(), id) })
	return id
}

func configure(tb testing.TB, st Store, show int64, s Settings) Status {
	tb.Helper()
	got, err := st.Configure(context.Background(), show, s)
	if err != nil {
		tb.Fatalf("configure: %v", err)
	}
	return got
}

func join(tb testing.TB, st Store, show, user int64, now time.Time) Entry {
	tb.Helper()
	e, _, err := st.Join(context.Background(), show, user, fmt.Sprintf("ticket-%d", user), now)
	if err != nil {
		tb.Fatalf("join user %d: %v", user, err)
	}
	return e
}

func status(tb testing.TB, st Store, show int64) Status {
	tb.Helper()
	s, err := st.Status(context.Background(), show)
	if err != nil {
		tb.Fatalf("status: %v", err)
	}
	return s
}

func position(tb testing.TB, st Store, e Entry) int64 {
	tb.Helper()
	p, err := st.Position(context.Background(), e)
	if err != nil {
		tb.Fatalf("position of user %d: %v", e.User, err)
	}
	return p
}

func advance(tb testing.TB, st Store, show, n int64) int64 {
	tb.Helper()
	h, err := st.Advance(context.Background(), show, n)
	if err != nil {
		tb.Fatalf("advance: %v", err)
	}
	return h
}

func shuffle(tb testing.TB, st Store, show int64, now time.Time) bool {
	tb.Helper()
	ok, err := st.Shuffle(context.Background(), show, now)
	if err != nil {
		tb.Fatalf("shuffle: %v", err)
	}
	return ok
}

// storeContract is what every Store must do; newStore returns the store
// under test (one per subtest or shared: shows never clash).
func storeContract(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	opens := t0.Add(time.Hour)

	t.Run("no queue", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		calls := []struct {
			name string
			call func() error
		}{
			{"status", func() error { _, err := st.Status(ctx, show); return err }},
			{"join", func() error { _, _, err := st.Join(ctx, show, 1, "t", t0); return err }},
			{"pre position", func() error { _, err := st.Position(ctx, Entry{Show: show, User: 1, Seq: 1, Pre: true}); return err }},
			{"shuffle", func() error { _, err := st.Shuffle(ctx, show, opens); return err }},
			{"advance", func() error { _, err := st.Advance(ctx, show, 1); return err }},
			{"admitted at", func() error { _, err := st.AdmittedAt(ctx, show, 1, t0); return err }},
			{"claim placement", func() error { _, err := st.ClaimPlacement(ctx, show, 1, "h", t0, t0); return err }},
			{"end placement", func() error { _, err := st.EndPlacement(ctx, show, 1, "h", true); return err }},
			{"entries", func() error { _, _, err := st.Entries(ctx, show); return err }},
		}
		for _, c := range calls {
			if err := c.call(); !errors.Is(err, ErrNoQueue) {
				t.Errorf("%s on a show never configured: %v, want ErrNoQueue", c.name, err)
			}
		}
		if err := st.Delete(ctx, show); err != nil {
			t.Errorf("delete of a show never configured: %v", err)
		}
	})

	t.Run("settings", func(t *testing.T) {
		cases := []struct {
			name string
			in   Settings
			want Settings
			seed bool // a seed hash is published
		}{
			{"defaults", Settings{Enabled: true},
				Settings{Enabled: true, Mode: ModeAlways, Window: DefaultWindow}, false},
			{"all set", Settings{Enabled: true, Mode: ModeOverload, OpensAt: opens.Add(123456 * time.Nanosecond), Window: time.Minute, Paused: true},
				Settings{Enabled: true, Mode: ModeOverload, OpensAt: opens, Window: time.Minute, Paused: true}, true},
			{"disabled with opens_at", Settings{OpensAt: opens},
				Settings{Mode: ModeAlways, OpensAt: opens, Window: DefaultWindow}, false},
			{"seed fields are the store's", Settings{Enabled: true, SeedHash: "aa", Seed: "bb"},
				Settings{Enabled: true, Mode: ModeAlways, Window: DefaultWindow}, false},
		}
		st := newStore(t)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				show := newShow(t, st)
				got := configure(t, st, show, c.in)
				if (got.SeedHash != "") != c.seed || len(got.SeedHash) != 0 && len(got.SeedHash) != 64 {
					t.Errorf("seed hash %q, want one: %v", got.SeedHash, c.seed)
				}
				if got.Seed != "" {
					t.Errorf("seed %q published before the draw", got.Seed)
				}
				if again := status(t, st, show); !sameSettings(again.Settings, got.Settings) {
					t.Errorf("status %+v, configure answered %+v", again.Settings, got.Settings)
				}
				got.SeedHash = ""
				if !sameSettings(got.Settings, c.want) {
					t.Errorf("settings %+v, want %+v", got.Settings, c.want)
				}
			})
		}
	})

	t.Run("the seed is drawn once", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		first := configure(t, st, show, Settings{Enabled: true, OpensAt: opens})
		again := configure(t, st, show, Settings{Enabled: true, OpensAt: opens.Add(time.Minute), Paused: true})
		off := configure(t, st, show, Settings{OpensAt: opens})
		if first.SeedHash == "" || again.SeedHash != first.SeedHash || off.SeedHash != first.SeedHash {
			t.Errorf("seed hashes %q, %q, %q: want one, unchanged", first.SeedHash, again.SeedHash, off.SeedHash)
		}
		if other := configure(t, st, newShow(t, st), Settings{Enabled: true, OpensAt: opens}); other.SeedHash == first.SeedHash {
			t.Error("two shows drew the same seed")
		}
	})

	t.Run("join", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		if _, _, err := st.Join(ctx, show, 1, "t", t0); !errors.Is(err, ErrNoQueue) {
			t.Fatalf("join before configure: %v", err)
		}
		configure(t, st, show, Settings{Enabled: true})
		e, created, err := st.Join(ctx, show, 7, "first", t0.Add(1500*time.Microsecond))
		want := Entry{Show: show, User: 7, Seq: 1, JoinedAt: t0.Add(time.Millisecond), Ticket: "first"}
		if err != nil || !created || !e.JoinedAt.Equal(want.JoinedAt) {
			t.Fatalf("join: %+v %v %v", e, created, err)
		}
		e.JoinedAt = want.JoinedAt
		if e != want {
			t.Errorf("entry %+v, want %+v", e, want)
		}
		again, created, err := st.Join(ctx, show, 7, "second", t0.Add(time.Hour))
		if err != nil || created || again.Ticket != "first" || again.Seq != 1 || !again.JoinedAt.Equal(want.JoinedAt) {
			t.Errorf("second join: %+v created %v %v, want the first entry", again, created, err)
		}
		if e := join(t, st, show, 8, t0); e.Seq != 2 || e.Pre {
			t.Errorf("next join: %+v", e)
		}
		if p := position(t, st, e); p != 1 {
			t.Errorf("position %d, want 1", p)
		}
		configure(t, st, show, Settings{})
		if _, _, err := st.Join(ctx, show, 9, "t", t0); !errors.Is(err, ErrNoQueue) {
			t.Errorf("join of a disabled queue: %v", err)
		}
		if _, _, err := st.Join(ctx, show, 7, "t", t0); !errors.Is(err, ErrNoQueue) {
			t.Errorf("join again of a disabled queue: %v", err)
		}
	})

	t.Run("first come first served", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		configure(t, st, show, Settings{Enabled: true})
		for u := int64(1); u <= 5; u++ {
			if e := join(t, st, show, 100+u, t0); e.Seq != u || e.Pre || position(t, st, e) != u {
				t.Fatalf("join %d: %+v", u, e)
			}
		}
		if shuffle(t, st, show, opens) {
			t.Error("shuffled a queue with no pre-queue")
		}
		heads := []struct{ n, want int64 }{{0, 0}, {-3, 0}, {2, 2}, {2, 4}, {10, 5}, {1, 5}}
		for _, h := range heads {
			if got := advance(t, st, show, h.n); got != h.want {
				t.Errorf("advance by %d: head %d, want %d", h.n, got, h.want)
			}
		}
		join(t, st, show, 200, t0)
		if got := advance(t, st, show, 10); got != 6 {
			t.Errorf("head %d after one more join, want 6", got)
		}
		s := status(t, st, show)
		if s.Joined != 6 || s.PreJoined != 0 || s.Shuffled || s.Admitted != 6 {
			t.Errorf("status %+v", s)
		}
	})

	t.Run("pause", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		configure(t, st, show, Settings{Enabled: true, Paused: true})
		join(t, st, show, 1, t0)
		if got := advance(t, st, show, 1); got != 0 {
			t.Errorf("a paused queue advanced to %d", got)
		}
		configure(t, st, show, Settings{Enabled: true})
		if got := advance(t, st, show, 1); got != 1 {
			t.Errorf("a resumed queue: head %d, want 1", got)
		}
	})

	t.Run("pre-queue", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		conf := configure(t, st, show, Settings{Enabled: true, OpensAt: opens})
		var pre []Entry
		for u := int64(1); u <= 20; u++ {
			e := join(t, st, show, u*1000, opens.Add(-time.Duration(u)*time.Second))
			if !e.Pre || e.Seq != u {
				t.Fatalf("join before opening: %+v", e)
			}
			if p := position(t, st, e); p != 0 {
				t.Errorf("position %d before the draw, want 0", p)
			}
			pre = append(pre, e)
		}
		if got := advance(t, st, show, 5); got != 0 {
			t.Errorf("advanced to %d before the draw", got)
		}
		if shuffle(t, st, show, opens.Add(-time.Millisecond)) {
			t.Error("shuffled before opening")
		}
		if s := status(t, st, show); s.Shuffled || s.Seed != "" || s.PreJoined != 20 || s.Joined != 20 {
			t.Errorf("status before opening: %+v", s)
		}
		if !shuffle(t, st, show, opens) {
			t.Fatal("no shuffle at opening")
		}
		if shuffle(t, st, show, opens.Add(time.Hour)) {
			t.Error("shuffled twice")
		}
		// A late join whose clock says it is before opening is still not
		// in the drawn pre-queue: the draw closed it.
		late := join(t, st, show, 99, opens.Add(-time.Minute))
		if late.Pre || late.Seq != 21 || position(t, st, late) != 21 {
			t.Errorf("join after the draw: %+v", late)
		}
		s := status(t, st, show)
		if !s.Shuffled || s.SeedHash != conf.SeedHash || s.Seed == "" || s.PreJoined != 20 || s.Joined != 21 {
			t.Fatalf("status after the draw: %+v", s)
		}
		entries, positions, err := st.Entries(ctx, show)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(s.Seed, s.SeedHash, entries, positions); err != nil {
			t.Errorf("the published order does not verify: %v", err)
		}
		want := DrawOrder(mustHex(t, s.Seed), pre)
		for i, e := range pre {
			if got := position(t, st, e); got != want[i] || positions[i] != want[i] {
				t.Errorf("user %d: position %d, entries say %d, the draw %d", e.User, got, positions[i], want[i])
			}
			if entries[i].User != e.User || entries[i].Seq != e.Seq || !entries[i].Pre {
				t.Errorf("entry %d: %+v, joined as %+v", i, entries[i], e)
			}
		}
		if got := advance(t, st, show, 100); got != 21 {
			t.Errorf("head %d after the draw, want 21", got)
		}
	})

	t.Run("a join after opening closes the pre-queue", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		configure(t, st, show, Settings{Enabled: true, OpensAt: opens})
		a := join(t, st, show, 1, opens.Add(-time.Second))
		b := join(t, st, show, 2, opens)
		c := join(t, st, show, 3, opens.Add(-time.Second)) // a clock behind the others
		if !a.Pre || b.Pre || c.Pre {
			t.Errorf("pre flags %v %v %v, want true false false", a.Pre, b.Pre, c.Pre)
		}
		if s := status(t, st, show); s.PreJoined != 1 {
			t.Errorf("pre-joined %d, want 1", s.PreJoined)
		}
		if got := advance(t, st, show, 3); got != 0 {
			t.Errorf("advanced to %d with the pre-queue not drawn", got)
		}
		shuffle(t, st, show, opens)
		if p := position(t, st, a); p != 1 {
			t.Errorf("the only pre-queue entry at %d", p)
		}
	})

	t.Run("an empty pre-queue is drawn too", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		configure(t, st, show, Settings{Enabled: true, OpensAt: opens})
		if !shuffle(t, st, show, opens) {
			t.Fatal("no draw")
		}
		s := status(t, st, show)
		if !s.Shuffled || SeedHash(mustHex(t, s.Seed)) != s.SeedHash {
			t.Errorf("status %+v", s)
		}
	})

	t.Run("admissions", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		configure(t, st, show, Settings{Enabled: true})
		at, err := st.AdmittedAt(ctx, show, 5, t0.Add(1500*time.Microsecond))
		if err != nil || !at.Equal(t0.Add(time.Millisecond)) {
			t.Fatalf("admitted at %v %v", at, err)
		}
		if again, err := st.AdmittedAt(ctx, show, 5, t0.Add(time.Hour)); err != nil || !again.Equal(at) {
			t.Errorf("second stamp %v %v, want the first %v", again, err, at)
		}
		if other, _ := st.AdmittedAt(ctx, show, 6, t0.Add(time.Hour)); !other.Equal(t0.Add(time.Hour)) {
			t.Errorf("another user stamped at %v", other)
		}
		claim := func(user int64, holder string, now time.Time) func() (any, error) {
			return func() (any, error) { return st.ClaimPlacement(ctx, show, user, holder, now.Add(time.Minute), now) }
		}
		end := func(user int64, holder string, placed bool) func() (any, error) {
			return func() (any, error) { return st.EndPlacement(ctx, show, user, holder, placed) }
		}
		steps := []struct {
			name string
			call func() (any, error)
			want any
		}{
			{"first claim", claim(5, "a", t0), ClaimTaken},
			{"another holder while it runs", claim(5, "b", t0), ClaimBusy},
			{"the same holder again", claim(5, "a", t0), ClaimTaken},
			{"another user", claim(6, "b", t0), ClaimTaken},
			{"a release by another holder keeps it", end(5, "b", false), false},
			{"still busy", claim(5, "b", t0.Add(59*time.Second)), ClaimBusy},
			{"lapsed", claim(5, "b", t0.Add(time.Minute)), ClaimTaken},
			{"released by its holder", end(5, "b", false), false},
			{"claimed after the release", claim(5, "c", t0), ClaimTaken},
			{"placed", end(5, "c", true), true},
			{"used", claim(5, "d", t0.Add(time.Hour)), ClaimUsed},
			{"placed again", end(5, "d", true), false},
			{"the other user is not used", claim(6, "b", t0), ClaimTaken},
		}
		for _, s := range steps {
			if got, err := s.call(); err != nil || got != s.want {
				t.Errorf("%s: %v %v, want %v", s.name, got, err, s.want)
			}
		}
		if s := status(t, st, show); s.Placed != 1 {
			t.Errorf("placed %d, want 1", s.Placed)
		}
	})

	t.Run("shows and delete", func(t *testing.T) {
		st := newStore(t)
		on, off, gone := newShow(t, st), newShow(t, st), newShow(t, st)
		configure(t, st, on, Settings{Enabled: true})
		configure(t, st, off, Settings{Enabled: true})
		configure(t, st, off, Settings{})
		first := configure(t, st, gone, Settings{Enabled: true, OpensAt: opens})
		join(t, st, gone, 1, t0)
		if err := st.Delete(ctx, gone); err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, gone); err != nil {
			t.Errorf("second delete: %v", err)
		}
		shows, err := st.Shows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(shows, on) || slices.Contains(shows, off) || slices.Contains(shows, gone) {
			t.Errorf("shows %v: want %d, not %d (disabled) nor %d (deleted)", shows, on, off, gone)
		}
		if !slices.IsSorted(shows) {
			t.Errorf("shows %v not sorted", shows)
		}
		if _, err := st.Status(ctx, gone); !errors.Is(err, ErrNoQueue) {
			t.Errorf("status of a deleted queue: %v", err)
		}
		again := configure(t, st, gone, Settings{Enabled: true, OpensAt: opens})
		if again.Joined != 0 || again.SeedHash == first.SeedHash {
			t.Errorf("a queue made anew after delete: %+v", again)
		}
		if e := join(t, st, gone, 1, t0); e.Seq != 1 {
			t.Errorf("join after delete: %+v", e)
		}
	})
}

// sameSettings compares settings with OpensAt as an instant.
func sameSettings(a, b Settings) bool {
	same := a.OpensAt.Equal(b.OpensAt)
	a.OpensAt, b.OpensAt = time.Time{}, time.Time{}
	return same && a == b
}

func mustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatalf("seed %q: %v", s, err)
	}
	return b
}

// concurrencyContract: what the stores must keep when many callers act at
// once (run under -race).
func concurrencyContract(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	opens := t0.Add(time.Hour)

	t.Run("joins at once", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		configure(t, st, show, Settings{Enabled: true, OpensAt: opens})
		const users, each = 200, 3 // every user joins three times
		entries := make([]Entry, users*each)
		var wg sync.WaitGroup
		for i := range entries {
			wg.Go(func() {
				user := int64(i%users) + 1
				// Half the users join before opening: they form the pre-queue
				// only until the first join after opening.
				now := opens.Add(-time.Second)
				if i%users >= users/2 {
					now = opens
				}
				e, _, err := st.Join(ctx, show, user, fmt.Sprintf("t%d", i), now)
				if err != nil {
					t.Error(err)
				}
				entries[i] = e
			})
		}
		wg.Wait()
		bySeq := map[int64]Entry{}
		for _, e := range entries {
			if prev, ok := bySeq[e.Seq]; ok && prev != e {
				t.Fatalf("seq %d given to %+v and %+v", e.Seq, prev, e)
			}
			bySeq[e.Seq] = e
		}
		s := status(t, st, show)
		if len(bySeq) != users || s.Joined != users {
			t.Fatalf("%d distinct entries, %d joined: want %d", len(bySeq), s.Joined, users)
		}
		for seq := int64(1); seq <= users; seq++ {
			if e, ok := bySeq[seq]; !ok || e.Pre != (seq <= s.PreJoined) {
				t.Errorf("seq %d: %+v (pre-joined %d)", seq, e, s.PreJoined)
			}
		}
		shuffle(t, st, show, opens)
		_, positions, err := st.Entries(ctx, show)
		if err != nil {
			t.Fatal(err)
		}
		if !isPermutation(positions) {
			t.Errorf("positions %v are not 1 to %d", positions, users)
		}
	})

	t.Run("shuffles at once", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		configure(t, st, show, Settings{Enabled: true, OpensAt: opens})
		for u := int64(1); u <= 100; u++ {
			join(t, st, show, u, t0)
		}
		const callers = 8
		won := make([]bool, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				ok, err := st.Shuffle(ctx, show, opens)
				if err != nil {
					t.Error(err)
				}
				won[i] = ok
			})
		}
		wg.Wait()
		if n := countTrue(won); n != 1 {
			t.Errorf("%d callers drew the order, want 1", n)
		}
		s := status(t, st, show)
		entries, positions, err := st.Entries(ctx, show)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(s.Seed, s.SeedHash, entries, positions); err != nil || !isPermutation(positions) {
			t.Errorf("after concurrent shuffles: %v, positions %v", err, positions)
		}
	})

	t.Run("advances at once", func(t *testing.T) {
		st := newStore(t)
		show := newShow(t, st)
		configure(t, st, show, Settings{Enabled: true})
		const joined = 50
		for u := int64(1); u <= joined; u++ {
			join(t, st, show, u, t0)
		}
		heads := make([]int64, 40)
		var wg sync.WaitGroup
		for i := range heads {
			wg.Go(func() {
				h, err := st.Advance(ctx, show, 3)
				if err != nil {
					t.Error(err)
				}
				heads[i] = h
			})
		}
		wg.Wait()
		slices.Sort(heads)
		// Every advance moves the head by 3 until it reaches joined: the
		// heads seen are 3, 6, ..., 48, then 50 for the rest.
		for i, h := range heads {
			if want := min(int64(i+1)*3, joined); h != want {
				t.Fatalf("heads seen %v: the %d-th is %d, want %d", heads, i+1, h, want)
			}
		}
	})
}

func isPermutation(p []int64) bool {
	s := slices.Sorted(slices.Values(p))
	for i, v := range s {
		if v != int64(i)+1 {
			return false
		}
	}
	return true
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

func TestMemoryStore(t *testing.T) {
	storeContract(t, func(*testing.T) Store { return NewMemory() })
}

func TestMemoryConcurrency(t *testing.T) {
	concurrencyContract(t, func(*testing.T) Store { return NewMemory() })
}
