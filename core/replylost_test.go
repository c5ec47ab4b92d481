package core_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
)

// The faults below hit one Redis command of the engine at the exact point
// where its reply is ambiguous: the script ran but its reply was lost (a
// read timeout, a reset after the command went out), or the request never
// reached the server. Each case ends with DESIGN.md's invariants checked
// seat by seat, with no reconcile run in between: the engine itself must
// leave nothing behind. The cases of a test share one stack, one after the
// other (no subtests): the invariants span every show of the stack, and a
// subtest's end would drop its show's keys from the shared Redis while the
// DB keeps its orders.

// lockScriptOf matches the lock script (lock.lua: seats, limit, blocked
// and best-available bounds keys of the show) run for any order of the show.
func lockScriptOf(showID int64) func(redis.Cmder) bool {
	return func(cmd redis.Cmder) bool {
		keys, _, ok := stacktest.ScriptCall(cmd)
		return ok && slices.Equal(keys, []string{seats.KeySeats(showID), seats.KeyLimit(showID), seats.KeyBlocked(showID),
			seats.KeyBestBounds(showID)})
	}
}

// heldScriptOf matches release.lua and sell.lua run for orderNo ("": for
// any order): both take the seats, limit and best-available bounds keys and
// the order number first.
func heldScriptOf(showID int64, orderNo string) func(redis.Cmder) bool {
	return func(cmd redis.Cmder) bool {
		keys, argv, ok := stacktest.ScriptCall(cmd)
		return ok && slices.Equal(keys, []string{seats.KeySeats(showID), seats.KeyLimit(showID), seats.KeyBestBounds(showID)}) &&
			len(argv) > 0 && (orderNo == "" || argv[0] == orderNo)
	}
}

func replyLost(context.Context, error) error { return stacktest.ErrReadTimeout }

