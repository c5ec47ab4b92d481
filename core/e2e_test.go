package core_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// TestTimeoutChainEndToEnd lets real time run: the order is placed, nobody
// pays, and the queue's own deliveries must end it. On RocketMQ in levels
// mode a 15 s hold takes level 3 (10 s) and then level 2 (5 s); the
// embedded queue uses exact timers.
func TestTimeoutChainEndToEnd(t *testing.T) {
	tests := []struct {
		name       string
		stack      func(testing.TB) *stacktest.Stack
		policy     core.DelayPolicy
		ttl        time.Duration
		wantLevels []float64
		maxLate    time.Duration
	}{
		{"rocketmq levels", stacktest.Real, core.DefaultDelayPolicy(), 15 * time.Second, []float64{3, 2}, 2500 * time.Millisecond},
		{"embedded timer", stacktest.Embedded, core.DelayPolicy{Mode: core.DelayTimer}, 2 * time.Second, []float64{0}, time.Second},
		{"embedded levels", stacktest.Embedded, core.DefaultDelayPolicy(), 7 * time.Second, []float64{2, 1, 1}, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := tt.stack(t)
			show := st.NewShow(t, 2, 2)
			eng := st.Engine(t, core.Config{HoldTTL: tt.ttl, Delay: tt.policy}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := st.Queue.Consume(ctx, eng.HandleTimeouts); err != nil {
				t.Fatal(err)
			}
			o, err := eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1", "B-2"}})
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(tt.ttl + 30*time.Second)
			var (
				got core.Order
				evs []core.Event
			)
			for time.Now().Before(deadline) {
				if got, evs, err = eng.Order(ctx, o.OrderNo); err != nil {
					t.Fatal(err)
				}
				if got.Status != core.StatusPending {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if got.Status != core.StatusCancelled || got.CancelReason != core.ReasonTimeout {
				for _, e := range evs {
					t.Logf("event %s %s %v", e.At.Format("15:04:05.000"), e.Kind, e.Detail)
				}
				t.Fatalf("order %s is %v (%s) after %v", o.OrderNo, got.Status, got.CancelReason, tt.ttl+30*time.Second)
			}
			late := got.ClosedAt.Sub(got.ExpireAt)
			t.Logf("%s: cancel came %v after expire_time", tt.name, late)
			if late < 0 || late > tt.maxLate {
				t.Errorf("cancel lateness %v, want within [0, %v]", late, tt.maxLate)
			}
			var levels []float64
			for _, e := range evs {
				if e.Kind == core.EventTimeoutScheduled {
					levels = append(levels, e.Detail["level"].(float64))
				}
			}
			if !slices.Equal(levels, tt.wantLevels) {
				t.Errorf("hops at levels %v, want %v", levels, tt.wantLevels)
			}
			// The release runs after the cancel's commit, which the loop
			// above may have seen first: give it a moment.
			var holds []core.SeatHold
			for release := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				holds, err = st.Seats.Holds(ctx, show.ID)
				if err != nil || len(holds) == 0 || time.Now().After(release) {
					break
				}
			}
			if err != nil || len(holds) != 0 {
				t.Errorf("seat store after timeout: %+v, %v", holds, err)
			}
			taken, err := st.DB.TakenSeats(ctx, show.ID)
			if err != nil || len(taken) != 0 {
				t.Errorf("order_seat rows after timeout: %+v, %v", taken, err)
			}
		})
	}
}
