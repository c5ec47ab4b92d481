package seats

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/testenv"
)

func TestLock(t *testing.T) {
	var most, tooMany []string
	var mostHolds []core.SeatHold
	for i := range MaxLockSeats + 1 {
		seat := fmt.Sprintf("s%04d", i)
		tooMany = append(tooMany, seat)
		if i < MaxLockSeats {
			most = append(most, seat)
			mostHolds = append(mostHolds, lk(seat, "o1", 1))
		}
	}
	tests := []struct {
		name      string
		given     []step
		user      int64
		order     string
		seats     []string
		limit     int
		wantErr   error    // matched with errors.Is
		wantSeats []string // seats named by a seat_unavailable error
		holds     []core.SeatHold
		limits    map[int64]int
	}{
		{name: "free seats all locked", user: 1, order: "o1", seats: []string{"b", "a"},
			holds: []core.SeatHold{lk("a", "o1", 1), lk("b", "o1", 1)}, limits: map[int64]int{1: 2}},
		{name: "one taken seat locks nothing",
			given: []step{{order: "o0", user: 2, seats: []string{"b"}}},
			user:  1, order: "o1", seats: []string{"a", "b", "c"},
			wantErr: core.ErrSeatUnavailable, wantSeats: []string{"b"},
			holds: []core.SeatHold{lk("b", "o0", 2)}, limits: map[int64]int{2: 1}},
		{name: "every taken seat named in request order",
			given: []step{{order: "o0", user: 2, seats: []string{"c", "a"}}},
			user:  1, order: "o1", seats: []string{"c", "b", "a"},
			wantErr: core.ErrSeatUnavailable, wantSeats: []string{"c", "a"},
			holds: []core.SeatHold{lk("a", "o0", 2), lk("c", "o0", 2)}, limits: map[int64]int{2: 2}},
		{name: "sold seat unavailable",
			given: []step{{sell: true, order: "o0", user: 2, seats: []string{"a"}}},
			user:  1, order: "o1", seats: []string{"a"},
			wantErr: core.ErrSeatUnavailable, wantSeats: []string{"a"},
			holds: []core.SeatHold{sd("a", "o0", 2, time.Time{})}, limits: map[int64]int{2: 1}},
		{name: "same order locking again is unavailable",
			given: []step{{order: "o1", user: 1, seats: []string{"a"}}},
			user:  1, order: "o1", seats: []string{"a"},
			wantErr: core.ErrSeatUnavailable, wantSeats: []string{"a"},
			holds: []core.SeatHold{lk("a", "o1", 1)}, limits: map[int64]int{1: 1}},
		{name: "limit reached exactly",
			given: []step{{order: "o0", user: 1, seats: []string{"a"}}, {sell: true, order: "o9", user: 1, seats: []string{"b"}}},
			user:  1, order: "o1", seats: []string{"c", "d"}, limit: 4,
			holds:  []core.SeatHold{lk("a", "o0", 1), sd("b", "o9", 1, time.Time{}), lk("c", "o1", 1), lk("d", "o1", 1)},
			limits: map[int64]int{1: 4}},
		{name: "one over the limit locks nothing",
			given: []step{{order: "o0", user: 1, seats: []string{"a"}}, {sell: true, order: "o9", user: 1, seats: []string{"b"}}},
			user:  1, order: "o1", seats: []string{"c", "d"}, limit: 3,
			wantErr: core.ErrPurchaseLimit,
			holds:   []core.SeatHold{lk("a", "o0", 1), sd("b", "o9", 1, time.Time{})}, limits: map[int64]int{1: 2}},
		{name: "limit counts only this user",
			given: []step{{order: "o0", user: 2, seats: []string{"a", "b"}}},
			user:  1, order: "o1", seats: []string{"c", "d"}, limit: 2,
			holds:  []core.SeatHold{lk("a", "o0", 2), lk("b", "o0", 2), lk("c", "o1", 1), lk("d", "o1", 1)},
			limits: map[int64]int{1: 2, 2: 2}},
		{name: "taken seats reported before the limit",
			given: []step{{order: "o0", user: 1, seats: []string{"a"}}},
			user:  1, order: "o1", seats: []string{"a", "b"}, limit: 1,
			wantErr: core.ErrSeatUnavailable, wantSeats: []string{"a"},
			holds: []core.SeatHold{lk("a", "o0", 1)}, limits: map[int64]int{1: 1}},
		{name: "most seats in one lock", user: 1, order: "o1", seats: most,
			holds: mostHolds, limits: map[int64]int{1: MaxLockSeats}},
		{name: "too many seats rejected", user: 1, order: "o1", seats: tooMany, wantErr: core.ErrInvalid},
		{name: "repeated seat rejected", user: 1, order: "o1", seats: []string{"a", "a"}, wantErr: core.ErrInvalid},
		{name: "no seats rejected", user: 1, order: "o1", wantErr: core.ErrInvalid},
		{name: "separator in order number rejected", user: 1, order: "o|1", seats: []string{"a"}, wantErr: core.ErrInvalid},
	}
	eachStore(t, func(t *testing.T, s *subject) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				show := s.newShow(t)
				given(t, s, show, tt.given)
				err := s.Lock(context.Background(), show, tt.user, tt.order, tt.seats, tt.limit, t0)
				if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
					t.Fatalf("Lock error %v, want %v", err, tt.wantErr)
				}
				var ce *core.Error
				if errors.As(err, &ce) && !reflect.DeepEqual(ce.Seats, tt.wantSeats) {
					t.Errorf("unavailable seats %q, want %q", ce.Seats, tt.wantSeats)
				}
				wantState(t, s, show, tt.holds, tt.limits)
			})
		}
	})
}

