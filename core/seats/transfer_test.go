package seats

import (
	"context"
	"testing"
	"time"

	"seatflow/core"
)

// offerHold is a seat locked by the offer w1 (user 9) at t1.
func offerHold(seat string) core.SeatHold {
	return core.SeatHold{SeatID: seat, State: core.SeatLocked, OrderNo: "w1", UserID: 9, LockedAt: t0.Add(time.Minute)}
}

func TestTransfer(t *testing.T) {
	fixture := []step{
		{order: "o1", user: 1, seats: []string{"a", "b"}},
		{order: "o2", user: 2, seats: []string{"c"}},
		{sell: true, order: "o3", user: 1, seats: []string{"d"}},
	}
	t1 := t0.Add(time.Minute)
	tests := []struct {
		name   string
		from   string
		seats  []string
		times  int
		want   int // seats moved by the last call
		holds  []core.SeatHold
		limits map[int64]int
	}{
		{name: "locked seats go to the offer, the counters with them", from: "o1", seats: []string{"a", "b"}, times: 1, want: 2,
			holds:  []core.SeatHold{offerHold("a"), offerHold("b"), lk("c", "o2", 2), sd("d", "o3", 1, time.Time{})},
			limits: map[int64]int{1: 1, 2: 1, 9: 2}},
		{name: "a sold seat (a refund) goes locked to the offer", from: "o3", seats: []string{"d"}, times: 1, want: 1,
			holds:  []core.SeatHold{lk("a", "o1", 1), lk("b", "o1", 1), lk("c", "o2", 2), offerHold("d")},
			limits: map[int64]int{1: 2, 2: 1, 9: 1}},
		{name: "another order's seat is left alone, a free one is taken", from: "o1", seats: []string{"a", "c", "z"}, times: 1, want: 2,
			holds:  []core.SeatHold{offerHold("a"), lk("b", "o1", 1), lk("c", "o2", 2), sd("d", "o3", 1, time.Time{}), offerHold("z")},
			limits: map[int64]int{1: 2, 2: 1, 9: 2}},
		{name: "from nobody (an unblock) takes free seats only", from: "", seats: []string{"a", "y"}, times: 1, want: 1,
			holds:  []core.SeatHold{lk("a", "o1", 1), lk("b", "o1", 1), lk("c", "o2", 2), sd("d", "o3", 1, time.Time{}), offerHold("y")},
			limits: map[int64]int{1: 3, 2: 1, 9: 1}},
		{name: "twice moves nothing more", from: "o1", seats: []string{"a", "b"}, times: 2, want: 0,
			holds:  []core.SeatHold{offerHold("a"), offerHold("b"), lk("c", "o2", 2), sd("d", "o3", 1, time.Time{})},
			limits: map[int64]int{1: 1, 2: 1, 9: 2}},
	}
	eachStore(t, func(t *testing.T, s *subject) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				show := s.newShow(t)
				given(t, s, show, fixture)
				var n int
				for range tt.times {
					var err error
					if n, err = s.Transfer(context.Background(), show, tt.from, "w1", 9, tt.seats, t1); err != nil {
						t.Fatal(err)
					}
				}
				if n != tt.want {
					t.Errorf("Transfer moved %d, want %d", n, tt.want)
				}
				wantState(t, s, show, tt.holds, tt.limits)
			})
		}
	})
}
