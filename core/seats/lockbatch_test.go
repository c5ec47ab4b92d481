package seats

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
)

// TestLockPipeline: a batch of locks sent as one pipeline answers each as
// alone (a conflict among them included), also when Redis has lost its
// script cache.
func TestLockPipeline(t *testing.T) {
	eachBackend(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		s := New(rdb)
		show := newShow(t, rdb)
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		call := func(order string, seats ...string) *lockCall {
			args := []any{order, "7", 0, t0.UnixMilli(), "0"}
			for _, id := range seats {
				args = append(args, id)
			}
			return &lockCall{keys: []string{KeySeats(show), KeyLimit(show), KeyBlocked(show), KeyBestBounds(show)}, args: args}
		}
		run := func(what string, batch []*lockCall, want ...[]string) {
			t.Helper()
			s.runLocks(ctx, batch)
			for i, c := range batch {
				if c.err != nil || !slices.Equal(c.res, want[i]) {
					t.Errorf("%s, call %d: %q, %v; want %q", what, i, c.res, c.err, want[i])
				}
			}
		}
		run("no script cached", []*lockCall{call("o1", "a", "b"), call("o2", "b", "c")}, []string{"ok"}, []string{"taken", "b"})
		run("script cached", []*lockCall{call("o3", "d"), call("o5", "c", "d")}, []string{"ok"}, []string{"taken", "d"})
		holds, err := s.Holds(ctx, show)
		if err != nil {
			t.Fatal(err)
		}
		if len(holds) != 3 {
			t.Errorf("holds %+v, want a, b by o1 and d by o3", holds)
		}
		// Through Lock, the same answers.
		if err := s.Lock(ctx, show, 7, "o4", []string{"d"}, 0, t0); !errors.Is(err, core.ErrSeatUnavailable) {
			t.Errorf("Lock of a held seat: %v", err)
		}
	})
}