func TestRelease(t *testing.T) {
	fixture := []step{
		{order: "o1", user: 1, seats: []string{"a", "b"}},
		{order: "o2", user: 2, seats: []string{"c"}},
		{sell: true, order: "o3", user: 1, seats: []string{"d"}},
	}
	tests := []struct {
		name   string
		extra  []step
		order  string
		seats  []string
		times  int // how often Release is called
		want   int // seats freed by the last call
		holds  []core.SeatHold
		limits map[int64]int
	}{
		{name: "own locked seats freed", order: "o1", seats: []string{"a", "b"}, times: 1, want: 2,
			holds:  []core.SeatHold{lk("c", "o2", 2), sd("d", "o3", 1, time.Time{})},
			limits: map[int64]int{1: 1, 2: 1}},
		{name: "other holders, sold and free seats untouched", order: "o1", seats: []string{"a", "c", "d", "z"}, times: 1, want: 1,
			holds:  []core.SeatHold{lk("b", "o1", 1), lk("c", "o2", 2), sd("d", "o3", 1, time.Time{})},
			limits: map[int64]int{1: 2, 2: 1}},
		{name: "double release is a no-op", order: "o1", seats: []string{"a", "b"}, times: 2, want: 0,
			holds:  []core.SeatHold{lk("c", "o2", 2), sd("d", "o3", 1, time.Time{})},
			limits: map[int64]int{1: 1, 2: 1}},
		{name: "last seat of a user removes the counter", order: "o2", seats: []string{"c"}, times: 1, want: 1,
			holds:  []core.SeatHold{lk("a", "o1", 1), lk("b", "o1", 1), sd("d", "o3", 1, time.Time{})},
			limits: map[int64]int{1: 3}},
		{name: "release after sold is a no-op",
			extra: []step{{sell: true, order: "o1", user: 1, seats: []string{"a", "b"}}},
			order: "o1", seats: []string{"a", "b"}, times: 1, want: 0,
			holds:  []core.SeatHold{sd("a", "o1", 1, t0), sd("b", "o1", 1, t0), lk("c", "o2", 2), sd("d", "o3", 1, time.Time{})},
			limits: map[int64]int{1: 3, 2: 1}},
	}
	eachStore(t, func(t *testing.T, s *subject) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				show := s.newShow(t)
				given(t, s, show, append(fixture, tt.extra...))
				var n int
				for range tt.times {
					var err error
					if n, err = s.Release(context.Background(), show, 1, tt.order, tt.seats); err != nil {
						t.Fatal(err)
					}
				}
				if n != tt.want {
					t.Errorf("Release freed %d, want %d", n, tt.want)
				}
				wantState(t, s, show, tt.holds, tt.limits)
			})
		}
	})
}

