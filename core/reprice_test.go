package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
)

// TestReprice: before a show's first order its categories' prices change,
// seats and all, and the next order pays the new price (the engine had
// the old plan cached); a refusal changes nothing; once an order exists
// prices are fixed.
func TestReprice(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st, core.Config{})
		ctx := context.Background()
		show, err := f.eng.CreateShow(ctx, core.NewShow{Name: "Reprice", StartsAt: time.Now().Add(24 * time.Hour), Currency: "EUR",
			Plan: core.PlanSpec{Categories: []core.PriceCategory{{Code: "A", Name: "Stalls", PriceCents: 5000}, {Code: "B", Name: "Balcony", PriceCents: 3000}},
				Grid: &core.GridSpec{Rows: 2, SeatsPerRow: 4, RowCategories: []core.RowCategory{{From: 1, To: 1, Category: "A"}, {From: 2, To: 2, Category: "B"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		st.CleanupSeats(t, show.ID)
		// The engine caches the plan when it prices a preview.
		if _, err := f.eng.PreviewBest(ctx, core.BestPreview{ShowID: show.ID, Count: 1}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name    string
			changes []core.PriceChange
			code    string // the refusal's; "" for done
		}{
			{"no change", nil, "invalid_request"},
			{"negative", []core.PriceChange{{Code: "A", PriceCents: -1}}, core.CodeInvalidPrice},
			{"unknown category", []core.PriceChange{{Code: "Z", PriceCents: 100}}, core.CodeUnknownCategory},
			{"twice", []core.PriceChange{{Code: "A", PriceCents: 1}, {Code: "A", PriceCents: 2}}, core.CodeInvalidPlan},
			{"stalls dearer, balcony kept", []core.PriceChange{{Code: "A", PriceCents: 6500}}, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before, _ := st.DB.Show(ctx, show.ID)
				after, err := f.eng.Reprice(ctx, show.ID, tc.changes)
				var ce *core.Error
				if tc.code != "" {
					now, _ := st.DB.Show(ctx, show.ID)
					if !errors.As(err, &ce) || ce.Code != tc.code || now.PlanVersion != before.PlanVersion {
						t.Fatalf("got %v (plan version %d → %d), want %s and nothing changed", err, before.PlanVersion, now.PlanVersion, tc.code)
					}
					return
				}
				if err != nil || after.PlanVersion != before.PlanVersion+1 {
					t.Fatalf("got %+v %v, want the plan version bumped", after, err)
				}
			})
		}
		cats, err := st.DB.PriceCategories(ctx, show.ID)
		if err != nil || len(cats) != 2 || cats[0].PriceCents != 6500 || cats[1].PriceCents != 3000 {
			t.Fatalf("categories %+v (%v), want A 6500, B 3000", cats, err)
		}
		o, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1", "B-1"}})
		if err != nil || o.AmountCents != 6500+3000 {
			t.Fatalf("order %+v (%v), want 9500: the new stalls price", o, err)
		}
		if _, err := f.eng.Reprice(ctx, show.ID, []core.PriceChange{{Code: "B", PriceCents: 1}}); !errors.Is(err, core.ErrShowOnSale) {
			t.Fatalf("reprice after an order: %v, want show_on_sale", err)
		}
	})
}
