package seats

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
)

func bl(seat, reason string, at time.Time) core.SeatBlock {
	return core.SeatBlock{SeatID: seat, Reason: reason, BlockedAt: at}
}

// wantBlocks checks the show's blocks, reasons and times.
func wantBlocks(t *testing.T, s *Store, show int64, want []core.SeatBlock) {
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
	eachBackend(t, func(t *testing.T, rdb redis.UniversalClient) {
		s := New(rdb)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				show := newShow(t, rdb)
				for _, b := range tt.blocks {
					if _, err := s.Block(ctx, show, []string{b.SeatID}, b.Reason, b.BlockedAt); err != nil {
						t.Fatal(err)
					}
				}
				for seat, v := range tt.bare {
					if err := rdb.HSet(ctx, KeyBlocked(show), seat, v).Err(); err != nil {
						t.Fatal(err)
					}
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
	eachBackend(t, func(t *testing.T, rdb redis.UniversalClient) {
		s := New(rdb)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				show := newShow(t, rdb)
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