func TestMarkSold(t *testing.T) {
	tests := []struct {
		name   string
		given  []step
		user   int64
		order  string
		seats  []string
		holds  []core.SeatHold
		limits map[int64]int
	}{
		{name: "own lock becomes sold, counter unchanged, lock time kept",
			given: []step{{order: "o1", user: 1, seats: []string{"a", "b"}}},
			user:  1, order: "o1", seats: []string{"a", "b"},
			holds: []core.SeatHold{sd("a", "o1", 1, t0), sd("b", "o1", 1, t0)}, limits: map[int64]int{1: 2}},
		{name: "free seat counted for the buyer",
			user: 1, order: "o1", seats: []string{"a"},
			holds: []core.SeatHold{sd("a", "o1", 1, time.Time{})}, limits: map[int64]int{1: 1}},
		{name: "another user's lock moves to the buyer",
			given: []step{{order: "o2", user: 2, seats: []string{"a", "b"}}},
			user:  1, order: "o1", seats: []string{"a"},
			holds:  []core.SeatHold{sd("a", "o1", 1, time.Time{}), lk("b", "o2", 2)},
			limits: map[int64]int{1: 1, 2: 1}},
		{name: "another user's last seat removes their counter",
			given: []step{{sell: true, order: "o2", user: 2, seats: []string{"a"}}},
			user:  1, order: "o1", seats: []string{"a"},
			holds: []core.SeatHold{sd("a", "o1", 1, time.Time{})}, limits: map[int64]int{1: 1}},
		{name: "buyer's other order already counted",
			given: []step{{order: "o0", user: 1, seats: []string{"a"}}},
			user:  1, order: "o1", seats: []string{"a", "b"},
			holds: []core.SeatHold{sd("a", "o1", 1, time.Time{}), sd("b", "o1", 1, time.Time{})}, limits: map[int64]int{1: 2}},
		{name: "selling twice changes nothing",
			given: []step{{order: "o1", user: 1, seats: []string{"a"}}, {sell: true, order: "o1", user: 1, seats: []string{"a"}}},
			user:  1, order: "o1", seats: []string{"a"},
			holds: []core.SeatHold{sd("a", "o1", 1, t0)}, limits: map[int64]int{1: 1}},
	}
	eachStore(t, func(t *testing.T, s *subject) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				show := s.newShow(t)
				given(t, s, show, tt.given)
				if err := s.MarkSold(context.Background(), show, tt.user, tt.order, tt.seats); err != nil {
					t.Fatal(err)
				}
				wantState(t, s, show, tt.holds, tt.limits)
			})
		}
	})
}

func TestReleaseIfLockedBefore(t *testing.T) {
	tests := []struct {
		name   string
		given  []step
		seat   string
		order  string
		before time.Time
		want   bool
		holds  []core.SeatHold
		limits map[int64]int
	}{
		{name: "old lock freed", given: []step{{order: "o1", user: 1, seats: []string{"a", "b"}}},
			seat: "a", order: "o1", before: t0.Add(time.Millisecond), want: true,
			holds: []core.SeatHold{lk("b", "o1", 1)}, limits: map[int64]int{1: 1}},
		{name: "lock at the cutoff kept", given: []step{{order: "o1", user: 1, seats: []string{"a"}}},
			seat: "a", order: "o1", before: t0,
			holds: []core.SeatHold{lk("a", "o1", 1)}, limits: map[int64]int{1: 1}},
		{name: "young lock kept", given: []step{{order: "o1", user: 1, seats: []string{"a"}}},
			seat: "a", order: "o1", before: t0.Add(-time.Minute),
			holds: []core.SeatHold{lk("a", "o1", 1)}, limits: map[int64]int{1: 1}},
		{name: "new holder kept", given: []step{{order: "o2", user: 2, seats: []string{"a"}}},
			seat: "a", order: "o1", before: t0.Add(time.Hour),
			holds: []core.SeatHold{lk("a", "o2", 2)}, limits: map[int64]int{2: 1}},
		{name: "sold seat kept", given: []step{{order: "o1", user: 1, seats: []string{"a"}}, {sell: true, order: "o1", user: 1, seats: []string{"a"}}},
			seat: "a", order: "o1", before: t0.Add(time.Hour),
			holds: []core.SeatHold{sd("a", "o1", 1, t0)}, limits: map[int64]int{1: 1}},
		{name: "free seat", seat: "a", order: "o1", before: t0.Add(time.Hour)},
	}
	eachStore(t, func(t *testing.T, s *subject) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				show := s.newShow(t)
				given(t, s, show, tt.given)
				got, err := s.ReleaseIfLockedBefore(context.Background(), show, tt.seat, tt.order, tt.before)
				if err != nil {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Errorf("released %v, want %v", got, tt.want)
				}
				wantState(t, s, show, tt.holds, tt.limits)
			})
		}
	})
}

