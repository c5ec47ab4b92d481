package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
)

// waitFixture is a refund fixture whose show has a waiting list.
type waitFixture struct {
	*refundFixture
	ttl time.Duration // the list's offer hold
}

// newWaitFixture holds a placement for cfg.HoldTTL (15 min when 0) and an
// offer for twice that, through a stack whose deps eng may change.
func newWaitFixture(t *testing.T, st *stacktest.Stack, cfg core.Config, eng func(core.Deps) core.Deps) *waitFixture {
	t.Helper()
	cfg.PurchaseLimit = 6
	f := &waitFixture{refundFixture: newRefundFixture(t, st, 0, cfg)}
	f.ttl = 2 * f.eng.Config().HoldTTL
	if eng != nil {
		e, err := core.NewEngine(f.eng.Config(), eng(core.Deps{Store: st.DB, Seats: st.Seats, Queue: st.Queue, Clock: f.clock}))
		if err != nil {
			t.Fatal(err)
		}
		f.eng = e
		if f.refunds, err = core.NewRefunds(e, st.DB, 0); err != nil {
			t.Fatal(err)
		}
	}
	f.openList(t)
	return f
}

func (f *waitFixture) openList(t *testing.T) {
	t.Helper()
	if _, err := f.eng.SetWaitlist(context.Background(), core.WaitlistSettings{ShowID: f.show.ID, Enabled: true,
		JoinWhen: core.JoinWhenAlways, OfferTTL: f.ttl}); err != nil {
		t.Fatal(err)
	}
}

func (f *waitFixture) join(t *testing.T, user int64, count int, together bool) core.WaitEntryView {
	t.Helper()
	v, _, err := f.eng.JoinWaitlist(context.Background(), core.WaitJoin{ShowID: f.show.ID, UserID: user, Count: count,
		Together: together, AddedBy: "api:test"})
	if err != nil {
		t.Fatalf("join for user %d: %v", user, err)
	}
	return v
}

func (f *waitFixture) entry(t *testing.T, v core.WaitEntryView) core.WaitEntryView {
	t.Helper()
	got, err := f.eng.WaitEntry(context.Background(), v.Entry.Token)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// expire ends o by its timeout: the clock past its expiry, its message
// delivered.
func (f *waitFixture) expire(t *testing.T, o core.Order) {
	t.Helper()
	f.clock.Advance(o.ExpireAt.Sub(f.clock.Now()) + time.Second)
	if err := f.eng.HandleTimeout(context.Background(), core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}); err != nil {
		t.Fatal(err)
	}
	if s := f.status(t, o.OrderNo); s != core.StatusCancelled {
		t.Fatalf("order %s is %v after its timeout", o.OrderNo, s)
	}
}

// offered checks that v's entry holds exactly seats through a pending
// waiting-list order of its user, held in the seat store, and returns it.
func (f *waitFixture) offered(t *testing.T, v core.WaitEntryView, seats ...string) core.Order {
	t.Helper()
	got := f.entry(t, v)
	if got.State != core.WaitOffered || got.Offer == nil {
		t.Fatalf("entry of user %d: %s, offer %v; want offered", v.Entry.UserID, got.State, got.Offer)
	}
	o := *got.Offer
	if !slices.Equal(o.SeatIDs, seats) || o.UserID != v.Entry.UserID || o.Source != core.OrderSourceWaitlist ||
		o.Status != core.StatusPending || !o.ExpireAt.Equal(o.CreatedAt.Add(f.ttl)) {
		t.Fatalf("offer %+v, want pending waitlist order of user %d on %v held %v", o, v.Entry.UserID, seats, f.ttl)
	}
	holds, err := f.st.Seats.Holds(context.Background(), f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range holds {
		if slices.Contains(seats, h.SeatID) && (h.State != core.SeatLocked || h.OrderNo != o.OrderNo || h.UserID != o.UserID) {
			t.Errorf("seat store: %s is %v by %s (user %d), want locked by the offer %s", h.SeatID, h.State, h.OrderNo, h.UserID, o.OrderNo)
		}
	}
	f.wantSeats(t, core.SeatLocked, seats...)
	return o
}

// settle ends the show's pending orders with its list switched off, then
// checks the invariants: the stack's database is shared by the cases, and
// a hold left pending would be past its expiry on the next case's clock.
func (f *waitFixture) settle(t *testing.T) {
	t.Helper()
	f.endPending(t)
	f.invariants(t)
}

func (f *waitFixture) endPending(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := f.eng.SetWaitlist(ctx, core.WaitlistSettings{ShowID: f.show.ID}); err != nil {
		t.Fatal(err)
	}
	pending, err := f.st.DB.OrdersOfShow(ctx, f.show.ID, core.StatusPending)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range pending {
		if _, err := f.eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: o.OrderNo, Reason: core.ReasonStaff, Actor: "staff:test"}); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *waitFixture) wantState(t *testing.T, v core.WaitEntryView, want core.WaitState) {
	t.Helper()
	if got := f.entry(t, v); got.State != want {
		t.Errorf("entry of user %d is %s, want %s", v.Entry.UserID, got.State, want)
	}
}