// checkInvariants fails the test when DESIGN.md's invariants do not hold,
// redelivering every consumed timeout last (it must change nothing).
func (f *fixture) checkInvariants(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := reconcile.CheckInvariants(ctx, f.st.DB, f.st.Seats, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if err := reconcile.CheckRedelivery(ctx, f.eng, f.st.DB, f.st.Seats, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) wantCounter(t *testing.T, user int64, want int) {
	t.Helper()
	limits, err := f.st.Seats.Limits(context.Background(), f.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	if limits[user] != want {
		t.Errorf("purchase counter of user %d is %d, want %d", user, limits[user], want)
	}
}

func TestFaultLockReplyLost(t *testing.T) {
	cases := []struct {
		name       string
		boxOffice  bool
		cancelsCtx bool // the request is cancelled while it waits for the reply
	}{
		{name: "read timeout"},
		{name: "read timeout, request cancelled", cancelsCtx: true},
		{name: "box office, read timeout", boxOffice: true},
	}
	stacktest.EachRedis(t, func(t *testing.T, st *stacktest.Stack) {
		for _, tc := range cases {
			t.Logf("case %s", tc.name)
			func() {
				f := newFixture(t, st, core.Config{})
				f.place(t, 9, "J-1") // the lock script is cached: the fault hits EVALSHA
				user := int64(1)
				if tc.boxOffice {
					user = core.BoxOfficeUserID
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				fault := st.InjectRedis(&stacktest.RedisFault{Match: lockScriptOf(f.show.ID),
					After: func(ctx context.Context, err error) error {
						if err != nil {
							t.Errorf("the lock script itself failed: %v", err)
						}
						if tc.cancelsCtx {
							cancel()
						}
						return stacktest.ErrReadTimeout
					}})
				_, err := f.eng.Place(ctx, core.PlaceRequest{UserID: user, ShowID: f.show.ID,
					SeatIDs: []string{"A-1", "A-2"}, BoxOffice: tc.boxOffice})
				if !fault.Fired() {
					t.Fatal("the fault never hit the lock script")
				}
				if core.ErrorKind(err) != core.KindUnavailable {
					t.Fatalf("place with its lock reply lost: %v, want a store_unavailable error", err)
				}
				// The script ran, the order does not exist: nothing may stay
				// locked or counted for it.
				f.wantSeats(t, core.SeatAvailable, "A-1", "A-2")
				f.wantCounter(t, user, 0)
				f.checkInvariants(t)
				f.place(t, 2, "A-1", "A-2") // another buyer gets them at once
				f.checkInvariants(t)
			}()
		}
	})
}

// ambiguousReplies are the two ways a holder-guarded script's reply can go
// missing: it ran (and a retry frees or sells nothing more), or it never
// reached the server (and only a retry does the work).
var ambiguousReplies = []struct {
	name  string
	fault func(match func(redis.Cmder) bool) *stacktest.RedisFault
}{
	{"reply lost", func(m func(redis.Cmder) bool) *stacktest.RedisFault {
		return &stacktest.RedisFault{Match: m, After: replyLost}
	}},
	{"request lost", func(m func(redis.Cmder) bool) *stacktest.RedisFault {
		return &stacktest.RedisFault{Match: m, Lost: true}
	}},
}

func TestFaultReleaseReplyLost(t *testing.T) {
	stacktest.EachRedis(t, func(t *testing.T, st *stacktest.Stack) {
		for _, tc := range ambiguousReplies {
			t.Logf("case cancel, %s", tc.name)
			func() {
				f := newFixture(t, st, core.Config{})
				o := f.place(t, 1, "A-1", "A-2")
				fault := st.InjectRedis(tc.fault(heldScriptOf(f.show.ID, o.OrderNo)))
				if _, err := f.eng.Cancel(context.Background(), o.OrderNo, 1); err != nil {
					t.Fatal(err)
				}
				if !fault.Fired() {
					t.Fatal("the fault never hit the release script")
				}
				f.wantSeats(t, core.SeatAvailable, "A-1", "A-2")
				f.wantCounter(t, 1, 0)
				if evs := f.events(t, o.OrderNo, core.EventSeatReleaseFailed); len(evs) != 0 {
					t.Errorf("release recorded as failed: %+v", evs)
				}
				if evs := f.events(t, o.OrderNo, core.EventSeatsReleased); len(evs) != 1 {
					t.Errorf("%d seats_released events, want 1", len(evs))
				}
				f.checkInvariants(t)
			}()
			t.Logf("case failed placement, %s", tc.name)
			func() {
				clock := stacktest.NewClock(time.Now())
				show := st.NewShow(t, 2, 2)
				eng, err := core.NewEngine(core.Config{HoldTTL: time.Minute, PurchaseLimit: 6, Delay: core.DefaultDelayPolicy()},
					core.Deps{Store: failingStore{st.DB}, Seats: st.Seats, Queue: st.Queue, Clock: clock})
				if err != nil {
					t.Fatal(err)
				}
				// The only script on these keys after the lock is the
				// compensating release of the order that was never recorded.
				fault := st.InjectRedis(tc.fault(heldScriptOf(show.ID, "")))
				ctx := context.Background()
				if _, err := eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1", "A-2"}}); err == nil {
					t.Fatal("place succeeded on a failing transaction")
				}
				if !fault.Fired() {
					t.Fatal("the fault never hit the compensating release")
				}
				holds, err := st.Seats.Holds(ctx, show.ID)
				if err != nil {
					t.Fatal(err)
				}
				limits, err := st.Seats.Limits(ctx, show.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(holds) != 0 || limits[1] != 0 {
					t.Errorf("after the compensating release: holds %+v, counters %+v", holds, limits)
				}
				if err := reconcile.CheckInvariants(ctx, st.DB, st.Seats, clock.Now()); err != nil {
					t.Fatal(err)
				}
			}()
		}
	})
}

func TestFaultSellReplyLost(t *testing.T) {
	stacktest.EachRedis(t, func(t *testing.T, st *stacktest.Stack) {
		for _, tc := range ambiguousReplies {
			t.Logf("case %s", tc.name)
			func() {
				f := newFixture(t, st, core.Config{})
				o := f.place(t, 1, "A-1", "A-2")
				fault := st.InjectRedis(tc.fault(heldScriptOf(f.show.ID, o.OrderNo)))
				if res, err := f.pay(t, o, "T"+o.OrderNo); err != nil || res != core.PaymentApplied {
					t.Fatalf("pay: %v %v", res, err)
				}
				if !fault.Fired() {
					t.Fatal("the fault never hit the sell script")
				}
				f.wantSeats(t, core.SeatSold, "A-1", "A-2")
				f.wantCounter(t, 1, 2)
				if evs := f.events(t, o.OrderNo, core.EventSeatSellFailed); len(evs) != 0 {
					t.Errorf("sell recorded as failed: %+v", evs)
				}
				if evs := f.events(t, o.OrderNo, core.EventSeatsSold); len(evs) != 1 {
					t.Errorf("%d seats_sold events, want 1", len(evs))
				}
				f.checkInvariants(t)
			}()
		}
	})
}

func TestFaultRefundReleaseReplyLost(t *testing.T) {
	stacktest.EachRedis(t, func(t *testing.T, st *stacktest.Stack) {
		for _, tc := range ambiguousReplies {
			t.Logf("case %s", tc.name)
			func() {
				f := newRefundFixture(t, st, 0, core.Config{})
				o := f.paid(t, 1, "A-1", "A-2")
				fault := st.InjectRedis(tc.fault(heldScriptOf(f.show.ID, o.OrderNo)))
				if _, err := f.refunds.Refund(context.Background(), core.RefundRequest{OrderNo: o.OrderNo, Reason: "r",
					Actor: "api"}); err != nil {
					t.Fatal(err)
				}
				if !fault.Fired() {
					t.Fatal("the fault never hit the refund's seat release")
				}
				f.wantSeats(t, core.SeatAvailable, "A-1", "A-2")
				f.wantCounter(t, 1, 0)
				if evs := f.events(t, o.OrderNo, core.EventSeatReleaseFailed); len(evs) != 0 {
					t.Errorf("refund release recorded as failed: %+v", evs)
				}
				f.checkInvariants(t)
			}()
		}
	})
}