func TestReplace(t *testing.T) {
	big := make([]core.SeatHold, 5000)
	for i := range big {
		big[i] = lk(fmt.Sprintf("s%04d", i), fmt.Sprintf("o%d", i/4), int64(i/4%300))
		if i%3 == 0 {
			big[i] = sd(big[i].SeatID, big[i].OrderNo, big[i].UserID, time.Time{})
		}
	}
	tests := []struct {
		name    string
		holds   []core.SeatHold
		wantErr error
		want    []core.SeatHold // state afterwards; holds when nil and no error
	}{
		{name: "stale state replaced", holds: []core.SeatHold{sd("b", "o5", 5, t0), lk("c", "o6", 5), lk("x", "o7", 7)}},
		{name: "empty clears the show", holds: []core.SeatHold{}},
		{name: "5000 seats", holds: big},
		{name: "available state rejected, nothing changed", holds: []core.SeatHold{{SeatID: "a", OrderNo: "o1", UserID: 1}},
			wantErr: core.ErrInvalid, want: []core.SeatHold{lk("a", "o1", 1), sd("b", "o2", 2, time.Time{})}},
		{name: "repeated seat rejected", holds: []core.SeatHold{lk("a", "o1", 1), lk("a", "o2", 2)},
			wantErr: core.ErrInvalid, want: []core.SeatHold{lk("a", "o1", 1), sd("b", "o2", 2, time.Time{})}},
	}
	eachStore(t, func(t *testing.T, s *subject) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				show := s.newShow(t)
				given(t, s, show, []step{
					{order: "o1", user: 1, seats: []string{"a"}},
					{sell: true, order: "o2", user: 2, seats: []string{"b"}},
				})
				err := s.Replace(context.Background(), show, tt.holds)
				if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
					t.Fatalf("Replace error %v, want %v", err, tt.wantErr)
				}
				want := tt.want
				if want == nil {
					want = tt.holds
				}
				wantState(t, s, show, want, impliedLimits(want))
			})
		}
	})
}

// TestConcurrentLock races 50 orders over overlapping seats, then sells or
// releases the winners concurrently, checking after each phase that every
// order holds all of its seats or none and that counters match the seats.
func TestConcurrentLock(t *testing.T) {
	const orders, limit = 50, 5
	seatsOf := func(i int) []string {
		first := i * 7 % 18 // three consecutive seats out of s00..s19: heavy overlap
		return []string{fmt.Sprintf("s%02d", first), fmt.Sprintf("s%02d", first+1), fmt.Sprintf("s%02d", first+2)}
	}
	orderNo := func(i int) string { return fmt.Sprintf("o%02d", i) }
	userOf := func(i int) int64 { return int64(i % 5) }

	eachStore(t, func(t *testing.T, s *subject) {
		ctx := context.Background()
		show := s.newShow(t)

		won := make([]bool, orders)
		var wg sync.WaitGroup
		var conflicts, limited int
		var mu sync.Mutex
		for i := range orders {
			wg.Go(func() {
				err := s.Lock(ctx, show, userOf(i), orderNo(i), seatsOf(i), limit, t0)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won[i] = true
				case errors.Is(err, core.ErrSeatUnavailable):
					conflicts++
				case errors.Is(err, core.ErrPurchaseLimit):
					limited++
				default:
					t.Errorf("order %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if conflicts == 0 {
			t.Errorf("no lock conflicted: the seat sets do not overlap as intended")
		}
		check := func(phase string, want func(i int) core.SeatState) {
			t.Helper()
			holds, err := s.Holds(ctx, show)
			if err != nil {
				t.Fatal(err)
			}
			bySeat := map[string]core.SeatHold{}
			for _, h := range holds {
				bySeat[h.SeatID] = h
			}
			matched := 0
			for i := range orders {
				for _, seat := range seatsOf(i) {
					h, held := bySeat[seat]
					mine := held && h.OrderNo == orderNo(i)
					switch st := want(i); {
					case st == core.SeatAvailable && mine:
						t.Errorf("%s: order %d holds %s: %+v", phase, i, seat, h)
					case st != core.SeatAvailable && (!mine || h.State != st || h.UserID != userOf(i)):
						t.Errorf("%s: order %d: seat %s is %+v, want %v by it", phase, i, seat, h, st)
					case mine:
						matched++
					}
				}
			}
			if matched != len(holds) {
				t.Errorf("%s: %d holds but %d belong to known orders", phase, len(holds), matched)
			}
			limits, err := s.Limits(ctx, show)
			if err != nil {
				t.Fatal(err)
			}
			if implied := impliedLimits(holds); !reflect.DeepEqual(limits, implied) {
				t.Errorf("%s: limits %v, holds imply %v", phase, limits, implied)
			}
			for user, n := range limits {
				if n > limit {
					t.Errorf("%s: user %d holds %d seats, limit %d", phase, user, n, limit)
				}
			}
		}
		check("after lock", func(i int) core.SeatState {
			if won[i] {
				return core.SeatLocked
			}
			return core.SeatAvailable
		})

		// Winners with an even index are paid, odd ones released twice; losers
		// release too, which must not free anybody else's seats.
		for i := range orders {
			wg.Go(func() {
				var err error
				if won[i] && i%2 == 0 {
					err = s.MarkSold(ctx, show, userOf(i), orderNo(i), seatsOf(i))
				} else {
					_, err = s.Release(ctx, show, userOf(i), orderNo(i), seatsOf(i))
					if err == nil {
						_, err = s.Release(ctx, show, userOf(i), orderNo(i), seatsOf(i))
					}
				}
				if err != nil {
					t.Errorf("order %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		check("after sell/release", func(i int) core.SeatState {
			if won[i] && i%2 == 0 {
				return core.SeatSold
			}
			return core.SeatAvailable
		})
	})
}

func TestHoldsRejectsMalformedValue(t *testing.T) {
	eachBackend(t, func(t *testing.T, rdb redis.UniversalClient) {
		show := newShow(t, rdb)
		if err := rdb.HSet(context.Background(), KeySeats(show), "a", "1|o1|notanumber|0").Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := New(rdb).Holds(context.Background(), show); err == nil {
			t.Fatal("Holds accepted a malformed value")
		}
	})
}

func TestSetLimit(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		wantErr error
		want    map[int64]int
	}{
		{name: "set", n: 3, want: map[int64]int{1: 3, 2: 1}},
		{name: "zero removes", n: 0, want: map[int64]int{2: 1}},
		{name: "negative rejected", n: -1, wantErr: core.ErrInvalid, want: map[int64]int{1: 1, 2: 1}},
	}
	eachStore(t, func(t *testing.T, s *subject) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				show := s.newShow(t)
				given(t, s, show, []step{{order: "o1", user: 1, seats: []string{"a"}}, {order: "o2", user: 2, seats: []string{"b"}}})
				err := s.SetLimit(context.Background(), show, 1, tt.n)
				if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
					t.Fatalf("SetLimit error %v, want %v", err, tt.wantErr)
				}
				got, err := s.Limits(context.Background(), show)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("limits %v, want %v", got, tt.want)
				}
			})
		}
	})
}

