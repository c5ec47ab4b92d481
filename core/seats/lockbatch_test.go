package seats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
)

// TestScriptPipeline: a batch of script runs sent as one pipeline answers
// each as alone (a conflict among them included, locks and marks of seats
// sold mixed), also when Redis has lost its script cache.
func TestScriptPipeline(t *testing.T) {
	eachBackend(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		s := New(rdb)
		show := newShow(t, rdb)
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		lock := func(order string, seats ...string) *scriptCall {
			args := []any{order, "7", 0, t0.UnixMilli(), "0"}
			for _, id := range seats {
				args = append(args, id)
			}
			return &scriptCall{script: s.lock, keys: []string{KeySeats(show), KeyLimit(show), KeyBlocked(show), KeyBestBounds(show)}, args: args}
		}
		sell := func(order string, seats ...string) *scriptCall {
			args := []any{order, "7"}
			for _, id := range seats {
				args = append(args, id)
			}
			return &scriptCall{script: s.sell, keys: changeKeys(show), args: args}
		}
		run := func(what string, batch []*scriptCall, want ...[]string) {
			t.Helper()
			s.runScripts(ctx, batch)
			for i, c := range batch {
				if want[i] == nil { // a sell: no error is its answer
					if err := c.res.Err(); err != nil {
						t.Errorf("%s, call %d: %v", what, i, err)
					}
					continue
				}
				if res, err := c.res.StringSlice(); err != nil || !slices.Equal(res, want[i]) {
					t.Errorf("%s, call %d: %q, %v; want %q", what, i, res, err, want[i])
				}
			}
		}
		run("no script cached", []*scriptCall{lock("o1", "a", "b"), lock("o2", "b", "c")}, []string{"ok"}, []string{"taken", "b"})
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		run("sell among locks, no script cached", []*scriptCall{sell("o1", "a", "b"), lock("o3", "d"), lock("o5", "c", "d")},
			nil, []string{"ok"}, []string{"taken", "d"})
		holds, err := s.Holds(ctx, show)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range holds {
			got = append(got, fmt.Sprintf("%s:%s:%v", h.SeatID, h.OrderNo, h.State))
		}
		slices.Sort(got)
		want := []string{
			fmt.Sprintf("a:o1:%v", core.SeatSold), fmt.Sprintf("b:o1:%v", core.SeatSold), fmt.Sprintf("d:o3:%v", core.SeatLocked)}
		if !slices.Equal(got, want) {
			t.Errorf("holds %s, want %s", strings.Join(got, " "), strings.Join(want, " "))
		}
		// Through Lock, the same answers.
		if err := s.Lock(ctx, show, 7, "o4", []string{"d"}, 0, t0); !errors.Is(err, core.ErrSeatUnavailable) {
			t.Errorf("Lock of a held seat: %v", err)
		}
	})
}
