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
	"seatflow/core/stacktest"
)

func TestExtend(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		cfg := core.Config{HoldTTL: 15 * time.Minute, MaxHold: 30 * time.Minute}

		t.Run("rules", func(t *testing.T) {
			f := newFixture(t, st, cfg)
			o := f.place(t, 1, "A-1")
			f.clock.Advance(time.Minute)
			got, err := f.eng.Extend(ctx, o.OrderNo, 10*time.Minute, "staff:ann", "customer at the ATM", nil)
			if err != nil || !got.ExpireAt.Equal(o.ExpireAt.Add(10*time.Minute)) || got.Status != core.StatusPending {
				t.Fatalf("extend: %+v %v", got, err)
			}
			evs := f.events(t, o.OrderNo, core.EventExtended)
			want := map[string]any{"by_ms": float64(600000), "new_expire_at": got.ExpireAt.Format(time.RFC3339Nano),
				"actor": "staff:ann", "reason": "customer at the ATM"}
			if len(evs) != 1 || fmt.Sprint(evs[0].Detail) != fmt.Sprint(want) || !evs[0].At.Equal(f.clock.Now()) {
				t.Errorf("extended events %+v, want one with %v", evs, want)
			}
			// 25 min of 30 used: 5 more is the limit, exactly.
			if _, err := f.eng.Extend(ctx, o.OrderNo, 5*time.Minute+time.Millisecond, "api", "", nil); !errors.Is(err, core.ErrHoldLimit) ||
				core.ErrorKind(err) != core.KindLimit {
				t.Errorf("past the maximum: %v, want hold_limit", err)
			}
			if got, err := f.eng.Extend(ctx, o.OrderNo, 5*time.Minute, "api", "", nil); err != nil ||
				got.ExpireAt.Sub(got.CreatedAt) != cfg.MaxHold {
				t.Errorf("up to the maximum: %+v %v", got, err)
			}
			stored, _, _ := f.eng.Order(ctx, o.OrderNo)
			if !stored.ExpireAt.Equal(o.ExpireAt.Add(15 * time.Minute)) {
				t.Errorf("stored expiry %v, want %v", stored.ExpireAt, o.ExpireAt.Add(15*time.Minute))
			}
			for _, c := range []struct {
				name string
				no   string
				by   time.Duration
				want error
			}{
				{"zero", o.OrderNo, 0, core.ErrInvalid},
				{"negative", o.OrderNo, -time.Minute, core.ErrInvalid},
				{"unknown order", "SFNOPE", time.Minute, core.ErrOrderNotFound},
			} {
				if _, err := f.eng.Extend(ctx, c.no, c.by, "api", "", nil); !errors.Is(err, c.want) {
					t.Errorf("%s: %v, want %v", c.name, err, c.want)
				}
			}
			paid := f.place(t, 2, "A-2")
			if _, err := f.pay(t, paid, "T-ext-"+paid.OrderNo); err != nil {
				t.Fatal(err)
			}
			cancelled := f.place(t, 3, "A-3")
			if _, err := f.eng.Cancel(ctx, cancelled.OrderNo, 3); err != nil {
				t.Fatal(err)
			}
			for _, no := range []string{paid.OrderNo, cancelled.OrderNo} {
				if _, err := f.eng.Extend(ctx, no, time.Minute, "api", "", nil); !errors.Is(err, core.ErrOrderNotPending) {
					t.Errorf("extend an ended order: %v, want order_not_pending", err)
				}
			}
			late := f.place(t, 4, "A-4")
			f.clock.Advance(cfg.HoldTTL)
			if _, err := f.eng.Extend(ctx, late.OrderNo, time.Minute, "api", "", nil); !errors.Is(err, core.ErrHoldExpired) {
				t.Errorf("extend an expired hold: %v, want hold_expired", err)
			}
			if got, _, _ := f.eng.Order(ctx, late.OrderNo); !got.ExpireAt.Equal(late.ExpireAt) {
				t.Errorf("a refused extension changed the expiry to %v", got.ExpireAt)
			}
		})

		// The message in flight re-arms at the old expiry; the order ends at
		// the new one. Deliveries are made by hand at the due times, in both
		// delay modes, so the whole chain is checked hop by hop.
		for _, mode := range []struct {
			name   string
			policy core.DelayPolicy
			hops   []string // level:delay of every timeout_scheduled
		}{
			{"levels", core.DefaultDelayPolicy(), []string{"14:10m0s", "14:10m0s", "9:5m0s"}},
			{"timer", core.DelayPolicy{Mode: core.DelayTimer}, []string{"0:15m0s", "0:10m0s"}},
		} {
			t.Run("chain re-arms to the new expiry in "+mode.name+" mode", func(t *testing.T) {
				f := newFixture(t, st, core.Config{HoldTTL: 15 * time.Minute, Delay: mode.policy})
				o := f.place(t, 1, "B-1")
				f.clock.Advance(time.Minute)
				if _, err := f.eng.Extend(ctx, o.OrderNo, 10*time.Minute, "staff:ann", "phone", nil); err != nil {
					t.Fatal(err)
				}
				newExpire := o.ExpireAt.Add(10 * time.Minute)
				for hop := 1; ; hop++ {
					cur, _, _ := f.eng.Order(ctx, o.OrderNo)
					if cur.Status != core.StatusPending || hop > 5 {
						break
					}
					f.clock.Advance(cur.TimeoutDueAt.Sub(f.clock.Now()))
					if err := f.eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: cur.TimeoutHop}); err != nil {
						t.Fatal(err)
					}
					if s := f.status(t, o.OrderNo); s != core.StatusPending && f.clock.Now().Before(newExpire) {
						t.Fatalf("hop %d cancelled at %v, before the new expiry %v", hop, f.clock.Now(), newExpire)
					}
				}
				got, _, _ := f.eng.Order(ctx, o.OrderNo)
				if got.Status != core.StatusCancelled || got.CancelReason != core.ReasonTimeout || !got.ClosedAt.Equal(newExpire) {
					t.Fatalf("order %v (%s) closed at %v, want cancelled by timeout at %v", got.Status, got.CancelReason, got.ClosedAt, newExpire)
				}
				var hops []string
				for _, ev := range f.events(t, o.OrderNo, core.EventTimeoutScheduled) {
					hops = append(hops, fmt.Sprintf("%v:%v", ev.Detail["level"], time.Duration(ev.Detail["delay_ms"].(float64))*time.Millisecond))
				}
				if !slices.Equal(hops, mode.hops) {
					t.Errorf("hops %v, want %v", hops, mode.hops)
				}
			})
		}

		t.Run("an expiry cancel that read the old expiry loses to the extension", func(t *testing.T) {
			f := newFixture(t, st, cfg)
			o := f.place(t, 1, "C-1")
			f.clock.Advance(time.Minute)
			if _, err := f.eng.Extend(ctx, o.OrderNo, time.Minute, "staff:ann", "x", nil); err != nil {
				t.Fatal(err)
			}
			// A timeout handler or sweep that decided on the old expiry.
			f.clock.Advance(cfg.HoldTTL - time.Minute)
			for _, r := range []core.CancelRequest{
				{OrderNo: o.OrderNo, Reason: core.ReasonTimeout, Actor: core.ActorSystem},
				{OrderNo: o.OrderNo, Reason: core.ReasonReconcile, Actor: core.ActorSweep},
				{OrderNo: o.OrderNo, Reason: core.ReasonReconcile, Actor: "reconcile"},
			} {
				res, err := f.eng.CancelAndRelease(ctx, r)
				if err != nil || res.Won || res.Order.Status != core.StatusPending {
					t.Errorf("%s/%s cancel before the new expiry: %+v %v", r.Reason, r.Actor, res, err)
				}
			}
			if n := len(f.events(t, o.OrderNo, core.EventEndAttempt)); n != 3 {
				t.Errorf("end_attempt events %d, want 3 (not_expired)", n)
			}
			f.wantSeats(t, core.SeatLocked, "C-1")
			// A staff cancel is no expiry: it needs no expired hold.
			if res, err := f.eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: o.OrderNo, Reason: core.ReasonStaff,
				Actor: "staff:bob"}); err != nil || !res.Won {
				t.Errorf("staff cancel: %+v %v", res, err)
			}
		})

		t.Run("extend races cancel and payment: exactly one outcome", func(t *testing.T) {
			f := newFixture(t, st, core.Config{HoldTTL: 15 * time.Minute, PurchaseLimit: 1000})
			rounds := 40
			if testing.Short() {
				rounds = 10
			}
			for i := range rounds {
				o := f.place(t, int64(500+i), fmt.Sprintf("%c-%d", 'A'+i%10, 1+i/10))
				var (
					wg        sync.WaitGroup
					start     = make(chan struct{})
					extendErr error
					extended  core.Order
				)
				wg.Add(2)
				go func() {
					defer wg.Done()
					<-start
					extended, extendErr = f.eng.Extend(ctx, o.OrderNo, time.Minute, "staff:ann", "race", nil)
				}()
				go func() {
					defer wg.Done()
					<-start
					if i%2 == 0 {
						_, _ = f.eng.Cancel(ctx, o.OrderNo, o.UserID)
					} else {
						_, _ = f.pay(t, o, fmt.Sprintf("T-race-%s", o.OrderNo))
					}
				}()
				close(start)
				wg.Wait()
				got, evs, err := f.eng.Order(ctx, o.OrderNo)
				if err != nil {
					t.Fatal(err)
				}
				ext := slices.IndexFunc(evs, func(e core.Event) bool { return e.Kind == core.EventExtended })
				end := slices.IndexFunc(evs, func(e core.Event) bool { return e.Kind == core.EventCancelled || e.Kind == core.EventPaid })
				switch {
				case got.Status == core.StatusPending:
					t.Fatalf("round %d: the cancel or payment did not happen", i)
				case extendErr == nil:
					// The extension came first, then the order ended.
					if ext < 0 || end < ext || !got.ExpireAt.Equal(extended.ExpireAt) {
						t.Fatalf("round %d: extended, but events %v / expiry %v", i, evs, got.ExpireAt)
					}
				case errors.Is(extendErr, core.ErrOrderNotPending):
					if ext >= 0 || !got.ExpireAt.Equal(o.ExpireAt) {
						t.Fatalf("round %d: extension refused, but events %v / expiry %v", i, evs, got.ExpireAt)
					}
				default:
					t.Fatalf("round %d: extend: %v", i, extendErr)
				}
			}
		})
	})
}