// TestUnavailable checks that a Redis that went away is reported as
// ErrStoreUnavailable, which the HTTP layer maps to 503.
func TestUnavailable(t *testing.T) {
	e, err := testenv.StartEmbeddedRedis()
	if err != nil {
		t.Fatal(err)
	}
	rdb := dial(t, e.URL())
	s := New(rdb)
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping before close: %v", err)
	}
	e.Close()
	ctx := context.Background()
	ops := map[string]func() error{
		"Ping": func() error { return s.Ping(ctx) },
		"Lock": func() error { return s.Lock(ctx, 1, 1, "o1", []string{"a"}, 0, t0) },
		"Holds": func() error {
			_, err := s.Holds(ctx, 1)
			return err
		},
	}
	for name, op := range ops {
		if err := op(); !errors.Is(err, core.ErrStoreUnavailable) {
			t.Errorf("%s after close: %v, want store_unavailable", name, err)
		}
	}
}

func TestDial(t *testing.T) {
	e, err := testenv.StartEmbeddedRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	closed, err := testenv.StartEmbeddedRedis()
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	tests := []struct {
		name    string
		url     string
		wantErr bool
		unavail bool   // the error must be store_unavailable
		secret  string // must not appear in the error
	}{
		{name: "embedded", url: e.URL()},
		{name: "with query options", url: e.URL() + "?pool_size=3&read_timeout=2s"},
		{name: "wrong scheme", url: "http://" + e.Addr(), wantErr: true},
		{name: "unparsable, password not echoed", url: "redis://u:s3cret@[::1", wantErr: true, secret: "s3cret"},
		{name: "nobody listening", url: closed.URL(), wantErr: true, unavail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := Dial(ctx, tt.url)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Dial(%q) error %v, want error %v", tt.url, err, tt.wantErr)
			}
			if err != nil {
				if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
					t.Errorf("error %q leaks the password", err)
				}
				if tt.unavail && !errors.Is(err, core.ErrStoreUnavailable) {
					t.Errorf("error %v, want store_unavailable", err)
				}
				return
			}
			defer c.Close()
			if err := c.Ping(ctx).Err(); err != nil {
				t.Error(err)
			}
		})
	}
}
