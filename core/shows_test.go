package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
)

// checkBlocks fails unless the seat store blocks exactly the seats the DB
// does.
func (f *fixture) checkBlocks(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	inDB, err := f.st.DB.Blocks(ctx, f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	inRedis, err := f.st.Seats.Blocks(ctx, f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	var a, b []string
	for _, bl := range inDB {
		a = append(a, bl.SeatID+"="+bl.Reason)
	}
	for seat, reason := range inRedis {
		b = append(b, seat+"="+reason)
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Errorf("blocks: seat store != DB\n db:    %v\n redis: %v", a, b)
	}
}

func (f *fixture) invariants(t *testing.T) {
	t.Helper()
	if err := reconcile.CheckInvariants(context.Background(), f.st.DB, f.st.Seats, f.clock.Now()); err != nil {
		t.Error(err)
	}
}

func (f *fixture) seatMapState(t *testing.T, seat string) core.SeatState {
	t.Helper()
	m, err := f.eng.SeatMap(context.Background(), f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range m {
		if s.SeatID == seat {
			return s.State
		}
	}
	t.Fatalf("seat %s not on the map", seat)
	return 0
}

// TestBlockVsPlaceRace blocks a seat while a customer places an order for
// it, at the same instant, many times: exactly one of them gets the seat,
// the other is refused with seat_unavailable, and both stores agree.
func TestBlockVsPlaceRace(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		rounds := 200
		if testing.Short() {
			rounds = 20
		}
		f := newFixture(t, st, core.Config{HoldTTL: time.Minute, PurchaseLimit: 1000})
		ctx := context.Background()
		wins := map[string]int{}
		for i := range rounds {
			seat := fmt.Sprintf("%s-%d", string(rune('A'+i%10)), 1+(i/10)%10)
			var (
				wg       sync.WaitGroup
				start    = make(chan struct{})
				order    core.Order
				placeErr error
				blockErr error
			)
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				order, placeErr = f.eng.Place(ctx, core.PlaceRequest{UserID: int64(1 + i), ShowID: f.show.ID, SeatIDs: []string{seat}})
			}()
			go func() {
				defer wg.Done()
				<-start
				blockErr = f.eng.BlockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: []string{seat}, Reason: core.BlockHouse})
			}()
			close(start)
			wg.Wait()
			blocks, err := f.st.DB.Blocks(ctx, f.show.ID)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case placeErr == nil && errors.Is(blockErr, core.ErrSeatUnavailable):
				wins["place"]++
				if len(blocks) != 0 || f.seatMapState(t, seat) != core.SeatLocked {
					t.Fatalf("round %d: place won, but blocks %v and seat %v", i, blocks, f.seatMapState(t, seat))
				}
				if _, err := f.eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: order.OrderNo, Reason: core.ReasonStaff, Actor: "test"}); err != nil {
					t.Fatal(err)
				}
			case blockErr == nil && errors.Is(placeErr, core.ErrSeatUnavailable):
				wins["block"]++
				taken, err := f.st.DB.TakenSeats(ctx, f.show.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(blocks) != 1 || len(taken) != 0 || f.seatMapState(t, seat) != core.SeatBlocked {
					t.Fatalf("round %d: block won, but blocks %v, order_seat %v, seat %v", i, blocks, taken, f.seatMapState(t, seat))
				}
				if err := f.eng.UnblockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: []string{seat}}); err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatalf("round %d: place err %v, block err %v: want exactly one winner", i, placeErr, blockErr)
			}
			f.checkSeatsMatchDB(t)
			f.checkBlocks(t)
		}
		f.invariants(t)
		t.Logf("%s: %d rounds, winners %v", st.Name, rounds, wins)
	})
}

