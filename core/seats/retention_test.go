package seats

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestDeleteShow removes the keys of an ended show and keeps those of a
// live one.
func TestDeleteShow(t *testing.T) {
	eachBackend(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		s := New(rdb)
		ended, live := newShow(t, rdb), newShow(t, rdb)
		for _, id := range []int64{ended, live} {
			if err := s.Lock(ctx, id, 7, "ORD-1", []string{"A-1"}, 6, t0); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Block(ctx, id, []string{"B-1"}, "house", t0); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 { // a repeated delete is no error
			if err := s.DeleteShow(ctx, ended); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			show int64
			want int64
		}{{ended, 0}, {live, 3}} {
			var n int64
			for _, k := range []string{KeySeats(tc.show), KeyLimit(tc.show), KeyBlocked(tc.show)} {
				n += rdb.Exists(ctx, k).Val()
			}
			if n != tc.want {
				t.Errorf("show %d: %d of its keys exist, want %d", tc.show, n, tc.want)
			}
		}
	})
}