func TestWaitlistHandoff(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		cases := []struct {
			name string
			run  func(t *testing.T, f *waitFixture)
		}{
			{"a hold that expires goes to the next entry, seat for seat", func(t *testing.T, f *waitFixture) {
				o := f.place(t, 1, "A-1", "A-2")
				v := f.join(t, 2, 2, false)
				if v.State != core.WaitWaiting || v.Position != 1 {
					t.Fatalf("joined: %s at %d", v.State, v.Position)
				}
				f.expire(t, o)
				offer := f.offered(t, v, "A-1", "A-2")
				if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 9, ShowID: f.show.ID, SeatIDs: []string{"A-1"}}); !errors.Is(err, core.ErrSeatUnavailable) {
					t.Errorf("a public placement on a handed seat: %v", err)
				}
				if len(f.events(t, o.OrderNo, core.EventHandedOff)) != 1 {
					t.Errorf("no handed_off event on %s", o.OrderNo)
				}
				f.wantCounter(t, 1, 0)
				f.wantCounter(t, 2, 2)
				_ = offer
			}},
			{"an offer that expires goes to the next entry; a paid one is sold", func(t *testing.T, f *waitFixture) {
				o := f.place(t, 1, "B-1")
				v2, v3 := f.join(t, 2, 1, false), f.join(t, 3, 1, false)
				if v3.Position != 2 {
					t.Fatalf("second entry at %d", v3.Position)
				}
				f.expire(t, o)
				first := f.offered(t, v2, "B-1")
				f.expire(t, first)
				f.wantState(t, v2, core.WaitExpired)
				second := f.offered(t, v3, "B-1")
				if res, err := f.pay(t, second, "T-"+second.OrderNo); err != nil || res != core.PaymentApplied {
					t.Fatalf("pay the offer: %v %v", res, err)
				}
				f.wantState(t, v3, core.WaitAccepted)
				f.wantSeats(t, core.SeatSold, "B-1")
			}},
			{"a withdrawn entry is skipped", func(t *testing.T, f *waitFixture) {
				o := f.place(t, 1, "C-1")
				v2, v3 := f.join(t, 2, 1, false), f.join(t, 3, 1, false)
				if _, err := f.eng.WithdrawWaitEntry(ctx, v2.Entry.Token, "user:2"); err != nil {
					t.Fatal(err)
				}
				f.expire(t, o)
				f.wantState(t, v2, core.WaitWithdrawn)
				f.offered(t, v3, "C-1")
			}},
			{"withdrawing an offer hands its seats on", func(t *testing.T, f *waitFixture) {
				o := f.place(t, 1, "C-5")
				v2, v3 := f.join(t, 2, 1, false), f.join(t, 3, 1, false)
				f.expire(t, o)
				f.offered(t, v2, "C-5")
				if v, err := f.eng.WithdrawWaitEntry(ctx, v2.Entry.Token, "user:2"); err != nil || v.State != core.WaitWithdrawn {
					t.Fatalf("withdraw: %v %v", v.State, err)
				}
				f.offered(t, v3, "C-5")
			}},
			{"four together are not offered scattered seats; a smaller entry behind takes one", func(t *testing.T, f *waitFixture) {
				o := f.place(t, 1, "D-1", "D-3", "D-5", "D-7")
				v2, v3 := f.join(t, 2, 4, true), f.join(t, 3, 1, false)
				f.expire(t, o)
				if got := f.entry(t, v2); got.State != core.WaitWaiting || got.Position != 1 {
					t.Errorf("4 together: %s at %d, want still first in line", got.State, got.Position)
				}
				got := f.entry(t, v3)
				if got.State != core.WaitOffered || len(got.Offer.SeatIDs) != 1 {
					t.Fatalf("1 seat: %s %+v", got.State, got.Offer)
				}
				rest := slices.DeleteFunc([]string{"D-1", "D-3", "D-5", "D-7"}, func(id string) bool { return id == got.Offer.SeatIDs[0] })
				f.wantSeats(t, core.SeatAvailable, rest...)
			}},
			{"four scattered seats go to an entry that does not ask for them together", func(t *testing.T, f *waitFixture) {
				o := f.place(t, 1, "E-1", "E-3", "E-5", "E-7")
				v := f.join(t, 2, 4, false)
				f.expire(t, o)
				f.offered(t, v, "E-1", "E-3", "E-5", "E-7")
			}},
			{"seats nobody can use return to sale", func(t *testing.T, f *waitFixture) {
				o := f.place(t, 1, "F-1", "F-2")
				v := f.join(t, 2, 3, false)
				f.expire(t, o)
				f.wantState(t, v, core.WaitWaiting)
				f.wantSeats(t, core.SeatAvailable, "F-1", "F-2")
			}},
			{"a customer's cancel and a staff cancel hand on", func(t *testing.T, f *waitFixture) {
				o1, o2 := f.place(t, 1, "G-1"), f.place(t, 4, "G-2")
				v2, v3 := f.join(t, 2, 1, false), f.join(t, 3, 1, false)
				if _, err := f.eng.Cancel(ctx, o1.OrderNo, 1); err != nil {
					t.Fatal(err)
				}
				f.offered(t, v2, "G-1")
				if _, err := f.eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: o2.OrderNo, Reason: core.ReasonStaff, Actor: "staff:olga"}); err != nil {
					t.Fatal(err)
				}
				f.offered(t, v3, "G-2")
			}},
			{"a refund hands on", func(t *testing.T, f *waitFixture) {
				o := f.paid(t, 1, "H-1", "H-2")
				v := f.join(t, 2, 2, true)
				if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, Reason: "ill", Reference: "R1", Actor: "staff:olga"}); err != nil {
					t.Fatal(err)
				}
				f.offered(t, v, "H-1", "H-2")
				f.wantCounter(t, 1, 0)
			}},
			{"a partial refund hands on the seats it refunds", func(t *testing.T, f *waitFixture) {
				o := f.paid(t, 1, "J-5", "J-6")
				v := f.join(t, 2, 1, false)
				if _, err := f.refunds.Refund(ctx, core.RefundRequest{OrderNo: o.OrderNo, SeatIDs: []string{"J-5"}, Reason: "one fell ill",
					Reference: "R2", Actor: "staff:olga"}); err != nil {
					t.Fatal(err)
				}
				f.offered(t, v, "J-5")
				f.wantSeats(t, core.SeatSold, "J-6")
				f.wantCounter(t, 1, 1)
			}},
			{"an unblock hands on", func(t *testing.T, f *waitFixture) {
				if err := f.eng.BlockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: []string{"I-1", "I-2"}, Reason: "house"}); err != nil {
					t.Fatal(err)
				}
				v := f.join(t, 2, 1, false)
				if err := f.eng.UnblockSeats(ctx, core.BlockRequest{ShowID: f.show.ID, SeatIDs: []string{"I-1", "I-2"}}); err != nil {
					t.Fatal(err)
				}
				got := f.entry(t, v)
				if got.State != core.WaitOffered {
					t.Fatalf("after the unblock: %s", got.State)
				}
				other := "I-1"
				if got.Offer.SeatIDs[0] == "I-1" {
					other = "I-2"
				}
				f.wantSeats(t, core.SeatAvailable, other)
				f.checkBlocks(t)
			}},
			{"a list switched off hands nothing on", func(t *testing.T, f *waitFixture) {
				o := f.place(t, 1, "J-1")
				v := f.join(t, 2, 1, false)
				if _, err := f.eng.SetWaitlist(ctx, core.WaitlistSettings{ShowID: f.show.ID, Enabled: false}); err != nil {
					t.Fatal(err)
				}
				f.expire(t, o)
				f.wantState(t, v, core.WaitWaiting)
				f.wantSeats(t, core.SeatAvailable, "J-1")
			}},
		}
		// Built by the outer test: a show's seat state must outlive its case,
		// as every case's invariants check every show of the stack.
		fixtures := make([]*waitFixture, len(cases))
		for i := range cases {
			fixtures[i] = newWaitFixture(t, st, core.Config{}, nil)
		}
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				f := fixtures[i]
				c.run(t, f)
				f.settle(t)
			})
		}
	})
}

