package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"seatflow/core"
	"seatflow/core/testenv"
	"seatflow/core/webhook"
)

// TestWebhookDelivery: with SEATFLOW_WEBHOOK_URL set, the app tells the
// engine to write events and sends each committed one to the storefront,
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
	ctx := t.Context()
	ev := core.WebhookEvent{ID: core.NewWebhookEventID(), Kind: "waitlist.offered", At: time.Now(), Data: map[string]any{"order_no": "W-1"}}
	if err := app.DB.InTx(ctx, func(tx core.Tx) error { return tx.AddWebhookEvents(ctx, []core.WebhookEvent{ev}) }); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the event at the storefront", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got[ev.ID] != nil
	})
	mu.Lock()
	if got[ev.ID]["kind"] != "waitlist.offered" || got[ev.ID]["data"].(map[string]any)["order_no"] != "W-1" {
		t.Errorf("storefront got %v", got[ev.ID])
	}
	mu.Unlock()
	testenv.WaitFor(t, 10*time.Second, "the delivery recorded", func() bool {
		mfs := scrape(t, base)
		return mfs["seatflow_webhook_backlog"].GetMetric()[0].GetGauge().GetValue() == 0 &&
			mfs["seatflow_webhook_delivered_total"].GetMetric()[0].GetCounter().GetValue() == 1
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
