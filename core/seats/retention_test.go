package seats

import (
	"context"
	"testing"
)

// TestDeleteShow removes the keys of an ended show and keeps those of a
// live one.
func TestDeleteShow(t *testing.T) {
	eachStore(t, func(t *testing.T, s *subject) {
		ctx := context.Background()
		ended, live := s.newShow(t), s.newShow(t)
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
			if n := s.storedParts(tc.show); n != tc.want {
				t.Errorf("show %d: %d of its keys exist, want %d", tc.show, n, tc.want)
			}
		}
	})
}