func TestWaitlistJoin(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newWaitFixture(t, st, core.Config{}, nil)
		a := f.join(t, 2, 2, false)
		again, created, err := f.eng.JoinWaitlist(ctx, core.WaitJoin{ShowID: f.show.ID, UserID: 2, Count: 4})
		if err != nil || created || again.Entry.Token != a.Entry.Token || again.Entry.Count != 2 {
			t.Errorf("joining again: %+v created=%v %v; want the first entry", again.Entry, created, err)
		}
		cases := []struct {
			name string
			j    core.WaitJoin
			err  string
		}{
			{"no seats", core.WaitJoin{UserID: 3, Count: 0}, "invalid_request"},
			{"too many seats", core.WaitJoin{UserID: 3, Count: 11}, "invalid_request"},
			{"unknown category", core.WaitJoin{UserID: 3, Count: 1, Category: "VIP"}, "unknown_category"},
			{"a walk-in without a name", core.WaitJoin{UserID: core.BoxOfficeUserID, Count: 1}, "invalid_request"},
		}
		for _, c := range cases {
			c.j.ShowID = f.show.ID
			_, _, err := f.eng.JoinWaitlist(ctx, c.j)
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Code != c.err {
				t.Errorf("%s: %v, want %s", c.name, err, c.err)
			}
		}
		// Two walk-ins: no user, no clash.
		for _, name := range []string{"Ann Walk", "Bo Walk"} {
			if _, created, err := f.eng.JoinWaitlist(ctx, core.WaitJoin{ShowID: f.show.ID, Count: 1,
				Customer: core.Customer{Name: name}}); err != nil || !created {
				t.Errorf("walk-in %s: created=%v %v", name, created, err)
			}
		}
		// Sold-out lists take joins only once no seat is on sale.
		if _, err := f.eng.SetWaitlist(ctx, core.WaitlistSettings{ShowID: f.show.ID, Enabled: true, JoinWhen: core.JoinWhenSoldOut}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.eng.JoinWaitlist(ctx, core.WaitJoin{ShowID: f.show.ID, UserID: 5, Count: 1}); !errors.Is(err, core.ErrWaitlistNotSold) {
			t.Errorf("joining a list of a show on sale: %v", err)
		}
		if _, err := f.eng.SetWaitlist(ctx, core.WaitlistSettings{ShowID: f.show.ID, Enabled: false}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.eng.JoinWaitlist(ctx, core.WaitJoin{ShowID: f.show.ID, UserID: 5, Count: 1}); !errors.Is(err, core.ErrWaitlistClosed) {
			t.Errorf("joining a closed list: %v", err)
		}
	})
}

