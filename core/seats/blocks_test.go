package seats

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"seatflow/core"
)

func bl(seat, reason string, at time.Time) core.SeatBlock {
	return core.SeatBlock{SeatID: seat, Reason: reason, BlockedAt: at}
}

// wantBlocks checks the show's blocks, reasons and times.
func wantBlocks(t *testing.T, s Interface, show int64, want []core.SeatBlock) {
	t.Helper()
	got, err := s.BlockEntries(context.Background(), show)
	if err != nil {
		t.Fatal(err)
	}
	if want == nil {
		want = []core.SeatBlock{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("blocks:\n got %+v\nwant %+v", got, want)
	}
}

// TestUnblockIfBlockedBefore: only blocks older than the cutoff go, so a
// block taken after reconcile read the seat store (its DB row not yet
// committed) stays; a block stored without a time counts as old.
func TestUnblockIfBlockedBefore(t *testing.T) {
	tests := []struct {
		name   string
		blocks []core.SeatBlock // given, at their times
		bare   map[string]string
		seats  []string
		before time.Time
		freed  []string
		want   []core.SeatBlock
	}{
		{name: "old block freed", blocks: []core.SeatBlock{bl("a", "house", t0), bl("b", "house", t0)},
			seats: []string{"a"}, before: t0.Add(time.Millisecond), freed: []string{"a"},
			want: []core.SeatBlock{bl("b", "house", t0)}},
		{name: "block at the cutoff kept", blocks: []core.SeatBlock{bl("a", "house", t0)},
			seats: []string{"a"}, before: t0, want: []core.SeatBlock{bl("a", "house", t0)}},
		{name: "young block kept, old one freed", blocks: []core.SeatBlock{bl("a", "house", t0), bl("b", "technical", t0.Add(time.Hour))},
			seats: []string{"a", "b"}, before: t0.Add(time.Minute), freed: []string{"a"},
			want: []core.SeatBlock{bl("b", "technical", t0.Add(time.Hour))}},
		{name: "block without a time freed", bare: map[string]string{"a": "house"},
			seats: []string{"a"}, before: t0, freed: []string{"a"}},
		{name: "seat not blocked", seats: []string{"a"}, before: t0.Add(time.Hour)},
	}
	eachStore(t, func(t *testing.T, s *subject) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				show := s.newShow(t)
				for _, b := range tt.blocks {
					if _, err := s.Block(ctx, show, []string{b.SeatID}, b.Reason, b.BlockedAt); err != nil {
						t.Fatal(err)
					}
				}
				for seat, reason := range tt.bare {
					s.bareBlock(t, show, seat, reason)
				}
				freed, err := s.UnblockIfBlockedBefore(ctx, show, tt.seats, tt.before)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(freed, tt.freed) {
					t.Errorf("freed %v, want %v", freed, tt.freed)
				}
				wantBlocks(t, s, show, tt.want)
			})
		}
	})
}

// TestRestoreBlocks: a block is written back only over what the caller
// read, so a block or unblock that ran in between wins; what the seat
// holds does not matter.
func TestRestoreBlocks(t *testing.T) {
	t1 := t0.Add(time.Hour)
	tests := []struct {
		name    string
		blocks  []core.SeatBlock // the seat store now
		seen    []core.SeatBlock // what the caller read
		restore []core.SeatBlock
		written []string
		want    []core.SeatBlock
	}{
		{name: "lost block written back", restore: []core.SeatBlock{bl("a", "wheelchair", t0)},
			written: []string{"a"}, want: []core.SeatBlock{bl("a", "wheelchair", t0)}},
		{name: "other reason overwritten", blocks: []core.SeatBlock{bl("a", "house", t0)}, seen: []core.SeatBlock{bl("a", "house", t0)},
			restore: []core.SeatBlock{bl("a", "wheelchair", t0)}, written: []string{"a"}, want: []core.SeatBlock{bl("a", "wheelchair", t0)}},
		{name: "blocked since it was read: kept", blocks: []core.SeatBlock{bl("a", "technical", t1)},
			restore: []core.SeatBlock{bl("a", "wheelchair", t0)}, want: []core.SeatBlock{bl("a", "technical", t1)}},
		{name: "re-blocked since it was read: kept", blocks: []core.SeatBlock{bl("a", "house", t1)}, seen: []core.SeatBlock{bl("a", "house", t0)},
			restore: []core.SeatBlock{bl("a", "wheelchair", t0)}, want: []core.SeatBlock{bl("a", "house", t1)}},
		{name: "unblocked since it was read: kept", seen: []core.SeatBlock{bl("a", "house", t0)},
			restore: []core.SeatBlock{bl("a", "wheelchair", t0)}},
		{name: "one of two written", blocks: []core.SeatBlock{bl("b", "house", t1)},
			restore: []core.SeatBlock{bl("a", "house", t0), bl("b", "house", t0)}, written: []string{"a"},
			want: []core.SeatBlock{bl("a", "house", t0), bl("b", "house", t1)}},
	}
	eachStore(t, func(t *testing.T, s *subject) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				show := s.newShow(t)
				// A held seat is blocked again all the same (a box-office sale of a blocked seat).
				given(t, s, show, []step{{order: "o1", user: 1, seats: []string{"a"}}})
				if err := s.ReplaceBlocks(ctx, show, tt.blocks); err != nil {
					t.Fatal(err)
				}
				seen := make(map[string]core.SeatBlock)
				for _, b := range tt.seen {
					seen[b.SeatID] = b
				}
				written, err := s.RestoreBlocks(ctx, show, tt.restore, seen)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(written, tt.written) {
					t.Errorf("written %v, want %v", written, tt.written)
				}
				wantBlocks(t, s, show, tt.want)
				wantState(t, s, show, []core.SeatHold{lk("a", "o1", 1)}, map[int64]int{1: 1})
			})
		}
	})
}

