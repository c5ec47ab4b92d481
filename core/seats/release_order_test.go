package seats

import (
	"context"
	"testing"
	"time"

	"seatflow/core"
)

// TestReleaseOrder frees what one order holds locked, and nothing of
// another order or of its own sold seats; twice frees nothing more.
func TestReleaseOrder(t *testing.T) {
	cases := []struct {
		name  string
		steps []step
		order string
		n     int
		want  []core.SeatHold
	}{
		{"its locked seats", []step{{order: "o1", user: 1, seats: []string{"A1", "A2"}}, {order: "o2", user: 2, seats: []string{"A3"}}},
			"o1", 2, []core.SeatHold{lk("A3", "o2", 2)}},
		{"not its sold seats", []step{{sell: true, order: "o1", user: 1, seats: []string{"A1"}}},
			"o1", 0, []core.SeatHold{sd("A1", "o1", 1, time.Time{})}},
		{"nothing held", []step{{order: "o2", user: 2, seats: []string{"A3"}}},
			"o1", 0, []core.SeatHold{lk("A3", "o2", 2)}},
	}
	eachStore(t, func(t *testing.T, s *subject) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				show := s.newShow(t)
				given(t, s, show, tc.steps)
				for i, want := range []int{tc.n, 0} {
					n, err := s.ReleaseOrder(ctx, show, tc.order)
					if err != nil || n != want {
						t.Fatalf("release %d: %d seats (%v), want %d", i+1, n, err, want)
					}
				}
				wantState(t, s, show, tc.want, impliedLimits(tc.want))
			})
		}
	})
}