// TestBlockedSeats: the public path cannot take a blocked seat, the box
// office can, and the seat is blocked again when that order lets it go;
// a held or sold seat cannot be blocked; rebuilds keep blocks.
func TestBlockedSeats(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st, core.Config{})
		ctx := context.Background()
		block := func(reason string, seats ...string) error {
			return f.eng.BlockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: seats, Reason: reason})
		}
		if err := block(core.BlockWheelchair, "A-1", "A-2"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: f.show.ID, SeatIDs: []string{"A-1", "A-3"}}); !errors.Is(err, core.ErrSeatUnavailable) {
			t.Fatalf("public place of a blocked seat: %v, want seat_unavailable", err)
		}
		counter, err := f.eng.Place(ctx, core.PlaceRequest{UserID: core.BoxOfficeUserID, ShowID: f.show.ID, SeatIDs: []string{"A-1"}, BoxOffice: true})
		if err != nil {
			t.Fatalf("box-office place of a blocked seat: %v", err)
		}
		if got := f.seatMapState(t, "A-1"); got != core.SeatLocked {
			t.Errorf("A-1 held at the box office shows %v", got)
		}
		held := f.place(t, 3, "B-1")
		var ce *core.Error
		if err := block(core.BlockHouse, "B-1", "B-2", "A-1"); !errors.As(err, &ce) || ce.Code != core.ErrSeatUnavailable.Code ||
			!slices.Equal(ce.Seats, []string{"A-1", "B-1"}) {
			t.Fatalf("blocking held seats: %v, want seat_unavailable naming A-1 and B-1", err)
		}
		if got := f.seatMapState(t, "B-2"); got != core.SeatAvailable {
			t.Errorf("a refused block left B-2 %v", got)
		}
		if _, err := f.pay(t, held, "T-held"); err != nil {
			t.Fatal(err)
		}
		if err := block(core.BlockHouse, "B-1"); !errors.Is(err, core.ErrSeatUnavailable) {
			t.Fatalf("blocking a sold seat: %v, want seat_unavailable", err)
		}
		if _, err := f.eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: counter.OrderNo, Reason: core.ReasonStaff, Actor: "test"}); err != nil {
			t.Fatal(err)
		}
		if got := f.seatMapState(t, "A-1"); got != core.SeatBlocked {
			t.Errorf("A-1 after its box-office order was cancelled: %v, want blocked", got)
		}
		if err := f.eng.RebuildSeats(ctx, f.show.ID); err != nil {
			t.Fatal(err)
		}
		f.checkBlocks(t)
		f.checkSeatsMatchDB(t)
		if err := f.eng.UnblockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: []string{"A-1"}}); err != nil {
			t.Fatal(err)
		}
		f.place(t, 4, "A-1")
		f.checkBlocks(t)
		f.invariants(t)
	})
}

// TestPlanChangedElsewhere: an instance that cached a show's plan prices
// the next order from the plan another instance put in its place.
func TestPlanChangedElsewhere(t *testing.T) {
	st := stacktest.Embedded(t)
	f := newFixture(t, st, core.Config{})
	other := st.Engine(t, core.Config{HoldTTL: time.Minute, PurchaseLimit: 6}, f.clock)
	ctx := context.Background()
	// Caches the plan: the seat is checked against it and refused.
	if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: f.show.ID, SeatIDs: []string{"Z-99"}}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("unknown seat: %v", err)
	}
	plan := core.PlanSpec{Categories: []core.PriceCategory{{Code: "STD", Name: "Standard", PriceCents: 4321}},
		Grid: &core.GridSpec{Rows: 2, SeatsPerRow: 3, Category: "STD"}}
	if _, err := other.UpdatePlan(ctx, f.show.ID, plan); err != nil {
		t.Fatal(err)
	}
	o, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: f.show.ID, SeatIDs: []string{"B-3"}})
	if err != nil {
		t.Fatal(err)
	}
	if o.AmountCents != 4321 {
		t.Errorf("order priced %d from the old plan, want 4321", o.AmountCents)
	}
	if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: f.show.ID, SeatIDs: []string{"J-10"}}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("seat of the old plan: %v, want invalid", err)
	}
	if _, err := other.UpdatePlan(ctx, f.show.ID, plan); !errors.Is(err, core.ErrShowOnSale) {
		t.Errorf("plan change after the first order: %v, want show_on_sale", err)
	}
}