// TestBlock: a block takes every seat or none, refused by locked and sold
// seats; Lock refuses a blocked seat, LockBlocked takes it and the block
// stays, so the seat is blocked again once the order lets it go.
func TestBlock(t *testing.T) {
	eachStore(t, func(t *testing.T, s *subject) {
		ctx := context.Background()
		show := s.newShow(t)
		given(t, s, show, []step{{order: "o1", user: 1, seats: []string{"a"}}, {sell: true, order: "o2", user: 2, seats: []string{"b"}}})

		_, err := s.Block(ctx, show, []string{"c", "b", "d", "a"}, "house", t0)
		var ce *core.Error
		if !errors.As(err, &ce) || !errors.Is(err, core.ErrSeatUnavailable) || !slices.Equal(ce.Seats, []string{"b", "a"}) {
			t.Fatalf("Block over held seats: %v, want seat_unavailable naming b, a", err)
		}
		wantBlocks(t, s, show, nil)

		added, err := s.Block(ctx, show, []string{"c"}, "house", t0)
		if err != nil || !slices.Equal(added, []string{"c"}) {
			t.Fatalf("Block c: %v %v, want [c]", added, err)
		}
		t1 := t0.Add(time.Second)
		if added, err = s.Block(ctx, show, []string{"d", "c"}, "technical", t1); err != nil || !slices.Equal(added, []string{"d"}) {
			t.Fatalf("Block d, c: %v %v, want [d]: c was blocked before", added, err)
		}
		wantBlocks(t, s, show, []core.SeatBlock{bl("c", "technical", t1), bl("d", "technical", t1)})

		for _, bad := range [][]string{nil, make([]string, MaxLockSeats+1)} {
			if _, err := s.Block(ctx, show, bad, "house", t0); !errors.Is(err, core.ErrInvalid) {
				t.Errorf("Block of %d seats: %v, want invalid", len(bad), err)
			}
		}
		if _, err := s.Block(ctx, show, []string{"e"}, "a|b", t0); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("Block with | in the reason: %v, want invalid", err)
		}

		err = s.Lock(ctx, show, 3, "o3", []string{"e", "c"}, 0, t0)
		if !errors.As(err, &ce) || !errors.Is(err, core.ErrSeatUnavailable) || !slices.Equal(ce.Seats, []string{"c"}) {
			t.Fatalf("Lock of a blocked seat: %v, want seat_unavailable naming c", err)
		}
		if err := s.LockBlocked(ctx, show, 3, "o3", []string{"e", "c"}, 2, t0); err != nil {
			t.Fatalf("LockBlocked: %v", err)
		}
		if err := s.LockBlocked(ctx, show, 3, "o4", []string{"d"}, 2, t0); !errors.Is(err, core.ErrPurchaseLimit) {
			t.Fatalf("LockBlocked over the limit: %v, want purchase_limit", err)
		}
		wantState(t, s, show, []core.SeatHold{lk("a", "o1", 1), sd("b", "o2", 2, time.Time{}), lk("c", "o3", 3), lk("e", "o3", 3)},
			map[int64]int{1: 1, 2: 1, 3: 2})
		wantBlocks(t, s, show, []core.SeatBlock{bl("c", "technical", t1), bl("d", "technical", t1)})

		if n, err := s.Release(ctx, show, 3, "o3", []string{"e", "c"}); err != nil || n != 2 {
			t.Fatalf("Release: %d %v, want 2", n, err)
		}
		if blocks, err := s.Blocks(ctx, show); err != nil || !reflect.DeepEqual(blocks, map[string]string{"c": "technical", "d": "technical"}) {
			t.Errorf("Blocks after the release: %v %v", blocks, err)
		}
		if err := s.Unblock(ctx, show, []string{"c", "z"}); err != nil {
			t.Fatal(err)
		}
		wantBlocks(t, s, show, []core.SeatBlock{bl("d", "technical", t1)})
	})
}

// TestCancelledContext: a request whose context is over fails as an outage
// that still says why, so the HTTP layer answers 499, not 503.
func TestCancelledContext(t *testing.T) {
	eachStore(t, func(t *testing.T, s *subject) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		show := s.newShow(t)
		ops := map[string]func() error{
			"Lock":  func() error { return s.Lock(ctx, show, 1, "o1", []string{"a"}, 0, t0) },
			"Ping":  func() error { return s.Ping(ctx) },
			"Holds": func() error { _, err := s.Holds(ctx, show); return err },
			"Release": func() error {
				_, err := s.Release(ctx, show, 1, "o1", []string{"a"})
				return err
			},
		}
		for name, op := range ops {
			if err := op(); !errors.Is(err, context.Canceled) || !errors.Is(err, core.ErrStoreUnavailable) {
				t.Errorf("%s: %v, want store_unavailable wrapping context.Canceled", name, err)
			}
		}
		if err := s.Lock(ctx, show, 1, "o|1", []string{"a"}, 0, t0); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("Lock of a bad order number: %v, want invalid before the context is looked at", err)
		}
	})
}
