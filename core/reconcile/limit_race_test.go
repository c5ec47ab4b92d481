package reconcile_test

import (
	"context"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
)

// TestFaultLockBeforeLimitWrite: limit_drift has read a drifted counter
// twice and is about to write the DB's count when a placement of the same
// user locks one more seat. The placement's increment must survive.
func TestFaultLockBeforeLimitWrite(t *testing.T) {
	stacktest.EachRedis(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		ctx := context.Background()
		f.place(t, 1, "A-1", "A-2")
		if err := st.Seats.SetLimit(ctx, f.show.ID, 1, 5); err != nil { // drifted: 5 for 2 seats
			t.Fatal(err)
		}
		limitKey := seats.KeyLimit(f.show.ID)
		var racer core.Order
		fault := st.InjectRedis(&stacktest.RedisFault{
			// The counter write: a plain HSET/HDEL or a script on the limit key alone.
			Match: func(cmd redis.Cmder) bool {
				if keys, _, ok := stacktest.ScriptCall(cmd); ok {
					return slices.Equal(keys, []string{limitKey})
				}
				args := cmd.Args()
				return (cmd.Name() == "hset" || cmd.Name() == "hdel") && len(args) > 1 && args[1] == limitKey
			},
			Before: func(ctx context.Context) {
				var err error
				if racer, err = f.eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: f.show.ID, SeatIDs: []string{"C-1"}}); err != nil {
					t.Errorf("place between the read and the write: %v", err)
				}
			}})
		run := f.run(t)
		if !fault.Fired() {
			t.Fatal("the fault never hit the counter write")
		}
		wantCounts(t, run, map[string][2]int{reconcile.CheckLimitDrift: {1, 0}})
		limits, err := st.Seats.Limits(ctx, f.show.ID)
		if err != nil {
			t.Fatal(err)
		}
		if limits[1] != 6 {
			t.Fatalf("counter of user 1 after the race: %d, want 6 (the drifted 5 plus the racing lock's seat)", limits[1])
		}
		// The next run sees the drift settled and fixes it.
		wantCounts(t, f.run(t), map[string][2]int{reconcile.CheckLimitDrift: {1, 1}})
		f.wantSeat(t, "C-1", core.SeatLocked, racer.OrderNo)
		f.checkInvariants(t)
	})
}
