package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
)

// Faults that run a competing call between two steps of a check, at the
// exact Redis command where the check acts on what it read before.

// TestFaultCancelBeforeRelock: the order whose lost lock stale_redis_lock
// re-locks is cancelled after the check's snapshot, just before the lock
// goes to Redis. The seats must not stay locked for the cancelled order.
func TestFaultCancelBeforeRelock(t *testing.T) {
	stacktest.EachRedis(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st)
		o := f.place(t, 2, "B-1", "B-2")
		f.flushSeats(t) // the seat store lost the order's lock
		f.clock.Advance(grace + time.Second)

		fault := st.InjectRedis(&stacktest.RedisFault{
			Match: func(cmd redis.Cmder) bool {
				keys, argv, ok := stacktest.ScriptCall(cmd)
				return ok && len(keys) == 4 && keys[0] == seats.KeySeats(f.show.ID) && len(argv) > 0 && argv[0] == o.OrderNo
			},
			Before: func(ctx context.Context) {
				if _, err := f.eng.Cancel(ctx, o.OrderNo, o.UserID); err != nil {
					t.Errorf("cancel before the re-lock: %v", err)
				}
			}})
		run := f.run(t)
		if !fault.Fired() {
			t.Fatal("the fault never hit the re-lock")
		}
		// Found, not fixed: the order ended, the lock was given back.
		wantCounts(t, run, map[string][2]int{reconcile.CheckStaleRedisLock: {1, 0}})
		f.wantSeat(t, "B-1", core.SeatAvailable, "")
		f.wantSeat(t, "B-2", core.SeatAvailable, "")
		f.checkInvariants(t)
		f.place(t, 3, "B-1", "B-2") // another buyer at once, not one interval later
		f.checkInvariants(t)
	})
}
