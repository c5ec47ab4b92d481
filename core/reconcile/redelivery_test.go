package reconcile_test

import (
	"context"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
)

// The redelivery check passes on orders in every state, and fails when a
// redelivered stale hop does change something: here an instance whose clock
// runs past the hold's expiry cancels a pending order on an old hop.
func TestCheckRedelivery(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		paid := f.place(t, 1, "A-1")
		f.pay(t, paid)
		cancelled := f.place(t, 2, "A-2")
		f.cancel(t, cancelled)
		rearmed := f.place(t, 3, "A-3")
		f.clock.Advance(holdTTL / 3) // the first hop is due before the expiry: it re-arms
		if err := f.eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: rearmed.OrderNo, Hop: 1}); err != nil {
			t.Fatal(err)
		}
		timedOut := f.place(t, 4, "A-4")
		if o, _, _ := f.eng.Order(ctx, rearmed.OrderNo); o.TimeoutHop != 2 {
			t.Fatalf("order %s at hop %d, want 2: the fixture did not re-arm", rearmed.OrderNo, o.TimeoutHop)
		}
		f.clock.Advance(holdTTL)
		if err := f.eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: timedOut.OrderNo, Hop: 1}); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(-holdTTL)

		if err := reconcile.CheckRedelivery(ctx, f.eng, st.DB, st.Seats, f.clock.Now()); err != nil {
			t.Fatalf("redelivery on a sound system: %v", err)
		}

		fastClock := stacktest.NewClock(f.clock.Now().Add(holdTTL))
		fast, err := core.NewEngine(core.Config{HoldTTL: holdTTL, PurchaseLimit: 6, Delay: core.DefaultDelayPolicy()},
			core.Deps{Store: st.DB, Seats: st.Seats, Queue: st.Queue, Clock: fastClock})
		if err != nil {
			t.Fatal(err)
		}
		err = reconcile.CheckRedelivery(ctx, fast, st.DB, st.Seats, f.clock.Now())
		if err == nil || !strings.Contains(err.Error(), "order "+rearmed.OrderNo+" changed") {
			t.Fatalf("a stale hop that cancels order %s went unnoticed: %v", rearmed.OrderNo, err)
		}
	})
}