// failingTransfer is a seat store whose hand-off step never runs, as when
// the instance dies between the ending's commit and that step.
type failingTransfer struct{ core.SeatStore }

func (failingTransfer) Transfer(context.Context, int64, string, string, int64, []string, time.Time) (int, error) {
	return 0, errors.New("instance killed before the seat store's hand-off")
}

// TestWaitlistHandoffCrash kills the hand-off between the commit (the ending
// and the offer) and the seat store's step: the seats stay held by the
// ended order, so nobody can take them, and reconcile then gives them to
// the offer.
func TestWaitlistHandoffCrash(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newWaitFixture(t, st, core.Config{}, func(d core.Deps) core.Deps { d.Seats = failingTransfer{d.Seats}; return d })
		o := f.place(t, 1, "A-1", "A-2")
		v := f.join(t, 2, 2, true)
		f.expire(t, o)
		got := f.entry(t, v)
		if got.State != core.WaitOffered {
			t.Fatalf("entry: %s", got.State)
		}
		for _, seat := range []string{"A-1", "A-2"} {
			if _, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 9, ShowID: f.show.ID, SeatIDs: []string{seat}}); !errors.Is(err, core.ErrSeatUnavailable) {
				t.Errorf("a public placement on %s between the commit and the hand-off: %v", seat, err)
			}
		}
		// Restarted, with a working seat store, past reconcile's grace.
		restarted := st.Engine(t, f.eng.Config(), f.clock)
		f.clock.Advance(3 * time.Minute)
		rec, err := reconcile.New(reconcile.Deps{Engine: restarted, DB: st.DB, Seats: st.Seats, Clock: f.clock},
			reconcile.Options{Owner: "test-" + stacktest.RandHex(3), Grace: 2 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		r, err := rec.RunOnce(ctx, reconcile.TriggerManual, false)
		if err != nil || !r.OK() {
			t.Fatalf("reconcile: %+v %v", r, err)
		}
		// Moved by the offers' own check, holder to holder: never freed.
		if c, _ := r.Check(reconcile.CheckWaitlistOffer); c.Found != 1 || c.Fixed != 1 {
			t.Errorf("waitlist_offer: %+v, want the offer's seats found and moved", c)
		}
		if c, _ := r.Check(reconcile.CheckStaleRedisLock); c.Found != 0 {
			t.Errorf("stale_redis_lock: %+v, want nothing left to it", c)
		}
		f.eng = restarted
		f.offered(t, v, "A-1", "A-2")
		f.settle(t)
	})
}

