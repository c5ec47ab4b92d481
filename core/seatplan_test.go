package core_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// countingStore counts seat-plan reads.
type countingStore struct {
	core.Store
	seatReads atomic.Int64
}

func (c *countingStore) Seats(ctx context.Context, showID int64) ([]core.Seat, error) {
	c.seatReads.Add(1)
	return c.Store.Seats(ctx, showID)
}

// TestSeatPlanReadOnceOnSale: when a show goes on sale, 64 buyers miss the
// plan cache at once; the plan is read once for all of them.
func TestSeatPlanReadOnceOnSale(t *testing.T) {
	st := stacktest.Embedded(t)
	show := st.NewShow(t, 8, 8)
	cs := &countingStore{Store: st.DB}
	eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, Delay: core.DefaultDelayPolicy()},
		core.Deps{Store: cs, Seats: st.Seats, Queue: st.Queue})
	if err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			<-start
			seat := fmt.Sprintf("%c-%d", 'A'+i/8, 1+i%8)
			if _, err := eng.Place(context.Background(), core.PlaceRequest{UserID: int64(i + 1), ShowID: show.ID, SeatIDs: []string{seat}}); err != nil {
				t.Errorf("place %s: %v", seat, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := cs.seatReads.Load(); n != 1 {
		t.Errorf("the seat plan was read %d times for 64 placements on a new show, want once", n)
	}
}
