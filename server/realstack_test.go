package server

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
	"seatflow/core/store"
	"seatflow/core/testenv"
)

// TestAppOnRealStack wires NewApp to MariaDB, Redis and RocketMQ (delay
// levels) and lets the API's order run out: the timeout chain goes through
// the broker and the seats come back. It checks the wiring, not the engine.
func TestAppOnRealStack(t *testing.T) {
	mysqlURL, redisURL, mqURL := testenv.MySQL(t), testenv.Redis(t), testenv.RocketMQ(t)
	// Own topic and group: a group's start offset depends on the topic's history.
	suffix := rand.Text()[:8]
	cfg, err := LoadConfig(mapEnv(map[string]string{
		"SEATFLOW_DB":             stacktest.FreshMySQL(t, mysqlURL),
		"SEATFLOW_REDIS":          redisURL,
		"SEATFLOW_MQ":             mqURL,
		"SEATFLOW_ROCKETMQ_TOPIC": "SF_SERVER_TEST_" + suffix,
		"SEATFLOW_ROCKETMQ_GROUP": "sf-server-test-" + suffix,
		"SEATFLOW_HOLD_TTL":       "2s",
		"SEATFLOW_API_TOKEN":      testToken,
		"SEATFLOW_PAYMENT_SECRET": testSecret,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Engine.Delay.Mode != core.DelayLevels {
		t.Fatalf("delay mode %s, want levels by default with RocketMQ", cfg.Engine.Delay.Mode)
	}
	app, err := NewApp(t.Context(), cfg, NewLogger(t.Output(), slog.LevelError))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := app.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	show, err := app.DB.CreateShow(t.Context(), core.Show{Name: "Real " + suffix, StartsAt: time.Now().Add(24 * time.Hour)}, store.DemoSeats(2, 2, 1000))
	if err != nil {
		t.Fatal(err)
	}
	// The Redis is shared with other tests: leave no seat state behind.
	t.Cleanup(func() { app.redis.Del(context.Background(), seats.KeySeats(show.ID), seats.KeyLimit(show.ID)) })
	a := &testApp{t: t, app: app, show: show}

	if rec := a.do("GET", "/readyz", ""); rec.Code != http.StatusOK {
		t.Fatalf("readyz: %d %s", rec.Code, rec.Body)
	}
	no := a.place(1, "A-1", "A-2")["order_no"].(string)
	paid := a.place(2, "B-1")["order_no"].(string)
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-%s","amount_cents":1250}`, paid, suffix)); rec.Code != http.StatusOK {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		o := decode(t, a.do("GET", "/api/v1/orders/"+no, ""))
		if o["status"] == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("order still %v a minute after its 2s hold: %v", o["status"], o["events"])
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The release runs right after the cancel commits; give it a moment.
	for time.Now().Before(deadline) {
		if st := a.seatStates(); st["A-1"] == "available" && st["A-2"] == "available" && st["B-1"] == "sold" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("seats after timeout and payment: %v", a.seatStates())
}
