package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"seatflow/core"
	"seatflow/core/store"
	"seatflow/core/testenv"
	"seatflow/core/webhook"
)

// TestWebhookDelivery: with SEATFLOW_WEBHOOK_URL set, the app tells the
// engine to write events (a waiting-list offer made, and ended unpaid)
// and sends each committed one to the storefront,
// signed as the payment callback is signed: the receiver here checks it
// with the callback's own verifySignature. The outbox's gauges and the
// delivery counter show on /metrics. Close leaves no goroutine behind.
func TestWebhookDelivery(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const secret = "storefront-webhook-0123456789"
	var mu sync.Mutex
	got := map[string]map[string]any{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := verifySignature(Secret(secret), r.Header.Get(headerTimestamp), r.Header.Get(headerSignature), body, time.Now()); err != nil {
			t.Errorf("the payment callback's check refuses the webhook: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var ev map[string]any
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("body %s: %v", body, err)
		}
		mu.Lock()
		got[r.Header.Get(webhook.HeaderEventID)] = ev
		mu.Unlock()
	}))
	defer srv.Close()
	app, base, stop := startApp(t, map[string]string{"SEATFLOW_WEBHOOK_URL": srv.URL + "/seatflow", "SEATFLOW_WEBHOOK_SECRET": secret}, nil)
	if !app.engine.Config().Webhooks {
		t.Error("the engine was not told to write webhook events")
	}
	// The events come from the waiting list's hand-off: a hold cancelled
	// offers its seat to the entry (waitlist.offered), whose customer then
	// cancels the offer (waitlist.expired).
	ctx := t.Context()
	show, err := app.DB.CreateShow(ctx, core.Show{Name: "Hooked", Venue: "Hall", StartsAt: time.Now().Add(24 * time.Hour)},
		store.DemoSeats(1, 2, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.engine.SetWaitlist(ctx, core.WaitlistSettings{ShowID: show.ID, Enabled: true, JoinWhen: core.JoinWhenAlways}); err != nil {
		t.Fatal(err)
	}
	entry, _, err := app.engine.JoinWaitlist(ctx, core.WaitJoin{ShowID: show.ID, UserID: 42, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	hold, err := app.engine.Place(ctx, core.PlaceRequest{UserID: 7, ShowID: show.ID, SeatIDs: []string{"A-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.engine.Cancel(ctx, hold.OrderNo, 7); err != nil {
		t.Fatal(err)
	}
	received := func(kind string) map[string]any {
		t.Helper()
		var data map[string]any
		testenv.WaitFor(t, 10*time.Second, kind+" at the storefront", func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, ev := range got {
				if ev["kind"] == kind {
					data, _ = ev["data"].(map[string]any)
					return true
				}
			}
			return false
		})
		return data
	}
	offered := received(core.WebhookOffered)
	if offered["entry"] != entry.Entry.Token || fmt.Sprint(offered["seat_ids"]) != "[A-1]" || offered["user_id"] != float64(42) {
		t.Errorf("waitlist.offered: %v", offered)
	}
	offer, _ := offered["order_no"].(string)
	if _, err := app.engine.Cancel(ctx, offer, 42); err != nil {
		t.Fatal(err)
	}
	if expired := received(core.WebhookExpired); expired["entry"] != entry.Entry.Token || expired["order_no"] != offer ||
		expired["reason"] != core.ReasonCustomer {
		t.Errorf("waitlist.expired: %v", expired)
	}
	testenv.WaitFor(t, 10*time.Second, "the deliveries recorded", func() bool {
		mfs := scrape(t, base)
		return mfs["seatflow_webhook_backlog"].GetMetric()[0].GetGauge().GetValue() == 0 &&
			mfs["seatflow_webhook_delivered_total"].GetMetric()[0].GetCounter().GetValue() == 2
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
