package reconcile_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/admission"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// TestPrune deletes the old events of closed orders and the Redis keys of
// an ended show, and keeps payments, a live show's keys and young events.
func TestPrune(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		queues := admission.NewMemory()
		f.queues = queues
		f.rec = f.reconciler(t, "test-"+stacktest.RandHex(3), prometheus.NewRegistry())
		if _, err := queues.Configure(ctx, f.show.ID, admission.Settings{Enabled: true}); err != nil {
			t.Fatal(err)
		}
		paid := f.place(t, 1, "A-1")
		f.pay(t, paid)
		f.cancel(t, f.place(t, 2, "A-2"))
		live, err := st.DB.CreateShow(ctx, core.Show{Name: "Live", Venue: "Hall", StartsAt: f.clock.Now().Add(200 * 24 * time.Hour),
			Rows: 1, Cols: 2}, store.DemoSeats(1, 2, 5000))
		if err != nil {
			t.Fatal(err)
		}
		st.CleanupSeats(t, live.ID)
		oldEvents := countRows(t, st, `SELECT COUNT(*) FROM order_event`)
		// Webhook events: the old delivered one goes, the old undelivered
		// one (still owed to the storefront) and the young one stay.
		queueWebhook(t, st, f.clock.Now(), "evt_old_delivered", "evt_old_undelivered")
		markWebhookDelivered(t, st, "evt_old_delivered", f.clock.Now())
		f.clock.Advance(91 * 24 * time.Hour)
		queueWebhook(t, st, f.clock.Now().Add(-2*time.Hour), "evt_young_delivered")
		markWebhookDelivered(t, st, "evt_young_delivered", f.clock.Now().Add(-time.Hour))
		// Placed after the jump, on the live show: its events and keys stay.
		young, err := f.eng.Place(ctx, core.PlaceRequest{UserID: 4, ShowID: live.ID, SeatIDs: []string{"A-1"}})
		if err != nil {
			t.Fatal(err)
		}

		rep, err := f.rec.Prune(ctx, core.DefaultRetention)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("prune: %+v", rep)
		for _, c := range []struct {
			what  string
			query string
			arg   any
			want  int
		}{
			{"events of the old orders", `SELECT COUNT(*) FROM order_event WHERE order_no <> ?`, young.OrderNo, 0},
			{"events of the young order", `SELECT COUNT(*) FROM order_event WHERE order_no = ?`, young.OrderNo, -1},
			{"payments", `SELECT COUNT(*) FROM payment WHERE order_no = ?`, paid.OrderNo, 1},
			{"old delivered webhook event", `SELECT COUNT(*) FROM webhook_outbox WHERE event_id = ?`, "evt_old_delivered", 0},
			{"old undelivered webhook event", `SELECT COUNT(*) FROM webhook_outbox WHERE event_id = ?`, "evt_old_undelivered", 1},
			{"young delivered webhook event", `SELECT COUNT(*) FROM webhook_outbox WHERE event_id = ?`, "evt_young_delivered", 1},
		} {
			got := countRows(t, st, c.query, c.arg)
			if (c.want < 0 && got == 0) || (c.want >= 0 && got != c.want) {
				t.Errorf("%s: %d rows, want %d (-1: some)", c.what, got, c.want)
			}
		}
		if rep.EventsDeleted != oldEvents || !rep.Done || rep.WebhooksDeleted != 1 {
			t.Errorf("reported %d events, %d webhook events deleted (done %v), want %d and 1",
				rep.EventsDeleted, rep.WebhooksDeleted, rep.Done, oldEvents)
		}
		if n := seatStateParts(t, st, f.show.ID); n != 0 {
			t.Errorf("ended show: %d of its seats and counters left", n)
		}
		if n := seatStateParts(t, st, live.ID); n != 2 {
			t.Errorf("live show: %d of its seats and counters left, want 2", n)
		}
		// The ended show's paid seat is gone from the seat store by design:
		// not a violation.
		if err := reconcile.CheckInvariants(ctx, st.DB, st.Seats, f.clock.Now()); err != nil {
			t.Errorf("invariants after pruning: %v", err)
		}
	})
}

// queueWebhook commits webhook events with the ids given, as the engine does.
func queueWebhook(t *testing.T, st *stacktest.Stack, at time.Time, ids ...string) {
	t.Helper()
	ctx := context.Background()
	evs := make([]core.WebhookEvent, len(ids))
	for i, id := range ids {
		evs[i] = core.WebhookEvent{ID: id, Kind: "waitlist.offered", At: at}
	}
	if err := st.DB.InTx(ctx, func(tx core.Tx) error { return tx.AddWebhookEvents(ctx, evs) }); err != nil {
		t.Fatal(err)
	}
}

// markWebhookDelivered marks the event delivered at at, as a dispatcher does.
func markWebhookDelivered(t *testing.T, st *stacktest.Stack, eventID string, at time.Time) {
	t.Helper()
	var id int64
	if err := st.DB.X().GetContext(context.Background(), &id, `SELECT id FROM webhook_outbox WHERE event_id = ?`, eventID); err != nil {
		t.Fatal(err)
	}
	if err := st.DB.MarkWebhookDelivered(context.Background(), id, at); err != nil {
		t.Fatal(err)
	}
}

