package core_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
)

// TestPreviewBest: the counter's preview is the choice PlaceBest then
// makes on the same state (taken and blocked seats counted), it locks
// nothing, and it refuses what PlaceBest refuses. Each case has a show of
// its own, 4 rows of 5 seats (A-1 … D-5), stage centre at x 3.
func TestPreviewBest(t *testing.T) {
	cases := []struct {
		name      string
		taken     []string // held by orders before the preview
		blocked   []string
		req       core.BestPreview // ShowID filled in
		want      []string         // in the order chosen
		wantCode  string           // or the error's code
		wantField string
	}{
		{name: "3 together on an empty map", req: core.BestPreview{Count: 3, Together: true}, want: []string{"A-1", "A-2", "A-3"}}, // A-2 … A-4 would strand
		{name: "a taken seat: no single seat stranded", taken: []string{"A-3"},
			req: core.BestPreview{Count: 2, Together: true}, want: []string{"A-1", "A-2"}},
		{name: "blocked seats are never chosen", blocked: []string{"A-2", "A-3", "A-4"},
			req: core.BestPreview{Count: 2, Together: true}, want: []string{"B-1", "B-2"}},
		{name: "apart, best seats first", taken: []string{"A-3"},
			req: core.BestPreview{Count: 2}, want: []string{"B-3", "C-3"}},
		{name: "nothing fits", taken: []string{"A-3", "B-3", "C-3", "D-3"},
			req: core.BestPreview{Count: 3, Together: true}, wantCode: core.ErrNotEnoughSeats.Code},
		{name: "count 0", req: core.BestPreview{Count: 0}, wantCode: core.CodeInvalidRequest, wantField: "best_available.count"},
		{name: "count 11", req: core.BestPreview{Count: 11}, wantCode: core.CodeInvalidRequest, wantField: "best_available.count"},
		{name: "more together than the longest row", req: core.BestPreview{Count: 6, Together: true},
			wantCode: core.CodeInvalidRequest, wantField: "best_available.count"},
		{name: "unknown category", req: core.BestPreview{Count: 1, Category: "Z"},
			wantCode: core.CodeUnknownCategory, wantField: "best_available.category"},
	}
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		eng := st.Engine(t, core.Config{PurchaseLimit: 20, MaxSeatsPerOrder: 10}, stacktest.NewClock(time.Now()))
		for _, tc := range cases {
			show := st.NewShow(t, 4, 5)
			if st.Redis != nil && st.Embedded == nil {
				t.Cleanup(func() { st.Redis.Del(context.Background(), seats.KeyBest(show.ID)) })
			}
			for i, id := range tc.taken {
				if _, err := eng.Place(ctx, core.PlaceRequest{UserID: int64(100 + i), ShowID: show.ID, SeatIDs: []string{id}}); err != nil {
					t.Fatalf("%s: take %s: %v", tc.name, id, err)
				}
			}
			if len(tc.blocked) > 0 {
				if err := eng.BlockSeats(ctx, core.BlockRequest{ShowID: show.ID, SeatIDs: tc.blocked, Reason: "house"}); err != nil {
					t.Fatalf("%s: block: %v", tc.name, err)
				}
			}
			req := tc.req
			req.ShowID = show.ID
			before, err := st.Seats.Holds(ctx, show.ID)
			if err != nil {
				t.Fatal(err)
			}
			c, err := eng.PreviewBest(ctx, req)
			if tc.wantCode != "" {
				var ce *core.Error
				if !errors.As(err, &ce) || ce.Code != tc.wantCode || ce.Field != tc.wantField {
					t.Errorf("%s: preview %+v answered %v, want code %s field %q", tc.name, c, err, tc.wantCode, tc.wantField)
				} else if tc.wantCode == core.ErrNotEnoughSeats.Code && ce.Left == nil {
					t.Errorf("%s: not enough seats, but nothing said of what is left", tc.name)
				}
				continue
			}
			if err != nil || !slices.Equal(c.SeatIDs, tc.want) {
				t.Errorf("%s: preview %v %v, want %v", tc.name, c.SeatIDs, err, tc.want)
				continue
			}
			after, err := st.Seats.Holds(ctx, show.ID)
			if err != nil || len(after) != len(before) {
				t.Errorf("%s: the preview changed the seat store: %d holds before, %d after (%v)", tc.name, len(before), len(after), err)
			}
			o, _, err := eng.PlaceBest(ctx, core.BestAvailableRequest{PlaceRequest: core.PlaceRequest{UserID: 9, ShowID: show.ID},
				Count: req.Count, Category: req.Category, Together: req.Together, Accessible: req.Accessible})
			if err != nil || !slices.Equal(o.SeatIDs, slices.Sorted(slices.Values(c.SeatIDs))) {
				t.Errorf("%s: PlaceBest chose %v (%v), the preview %v", tc.name, o.SeatIDs, err, c.SeatIDs)
			}
		}
	})
}

// TestBestRanking: the heat map's scores are the choice's (distance to
// the focal point, the plan's rank when given), seats of equal score
// share a rank, and bad rules are refused as SetBestRules refuses them.
func TestBestRanking(t *testing.T) {
	st := stacktest.Embedded(t)
	eng := st.Engine(t, core.Config{}, stacktest.NewClock(time.Now()))
	show := st.NewShow(t, 2, 3) // A-1 … B-3 at x 1..3, y 1..2
	cases := []struct {
		name     string
		rules    core.BestRules
		wantRank map[string]int
		wantErr  string // the field at fault
	}{
		{name: "stage centre", rules: core.BestRules{},
			wantRank: map[string]int{"A-2": 1, "A-1": 2, "A-3": 2, "B-2": 2, "B-1": 5, "B-3": 5}},
		{name: "a focal point at the back left", rules: core.BestRules{FocalSet: true, FocalX: 1, FocalY: 2},
			wantRank: map[string]int{"B-1": 1, "A-1": 2, "B-2": 2, "A-2": 4, "B-3": 5, "A-3": 6}},
		{name: "a focal point off the plan", rules: core.BestRules{FocalSet: true, FocalX: -1}, wantErr: "focal"},
	}
	for _, tc := range cases {
		got, err := eng.BestRanking(context.Background(), show.ID, tc.rules)
		if tc.wantErr != "" {
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Field != tc.wantErr {
				t.Errorf("%s: %v, want an error on %s", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(got) != 6 {
			t.Fatalf("%s: %d seats, %v", tc.name, len(got), err)
		}
		for _, s := range got {
			if s.Rank != tc.wantRank[s.SeatID] {
				t.Errorf("%s: %s ranked %d (score %d), want %d", tc.name, s.SeatID, s.Rank, s.Score, tc.wantRank[s.SeatID])
			}
		}
	}
	if _, err := eng.BestRanking(context.Background(), show.ID+1000, core.BestRules{}); !errors.Is(err, core.ErrShowNotFound) {
		t.Errorf("unknown show: %v, want show not found", err)
	}
}