// TestWaitlistHandoffRace has a buyer hammer the seats of a hold while its
// timeout hands them to the waiting list: no placement may win one.
func TestWaitlistHandoffRace(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		rounds := 20
		if testing.Short() {
			rounds = 5
		}
		f := newWaitFixture(t, st, core.Config{}, nil)
		for round := range rounds {
			seat := []string{core.RowName(round%10+1) + "-" + string(rune('1'+round/10))}
			o := f.place(t, 1, seat...)
			v := f.join(t, int64(100+round), 1, false)
			var (
				wins atomic.Int64
				stop atomic.Bool
				wg   sync.WaitGroup
			)
			for b := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						if p, err := f.eng.Place(ctx, core.PlaceRequest{UserID: int64(50 + b), ShowID: f.show.ID, SeatIDs: seat}); err == nil {
							wins.Add(1)
							_, _ = f.eng.Cancel(ctx, p.OrderNo, p.UserID)
						}
					}
				}()
			}
			f.expire(t, o)
			stop.Store(true)
			wg.Wait()
			if n := wins.Load(); n != 0 {
				t.Fatalf("round %d: %d public placements won seat %v during the hand-off", round, n, seat)
			}
			f.offered(t, v, seat...)
		}
		f.settle(t)
	})
}

// TestWaitlistBurst ends many holds at once, so the group commit writes
// their hand-offs in shared transactions (handOffAll): every entry gets a
// seat of its own, the seats of one hold stay together, and the first
// entries in line are served.
func TestWaitlistBurst(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newWaitFixture(t, st, core.Config{}, nil)
		var holds []core.Order
		for i := range 30 {
			row := core.RowName(i/5 + 1)
			holds = append(holds, f.place(t, int64(1+i), fmt.Sprintf("%s-%d", row, 2*(i%5)+1), fmt.Sprintf("%s-%d", row, 2*(i%5)+2)))
		}
		var entries []core.WaitEntryView
		for i := range 40 { // 30 pairs for 40 entries: the last 10 keep waiting
			entries = append(entries, f.join(t, int64(100+i), 2, true))
		}
		f.clock.Advance(16 * time.Minute)
		var wg sync.WaitGroup
		for _, o := range holds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := f.eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		pair := func(ids []string) string { return fmt.Sprint(slices.Sorted(slices.Values(ids))) }
		pairs := make(map[string]bool)
		for _, o := range holds {
			pairs[pair(o.SeatIDs)] = true
		}
		seen := make(map[string]bool)
		for i, v := range entries {
			got := f.entry(t, v)
			if i >= 30 {
				if got.State != core.WaitWaiting || got.Position != i-29 {
					t.Errorf("entry %d: %s at %d, want waiting at %d", i, got.State, got.Position, i-29)
				}
				continue
			}
			if got.State != core.WaitOffered {
				t.Errorf("entry %d: %s, want offered", i, got.State)
				continue
			}
			o := f.offered(t, v, got.Offer.SeatIDs...)
			if key := pair(o.SeatIDs); !pairs[key] || seen[key] {
				t.Errorf("entry %d offered %v: not one hold's pair, or offered twice", i, o.SeatIDs)
			} else {
				seen[key] = true
			}
		}
		f.settle(t)
	})
}
