package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
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
		if err := st.Seats.Replace(ctx, f.show.ID, nil); err != nil {
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

// TestReconcileRepairsBlocks: each way the seat store's blocks come to
// disagree with seat_block, the fault injected where it happens; block_drift
// leaves it alone within the grace period, lists it in a dry run without
// touching it, then repairs it, and DESIGN.md's invariants hold seat by seat.
func TestReconcileRepairsBlocks(t *testing.T) {
	ctx := context.Background()
	block := func(t *testing.T, f *fixture, reason string, seatIDs ...string) {
		t.Helper()
		if err := f.eng.BlockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: seatIDs, Reason: reason}); err != nil {
			t.Fatalf("block %v: %v", seatIDs, err)
		}
	}
	// The seat store alone blocks (now) or unblocks a seat, the DB not.
	setSeatStoreBlock := func(t *testing.T, f *fixture, seat, reason string) {
		t.Helper()
		if _, err := f.st.Seats.Block(ctx, f.show.ID, []string{seat}, reason, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	dropSeatStoreBlock := func(t *testing.T, f *fixture, seat string) {
		t.Helper()
		if err := f.st.Seats.Unblock(ctx, f.show.ID, []string{seat}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		fault  func(t *testing.T, f *fixture) // leaves the two stores disagreeing
		action string
		seats  []string
		also   map[string][2]int // other checks' repairs in the same run
		// probe, when set, is a seat the public may buy after the repair
		// (sellable) or not.
		probe    string
		sellable bool
	}{
		{name: "unblock committed, its seat-store step failed", fault: func(t *testing.T, f *fixture) {
			block(t, f, core.BlockHouse, "A-1", "A-2")
			f.seats.failUnblock.Store(true)
			defer f.seats.failUnblock.Store(false)
			if err := f.eng.UnblockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: []string{"A-1"}}); err != nil {
				t.Fatal(err) // committed: the failed seat-store step is left to reconcile
			}
		}, action: reconcile.ActionUnblock, seats: []string{"A-1"}, probe: "A-1", sellable: true},
		{name: "block refused by the DB, giving its seat-store step back failed", fault: func(t *testing.T, f *fixture) {
			f.place(t, 1, "C-1")
			// The seat store lost the hold, so the block's script lets it
			// through and the DB (which has the order_seat row) refuses it.
			if err := f.st.Seats.Replace(ctx, f.show.ID, nil); err != nil {
				t.Fatal(err)
			}
			f.seats.failUnblock.Store(true)
			defer f.seats.failUnblock.Store(false)
			err := f.eng.BlockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: []string{"C-1"}, Reason: core.BlockTechnical})
			if !errors.Is(err, core.ErrSeatUnavailable) {
				t.Fatalf("block of a seat with an order_seat row: %v, want seat_unavailable", err)
			}
		}, action: reconcile.ActionUnblock, seats: []string{"C-1"},
			also: map[string][2]int{reconcile.CheckStaleRedisLock: {1, 1}}},
		{name: "seat store blocks a seat the DB never blocked", fault: func(t *testing.T, f *fixture) {
			setSeatStoreBlock(t, f, "D-1", core.BlockTechnical)
		}, action: reconcile.ActionUnblock, seats: []string{"D-1"}, probe: "D-1", sellable: true},
		{name: "seat store lost a block", fault: func(t *testing.T, f *fixture) {
			block(t, f, core.BlockWheelchair, "A-1", "A-2")
			dropSeatStoreBlock(t, f, "A-2")
		}, action: reconcile.ActionBlock, seats: []string{"A-2"}, probe: "A-2"},
		{name: "seat store blocks for another reason", fault: func(t *testing.T, f *fixture) {
			block(t, f, core.BlockWheelchair, "A-1")
			setSeatStoreBlock(t, f, "A-1", core.BlockHouse)
		}, action: reconcile.ActionBlock, seats: []string{"A-1"}},
		{name: "seat store lost the block of a seat held at the box office", fault: func(t *testing.T, f *fixture) {
			block(t, f, core.BlockWheelchair, "B-1")
			if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: core.BoxOfficeUserID, ShowID: f.show.ID, SeatIDs: []string{"B-1"}, BoxOffice: true}); err != nil {
				t.Fatal(err)
			}
			dropSeatStoreBlock(t, f, "B-1")
		}, action: reconcile.ActionBlock, seats: []string{"B-1"}},
	}
	for _, tt := range tests {
		// A stack each: another case's show, its Redis keys deleted at its
		// cleanup, would be drift of its own.
		t.Run(tt.name, func(t *testing.T) {
			stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
				f := newFixture(t, st)
				tt.fault(t, f)
				before := f.blocks(t)
				holds := f.snapshot(t)

				// Within the grace period: the block's own steps may be on the way.
				wantCounts(t, f.run(t), nil)
				if got := f.blocks(t); got != before {
					t.Fatalf("blocks changed within the grace period:\n was %s\n now %s", before, got)
				}

				f.clock.Advance(grace + time.Second)
				dry, err := f.rec.RunOnce(ctx, reconcile.TriggerManual, true)
				if err != nil {
					t.Fatal(err)
				}
				f.wantItem(t, dry, tt.action, tt.seats, false)
				if got := f.blocks(t); got != before {
					t.Fatalf("a dry run changed the blocks:\n was %s\n now %s", before, got)
				}
				if got := f.snapshot(t); got != holds {
					t.Fatalf("a dry run changed the seats:\n was %s\n now %s", holds, got)
				}

				run := f.run(t)
				want := map[string][2]int{reconcile.CheckBlockDrift: {1, 1}}
				maps.Copy(want, tt.also)
				wantCounts(t, run, want)
				f.wantItem(t, run, tt.action, tt.seats, true)
				if v := metricValue(t, f.reg, "seatflow_reconcile_fixed_total", reconcile.CheckBlockDrift); v != 1 {
					t.Errorf("seatflow_reconcile_fixed_total{check=block_drift} = %v, want 1", v)
				}
				f.checkInvariants(t)
				wantCounts(t, f.run(t), nil)

				if tt.probe != "" {
					_, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 9, ShowID: f.show.ID, SeatIDs: []string{tt.probe}})
					switch {
					case tt.sellable && err != nil:
						t.Errorf("public placement of %s after the repair: %v, want it sold", tt.probe, err)
					case !tt.sellable && !errors.Is(err, core.ErrSeatUnavailable):
						t.Errorf("public placement of blocked %s after the repair: %v, want seat_unavailable", tt.probe, err)
					}
				}
			})
		})
	}
}