// TestCancelShow: the show's pending orders end through the cancel path,
// its paid ones are listed, nothing more can be placed, and the invariants
// hold seat by seat afterwards.
func TestCancelShow(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newFixture(t, st, core.Config{})
		ctx := context.Background()
		pending := f.place(t, 1, "A-1", "A-2")
		paid := f.place(t, 2, "B-1")
		if _, err := f.pay(t, paid, "T-"+paid.OrderNo); err != nil {
			t.Fatal(err)
		}
		if err := f.eng.BlockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: []string{"C-1"}, Reason: core.BlockTechnical}); err != nil {
			t.Fatal(err)
		}
		counter, err := f.eng.Place(ctx, core.PlaceRequest{UserID: core.BoxOfficeUserID, ShowID: f.show.ID, SeatIDs: []string{"C-1"}, BoxOffice: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := f.eng.CancelShow(ctx, f.show.ID, "staff:test")
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{pending.OrderNo, counter.OrderNo}; !slices.Equal(res.Cancelled, want) {
			t.Errorf("cancelled %v, want %v", res.Cancelled, want)
		}
		if len(res.Paid) != 1 || res.Paid[0].OrderNo != paid.OrderNo {
			t.Errorf("paid orders %+v, want %s", res.Paid, paid.OrderNo)
		}
		if res.Show.Status != core.ShowCancelled {
			t.Errorf("show status %v", res.Show.Status)
		}
		o, _, err := f.eng.Order(ctx, pending.OrderNo)
		if err != nil || o.Status != core.StatusCancelled || o.CancelReason != core.ReasonShowCancelled {
			t.Errorf("pending order after show cancel: %v %q %v", o.Status, o.CancelReason, err)
		}
		if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 4, ShowID: f.show.ID, SeatIDs: []string{"D-1"}}); !errors.Is(err, core.ErrShowCancelled) {
			t.Errorf("place on a cancelled show: %v, want show_cancelled", err)
		}
		f.wantSeats(t, core.SeatAvailable, "A-1", "A-2", "D-1")
		f.wantSeats(t, core.SeatSold, "B-1")
		if got := f.seatMapState(t, "C-1"); got != core.SeatBlocked {
			t.Errorf("C-1: %v, want blocked again", got)
		}
		again, err := f.eng.CancelShow(ctx, f.show.ID, "staff:test")
		if err != nil || len(again.Cancelled) != 0 || len(again.Paid) != 1 {
			t.Errorf("second cancel: %+v, %v", again, err)
		}
		f.checkSeatsMatchDB(t)
		f.checkBlocks(t)
		f.invariants(t)
	})
}

// TestPlanChangeVsFirstOrderRace changes a fresh show's plan while its
// first order is placed, many times: either the change wins and the order
// is priced from the new plan, or the order wins and the change is refused
// with show_on_sale — never an order priced from a plan that is gone.
func TestPlanChangeVsFirstOrderRace(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		rounds := 50
		if testing.Short() {
			rounds = 10
		}
		f := newFixture(t, st, core.Config{})
		ctx := context.Background()
		grid := func(price int64) core.PlanSpec {
			return core.PlanSpec{Categories: []core.PriceCategory{{Code: "STD", Name: "Standard", PriceCents: price}},
				Grid: &core.GridSpec{Rows: 2, SeatsPerRow: 2, Category: "STD"}}
		}
		wins := map[string]int{}
		for i := range rounds {
			show, err := f.eng.CreateShow(ctx, core.NewShow{Name: fmt.Sprintf("Race %d", i), StartsAt: time.Now().Add(time.Hour),
				Currency: "EUR", Plan: grid(1000)})
			if err != nil {
				t.Fatal(err)
			}
			st.CleanupSeats(t, show.ID)
			// The placing engine has the old plan cached, as a busy instance would.
			if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"Z-1"}}); !errors.Is(err, core.ErrInvalid) {
				t.Fatalf("unknown seat: %v", err)
			}
			var (
				wg       sync.WaitGroup
				start    = make(chan struct{})
				order    core.Order
				placeErr error
				planErr  error
			)
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				order, placeErr = f.eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1"}})
			}()
			go func() {
				defer wg.Done()
				<-start
				_, planErr = f.eng.UpdatePlan(ctx, show.ID, grid(2000))
			}()
			close(start)
			wg.Wait()
			if placeErr != nil {
				t.Fatalf("round %d: place: %v", i, placeErr)
			}
			switch {
			case planErr == nil && order.AmountCents == 2000:
				wins["plan"]++
			case errors.Is(planErr, core.ErrShowOnSale) && order.AmountCents == 1000:
				wins["order"]++
			default:
				t.Fatalf("round %d: plan change %v, order priced %d", i, planErr, order.AmountCents)
			}
			plan, err := st.DB.Seats(ctx, show.ID)
			if err != nil {
				t.Fatal(err)
			}
			if plan[0].PriceCents != order.AmountCents {
				t.Fatalf("round %d: order priced %d, plan says %d", i, order.AmountCents, plan[0].PriceCents)
			}
		}
		t.Logf("%s: %d rounds, winners %v", st.Name, rounds, wins)
	})
}
