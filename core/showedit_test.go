package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// TestEditShow: a show's name, venue, start and sales end change while it
// has no order, checked as creation checks them (the field at fault
// named, nothing written); once an order exists (show_on_sale) or the show
// is cancelled the edit is refused; a new sales end holds for the next
// placement.
func TestEditShow(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		start := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Millisecond)
		str := func(s string) *string { return &s }
		at := func(t time.Time) *time.Time { return &t }
		for _, tt := range []struct {
			name      string
			patch     core.ShowPatch
			salesEnd  time.Time // the show's at creation
			prepare   string    // "", "order", "cancel"
			wantField string    // a refusal naming this field
			wantErr   error     // a refusal of this kind
			check     func(core.Show) bool
		}{
			{name: "rename", patch: core.ShowPatch{Name: str("New name")},
				check: func(s core.Show) bool { return s.Name == "New name" && s.Venue == "Hall" && s.StartsAt.Equal(start) }},
			{name: "move venue and start", patch: core.ShowPatch{Venue: str("Big hall"), StartsAt: at(start.Add(time.Hour))},
				check: func(s core.Show) bool { return s.Venue == "Big hall" && s.StartsAt.Equal(start.Add(time.Hour)) }},
			{name: "a sales window", patch: core.ShowPatch{SalesEnd: at(start.Add(-time.Hour))},
				check: func(s core.Show) bool { return s.SalesEnd.Equal(start.Add(-time.Hour)) }},
			{name: "empty name", patch: core.ShowPatch{Name: str("")}, wantField: "name"},
			{name: "a control character in the venue", patch: core.ShowPatch{Venue: str("Hall\r2")}, wantField: "venue"},
			{name: "sales end after the start", patch: core.ShowPatch{SalesEnd: at(start.Add(time.Minute))}, wantField: "sales_end"},
			{name: "start moved before the sales end", salesEnd: start.Add(-2 * time.Hour), patch: core.ShowPatch{StartsAt: at(start.Add(-3 * time.Hour))}, wantField: "sales_end"},
			{name: "no start", patch: core.ShowPatch{StartsAt: at(time.Time{})}, wantField: "starts_at"},
			{name: "after an order", patch: core.ShowPatch{Name: str("Late")}, prepare: "order", wantErr: core.ErrShowOnSale},
			{name: "cancelled", patch: core.ShowPatch{Name: str("Gone")}, prepare: "cancel", wantErr: core.ErrShowCancelled},
		} {
			t.Run(tt.name, func(t *testing.T) {
				show, err := st.DB.CreateShow(ctx, core.Show{Name: "Edit " + stacktest.RandHex(3), Venue: "Hall",
					StartsAt: start, SalesEnd: tt.salesEnd, Rows: 1, Cols: 2}, store.DemoSeats(1, 2, 5000))
				if err != nil {
					t.Fatal(err)
				}
				st.CleanupSeats(t, show.ID)
				eng := st.Engine(t, core.Config{PurchaseLimit: 6, HoldTTL: 15 * time.Minute}, stacktest.NewClock(start.Add(-90*time.Minute)))
				switch tt.prepare {
				case "order":
					if _, err := eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1"}}); err != nil {
						t.Fatal(err)
					}
				case "cancel":
					if _, err := eng.CancelShow(ctx, show.ID, "test"); err != nil {
						t.Fatal(err)
					}
				}
				before, err := st.DB.Show(ctx, show.ID)
				if err != nil {
					t.Fatal(err)
				}
				got, err := eng.EditShow(ctx, show.ID, tt.patch)
				stored, serr := st.DB.Show(ctx, show.ID)
				if serr != nil {
					t.Fatal(serr)
				}
				var ce *core.Error
				switch {
				case tt.wantField != "":
					if !errors.As(err, &ce) || ce.Kind != core.KindInvalid || ce.Field != tt.wantField {
						t.Fatalf("edit %+v: %v, want invalid %s", tt.patch, err, tt.wantField)
					}
				case tt.wantErr != nil:
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("edit: %v, want %v", err, tt.wantErr)
					}
				default:
					if err != nil || !tt.check(got) || !tt.check(stored) {
						t.Fatalf("edit: %+v (stored %+v), %v", got, stored, err)
					}
					return
				}
				if stored != before {
					t.Errorf("a refused edit wrote: %+v, was %+v", stored, before)
				}
			})
		}

		// A sales end moved before now ends sales at once.
		show := st.NewShow(t, 1, 2)
		eng := st.Engine(t, core.Config{PurchaseLimit: 6, HoldTTL: 15 * time.Minute}, core.SystemClock{})
		if _, err := eng.EditShow(ctx, show.ID, core.ShowPatch{SalesEnd: at(time.Now().Add(-time.Minute))}); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1"}}); !errors.Is(err, core.ErrSalesEnded) {
			t.Errorf("placed after the edited sales end: %v", err)
		}
	})
}

// saleCheckedStore calls after once a placement's transaction has read the
// show under its lock (Tx.CheckShowSale answered yes), the transaction
// still open.
type saleCheckedStore struct {
	core.Store
	after func()
}

func (s saleCheckedStore) InTx(ctx context.Context, fn func(core.Tx) error) error {
	return s.Store.InTx(ctx, func(tx core.Tx) error { return fn(saleCheckedTx{tx, s.after}) })
}

type saleCheckedTx struct {
	core.Tx
	after func()
}