func countRows(t *testing.T, st *stacktest.Stack, query string, args ...any) int {
	t.Helper()
	var n int
	if err := st.DB.X().GetContext(context.Background(), &n, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// seatStateParts counts which of the show's seats and purchase counters the
// seat store still holds (Redis keeps no empty hash: these are its keys).
func seatStateParts(t *testing.T, st *stacktest.Stack, showID int64) int {
	t.Helper()
	ctx := context.Background()
	holds, err := st.Seats.Holds(ctx, showID)
	if err != nil {
		t.Fatal(err)
	}
	limits, err := st.Seats.Limits(ctx, showID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, size := range []int{len(holds), len(limits)} {
		if size > 0 {
			n++
		}
	}
	return n
}

// TestPruneKeepsShowWithPendingOrder: a show over for longer than the grace
// keeps its seat-store state while an order on it is still pending (its
// timeout running late): the hold, the buyer's purchase count and the seats
// sold stay, and reconcile still compares the show. Once the order ends,
// the next run clears the show.
func TestPruneKeepsShowWithPendingOrder(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		queues := admission.NewMemory()
		f.queues = queues
		f.rec = f.reconciler(t, "test-"+stacktest.RandHex(3), prometheus.NewRegistry())
		if _, err := queues.Configure(ctx, f.show.ID, admission.Settings{Enabled: true}); err != nil {
			t.Fatal(err)
		}
		paid := f.place(t, 1, "A-1")
		f.pay(t, paid)
		held := f.place(t, 2, "A-2", "A-3")
		f.clock.Advance(9 * 24 * time.Hour) // the show started 8 days ago

		rep, err := f.rec.Prune(ctx, core.DefaultRetention)
		if err != nil {
			t.Fatal(err)
		}
		if rep.ShowsCleared != 0 {
			t.Errorf("cleared %d shows, want 0: an order on the show is pending", rep.ShowsCleared)
		}
		f.wantSeat(t, "A-1", core.SeatSold, paid.OrderNo)
		f.wantSeat(t, "A-2", core.SeatLocked, held.OrderNo)
		limits, err := st.Seats.Limits(ctx, f.show.ID)
		if err != nil {
			t.Fatal(err)
		}
		if limits[2] != 2 {
			t.Errorf("purchase counts %v after pruning, want user 2 at 2", limits)
		}
		onSale, err := st.DB.ShowsOnSale(ctx, f.clock.Now().Add(-core.DefaultRetention.ShowGrace))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(onSale, f.show.ID) {
			t.Errorf("shows reconcile and the start-up rebuild keep: %v, want %d among them", onSale, f.show.ID)
		}
		if _, err := queues.Status(ctx, f.show.ID); err != nil {
			t.Errorf("the show's waiting room after pruning: %v, want it kept", err)
		}

		f.cancel(t, held)
		if rep, err = f.rec.Prune(ctx, core.DefaultRetention); err != nil {
			t.Fatal(err)
		}
		if rep.ShowsCleared != 1 || seatStateParts(t, st, f.show.ID) != 0 {
			t.Errorf("after the order ended: cleared %d shows, %d seat-state parts left; want 1 and 0",
				rep.ShowsCleared, seatStateParts(t, st, f.show.ID))
		}
		if _, err := queues.Status(ctx, f.show.ID); !errors.Is(err, admission.ErrNoQueue) {
			t.Errorf("the show's waiting room after the show was cleared: %v, want it gone", err)
		}
	})
}

// TestPruneKeepsRefundedTimeline: an order paid longer ago than the event
// retention and refunded today keeps its whole timeline (closed_at still
// says when it was paid); once the refund is that old too, it goes.
func TestPruneKeepsRefundedTimeline(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := context.Background()
		f := newFixture(t, st)
		queues := admission.NewMemory()
		f.queues = queues
		f.rec = f.reconciler(t, "test-"+stacktest.RandHex(3), prometheus.NewRegistry())
		if _, err := queues.Configure(ctx, f.show.ID, admission.Settings{Enabled: true}); err != nil {
			t.Fatal(err)
		}
		paid := f.place(t, 1, "A-1")
		f.pay(t, paid)
		f.clock.Advance(core.DefaultRetention.OrderEvents + 24*time.Hour)
		refunds, err := core.NewRefunds(f.eng, st.DB, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := refunds.Refund(ctx, core.RefundRequest{OrderNo: paid.OrderNo, Reason: "show moved",
			Actor: "api"}); err != nil {
			t.Fatal(err)
		}
		timeline := countRows(t, st, `SELECT COUNT(*) FROM order_event WHERE order_no = ?`, paid.OrderNo)

		if _, err := f.rec.Prune(ctx, core.DefaultRetention); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, st, `SELECT COUNT(*) FROM order_event WHERE order_no = ?`, paid.OrderNo); n != timeline {
			t.Errorf("refunded today: %d of its %d events left", n, timeline)
		}

		f.clock.Advance(core.DefaultRetention.OrderEvents + 24*time.Hour)
		if _, err := f.rec.Prune(ctx, core.DefaultRetention); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, st, `SELECT COUNT(*) FROM order_event WHERE order_no = ?`, paid.OrderNo); n != 0 {
			t.Errorf("refunded long ago: %d events left, want 0", n)
		}
	})
}