// TestExtendInFlight lets real time run: the order's first timeout message
// is in flight when the hold is extended; the chain re-arms when it arrives
// at about the old expiry and the cancel comes at the new one. On RocketMQ
// in levels mode a 6 s hold starts with level 2 (5 s) and would end with
// level 1 (1 s); extended by 5 s it takes one hop more.
func TestExtendInFlight(t *testing.T) {
	tests := []struct {
		name       string
		stack      func(testing.TB) *stacktest.Stack
		policy     core.DelayPolicy
		ttl, by    time.Duration
		wantLevels []float64
		maxLate    time.Duration
	}{
		{"rocketmq levels", stacktest.Real, core.DefaultDelayPolicy(), 6 * time.Second, 5 * time.Second, []float64{2, 2, 1}, 2500 * time.Millisecond},
		{"rocketmq timer", stacktest.Real, core.DelayPolicy{Mode: core.DelayTimer}, 6 * time.Second, 5 * time.Second, nil, 2500 * time.Millisecond},
		{"embedded timer", stacktest.Embedded, core.DelayPolicy{Mode: core.DelayTimer}, 3 * time.Second, 3 * time.Second, []float64{0, 0}, time.Second},
		{"embedded levels", stacktest.Embedded, core.DefaultDelayPolicy(), 6 * time.Second, 5 * time.Second, []float64{2, 2, 1}, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := tt.stack(t)
			show := st.NewShow(t, 2, 2)
			eng := st.Engine(t, core.Config{HoldTTL: tt.ttl, Delay: tt.policy}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := st.Queue.Consume(ctx, eng.HandleTimeouts); err != nil {
				t.Fatal(err)
			}
			o, err := eng.Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1"}})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(tt.ttl / 6) // the first message is on its way
			ext, err := eng.Extend(ctx, o.OrderNo, tt.by, "staff:test", "in flight", nil)
			if err != nil {
				t.Fatal(err)
			}
			oldExpire, newExpire := o.ExpireAt, ext.ExpireAt
			deadline := time.Now().Add(tt.ttl + tt.by + 30*time.Second)
			var (
				got core.Order
				evs []core.Event
			)
			for time.Now().Before(deadline) {
				if got, evs, err = eng.Order(ctx, o.OrderNo); err != nil {
					t.Fatal(err)
				}
				if got.Status != core.StatusPending {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			var (
				levels []float64
				lines  []string
			)
			for _, e := range evs {
				if e.Kind == core.EventTimeoutScheduled {
					levels = append(levels, e.Detail["level"].(float64))
				}
				lines = append(lines, fmt.Sprintf("  %s %s %v", e.At.Format("15:04:05.000"), e.Kind, e.Detail))
			}
			if got.Status != core.StatusCancelled || got.CancelReason != core.ReasonTimeout {
				t.Fatalf("order %s is %v (%s):\n%s", o.OrderNo, got.Status, got.CancelReason, lines)
			}
			late := got.ClosedAt.Sub(newExpire)
			t.Logf("%s: hold %v extended by %v in flight; cancelled %v after the new expire_time (%v after the old one); hops at levels %v",
				tt.name, tt.ttl, tt.by, late, got.ClosedAt.Sub(oldExpire), levels)
			if late < 0 || late > tt.maxLate {
				t.Errorf("cancel lateness %v after the new expiry, want within [0, %v]:\n%s", late, tt.maxLate, lines)
			}
			if tt.wantLevels != nil && !slices.Equal(levels, tt.wantLevels) {
				t.Errorf("hops at levels %v, want %v", levels, tt.wantLevels)
			}
			if len(levels) < 2 {
				t.Errorf("%d hops: the message in flight did not re-arm", len(levels))
			}
			if holds, err := st.Seats.Holds(ctx, show.ID); err != nil || len(holds) != 0 {
				t.Errorf("seat store after the timeout: %+v, %v", holds, err)
			}
		})
	}
}