// SQL hands the database transaction on to the DB delay queue, which
// writes its messages in it (dbqueue.Queue.SendTx).
func (t saleCheckedTx) SQL() *sqlx.Tx { return t.Tx.(interface{ SQL() *sqlx.Tx }).SQL() }

func (t saleCheckedTx) CheckShowSale(ctx context.Context, showID, planVersion int64, now time.Time) error {
	err := t.Tx.CheckShowSale(ctx, showID, planVersion, now)
	if err == nil {
		t.after()
	}
	return err
}

// TestEditShowRacesPlacement: an edit that ends sales now and a placement
// on a show without orders never both win. An edit that starts while the
// placement's transaction holds the show row must find the order
// (show_on_sale); a placement that starts while the edit holds the row
// must read the new sales end (sales_ended). Run under -race.
func TestEditShowRacesPlacement(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		past := time.Now().Add(-time.Minute)
		for _, tt := range []struct {
			name       string
			editInside bool // the placement starts inside the edit's transaction
		}{{"edit during a placement", false}, {"placement during an edit", true}} {
			t.Run(tt.name, func(t *testing.T) {
				for round := range 10 {
					show := st.NewShow(t, 1, 2)
					var editErr, placeErr error
					var wg sync.WaitGroup
					var once sync.Once
					edit := func() {
						_, editErr = st.Engine(t, core.Config{PurchaseLimit: 6}, core.SystemClock{}).EditShow(ctx, show.ID, core.ShowPatch{SalesEnd: &past})
					}
					var eng *core.Engine
					place := func() {
						_, placeErr = eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1"}})
					}
					if tt.editInside {
						eng = st.Engine(t, core.Config{PurchaseLimit: 6}, core.SystemClock{})
						_, editErr = st.DB.EditShow(ctx, show.ID, func(cur core.Show) (core.ShowEdit, error) {
							wg.Go(place)
							return core.ShowEdit{Name: cur.Name, Venue: cur.Venue, StartsAt: cur.StartsAt, SalesEnd: past}, nil
						})
					} else {
						after := func() { once.Do(func() { wg.Go(edit) }) }
						var err error
						eng, err = core.NewEngine(core.Config{PurchaseLimit: 6, HoldTTL: 15 * time.Minute, Delay: core.DefaultDelayPolicy()},
							core.Deps{Store: saleCheckedStore{st.DB, after}, Seats: st.Seats, Queue: st.Queue})
						if err != nil {
							t.Fatal(err)
						}
						place()
					}
					wg.Wait()
					won := editErr == nil
					if won == (placeErr == nil) || (won && !errors.Is(placeErr, core.ErrSalesEnded)) || (!won && !errors.Is(editErr, core.ErrShowOnSale)) {
						t.Fatalf("round %d: edit %v, place %v: want exactly one to win", round, editErr, placeErr)
					}
					if won != tt.editInside {
						t.Fatalf("round %d: edit %v, place %v: the one holding the show row must win", round, editErr, placeErr)
					}
				}
			})
		}
	})
}

// TestDraftShow: a show set up as a draft refuses orders (show_not_on_sale,
// nothing held) until it is published; publishing twice is harmless, a
// cancelled draft cannot be published, a draft can be cancelled.
func TestDraftShow(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		eng := st.Engine(t, core.Config{PurchaseLimit: 6}, core.SystemClock{})
		n := core.NewShow{Name: "Draft", StartsAt: time.Now().Add(24 * time.Hour), Currency: "EUR", Draft: true,
			Plan: core.PlanSpec{Categories: []core.PriceCategory{{Code: "STD", Name: "Standard", PriceCents: 100}},
				Grid: &core.GridSpec{Rows: 1, SeatsPerRow: 2, Category: "STD"}}}
		for _, tt := range []struct {
			name  string
			steps []string // publish, cancel, place
			want  []error  // per step
		}{
			{"a draft sells nothing", []string{"place"}, []error{core.ErrShowDraft}},
			{"published, it sells", []string{"publish", "place", "publish"}, []error{nil, nil, nil}},
			{"a cancelled draft", []string{"cancel", "publish", "place"}, []error{nil, core.ErrShowCancelled, core.ErrShowCancelled}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				show, err := eng.CreateShow(ctx, n)
				if err != nil || show.Status != core.ShowDraft {
					t.Fatalf("create a draft: %+v, %v", show, err)
				}
				st.CleanupSeats(t, show.ID)
				for i, step := range tt.steps {
					switch step {
					case "publish":
						var s core.Show
						if s, err = eng.PublishShow(ctx, show.ID); err == nil && s.Status != core.ShowOnSale {
							t.Errorf("published show is %s", s.Status)
						}
					case "cancel":
						_, err = eng.CancelShow(ctx, show.ID, "test")
					case "place":
						_, err = eng.Place(ctx, core.PlaceRequest{UserID: int64(i + 1), ShowID: show.ID, SeatIDs: []string{"A-1"}})
						holds, herr := st.Seats.Holds(ctx, show.ID)
						if herr != nil || (len(holds) > 0) != (err == nil) {
							t.Errorf("seat store after the placement (%v): %+v, %v", err, holds, herr)
						}
					}
					if !errors.Is(err, tt.want[i]) || (tt.want[i] == nil) != (err == nil) {
						t.Fatalf("step %d %s: %v, want %v", i, step, err, tt.want[i])
					}
				}
			})
		}
	})
}