// TestReconcileLeavesBlockInFlight: a block whose seat-store step is done
// and whose transaction has not committed yet looks like a seat-store block
// without a row; block_drift must not take it away, or the seat would be
// sold to the public once the block commits.
func TestReconcileLeavesBlockInFlight(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		f.clock.Advance(grace + time.Second) // the show is old; the block is not
		// BlockSeats' seat-store step, as it runs it...
		if _, err := st.Seats.Block(ctx, f.show.ID, []string{"E-1"}, core.BlockHouse, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		wantCounts(t, f.run(t), nil)
		// ...and its transaction, committing after the run.
		if err := st.DB.BlockSeats(ctx, f.show.ID, []string{"E-1"}, core.BlockHouse, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		f.checkInvariants(t)
		f.clock.Advance(grace + time.Second)
		wantCounts(t, f.run(t), nil)
	})
}

// blocks is the show's blocks in both stores, as comparable text.
func (f *fixture) blocks(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	inRedis, err := f.st.Seats.BlockEntries(ctx, f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	inDB, err := f.st.DB.Blocks(ctx, f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint("redis ", inRedis, " db ", inDB)
}

// wantItem checks that run's block_drift found one item: action on seats,
// fixed or not.
func (f *fixture) wantItem(t *testing.T, run reconcile.Run, action string, seatIDs []string, fixed bool) {
	t.Helper()
	c, ok := run.Check(reconcile.CheckBlockDrift)
	if !ok {
		t.Fatalf("no %s check in the run: %+v", reconcile.CheckBlockDrift, run.Checks)
	}
	if c.Found != 1 || len(c.Items) != 1 {
		t.Fatalf("%s found %d items %+v, want 1", c.Name, c.Found, c.Items)
	}
	it := c.Items[0]
	if it.Action != action || it.ShowID != f.show.ID || !slices.Equal(it.SeatIDs, seatIDs) || it.Fixed != fixed || it.Error != "" {
		t.Errorf("%s item %+v, want %s of %v on show %d, fixed %v", c.Name, it, action, seatIDs, f.show.ID, fixed)
	}
}
