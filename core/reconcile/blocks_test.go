package reconcile_test

import (
	"context"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
)

// TestReconcileKeepsBlocks: blocked seats are no lock for reconcile to
// free, and a box-office hold of a blocked seat whose lock the seat store
// lost is locked again (past the block) with the block kept.
func TestReconcileKeepsBlocks(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		if err := f.eng.BlockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: []string{"A-1", "B-1"}, Reason: core.BlockWheelchair}); err != nil {
			t.Fatal(err)
		}
		counter, err := f.eng.Place(ctx, core.PlaceRequest{UserID: core.BoxOfficeUserID, ShowID: f.show.ID, SeatIDs: []string{"B-1"}, BoxOffice: true})
		if err != nil {
			t.Fatal(err)
		}
		// The seat store loses its locks but not its blocks.
		if err := st.Redis.Del(ctx, seats.KeySeats(f.show.ID), seats.KeyLimit(f.show.ID)).Err(); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(grace + time.Second)
		run := f.run(t)
		wantCounts(t, run, map[string][2]int{"stale_redis_lock": {1, 1}})
		f.wantSeat(t, "B-1", core.SeatLocked, counter.OrderNo)
		f.wantSeat(t, "A-1", core.SeatAvailable, "")
		blocks, err := st.Seats.Blocks(ctx, f.show.ID)
		if err != nil || len(blocks) != 2 || blocks["A-1"] != core.BlockWheelchair || blocks["B-1"] != core.BlockWheelchair {
			t.Errorf("blocks after reconcile: %v, %v", blocks, err)
		}
		f.checkInvariants(t)
		if run := f.run(t); len(run.Checks) == 0 {
			t.Fatal("no checks ran")
		} else {
			wantCounts(t, run, nil)
		}
	})
}
