package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// TestSalesEnd: a show sells until its sales_end, or without one until it
// starts, through the public API and at the counter alike; after that both
// get sales_ended and nothing is held.
func TestSalesEnd(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		start := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Millisecond)
		for _, tt := range []struct {
			name     string
			salesEnd time.Time // zero: none
			at       time.Duration
			counter  bool
			want     error // nil: the seats are held
		}{
			{"no sales_end, before the start", time.Time{}, -time.Millisecond, false, nil},
			{"no sales_end, at the start", time.Time{}, 0, false, core.ErrSalesEnded},
			{"no sales_end, a day after the start", time.Time{}, 24 * time.Hour, false, core.ErrSalesEnded},
			{"no sales_end, at the counter a day after the start", time.Time{}, 24 * time.Hour, true, core.ErrSalesEnded},
			{"no sales_end, at the counter before the start", time.Time{}, -time.Hour, true, nil},
			{"sales_end, before it", start.Add(-2 * time.Hour), -3 * time.Hour, false, nil},
			{"sales_end, between it and the start", start.Add(-2 * time.Hour), -time.Hour, false, core.ErrSalesEnded},
			{"sales_end, at the counter between it and the start", start.Add(-2 * time.Hour), -time.Hour, true, core.ErrSalesEnded},
		} {
			t.Run(tt.name, func(t *testing.T) {
				show, err := st.DB.CreateShow(ctx, core.Show{Name: "Sales " + stacktest.RandHex(3), Venue: "Hall",
					StartsAt: start, SalesEnd: tt.salesEnd, Rows: 1, Cols: 2}, store.DemoSeats(1, 2, 5000))
				if err != nil {
					t.Fatal(err)
				}
				st.CleanupSeats(t, show.ID)
				clock := stacktest.NewClock(start.Add(tt.at))
				eng := st.Engine(t, core.Config{PurchaseLimit: 6}, clock)
				counter := core.NewCounter(eng, st.DB)
				var o core.Order
				if tt.counter {
					o, err = counter.Hold(ctx, core.CounterHold{ShowID: show.ID, SeatIDs: []string{"A-1"}})
				} else {
					o, err = eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1"}})
				}
				if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
					t.Fatalf("placed %v after the start: order %q, err %v; want %v", tt.at, o.OrderNo, err, tt.want)
				}
				holds, err := st.Seats.Holds(ctx, show.ID)
				if err != nil {
					t.Fatal(err)
				}
				if held := len(holds) > 0; held != (tt.want == nil) {
					t.Errorf("seat store holds %+v after the placement", holds)
				}
			})
		}
	})
}
