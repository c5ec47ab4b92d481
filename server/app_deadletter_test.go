package server

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
	"seatflow/core/store"
	"seatflow/core/testenv"
)

// TestAppOrderUpdateFaultMakesTheTimeoutADeadLetter wires the whole app
// (embedded: the DB queue; real: MariaDB, Redis, RocketMQ and its DLQ) with
// a small SEATFLOW_TIMEOUT_MAX_ATTEMPTS and injects a fault
// (a trigger refusing every update of one order) so that its timeout
// handler always fails: after those attempts the timeout is a dead letter
// and seatflow_timeout_dead_letters_total says 1, while another order's
// timeout cancels it as usual. With the fault gone, retrying the dead
// letter ends the hold by its timeout.
func TestAppOrderUpdateFaultMakesTheTimeoutADeadLetter(t *testing.T) {
	tests := []struct {
		name     string
		attempts int
		env      func(t *testing.T) map[string]string
		// trigger refuses every update of the order (%s: its number).
		trigger string
	}{
		{"embedded", 2, func(*testing.T) map[string]string { return map[string]string{} },
			`CREATE TRIGGER poison_order_fault BEFORE UPDATE ON order_info
 WHEN OLD.order_no = '%s' BEGIN SELECT RAISE(ABORT, 'injected fault: order update refused'); END`},
		// One attempt: a second would wait the broker's ~10 s retry back-off.
		{"real", 1, func(t *testing.T) map[string]string {
			suffix := rand.Text()[:8]
			return map[string]string{
				"SEATFLOW_DB":             stacktest.FreshMySQL(t, testenv.MySQL(t)),
				"SEATFLOW_REDIS":          testenv.Redis(t),
				"SEATFLOW_MQ":             testenv.RocketMQ(t),
				"SEATFLOW_ROCKETMQ_TOPIC": "SF_POISON_" + suffix,
				"SEATFLOW_ROCKETMQ_GROUP": "sf-poison-" + suffix,
			}
		}, `CREATE TRIGGER poison_order_fault BEFORE UPDATE ON order_info FOR EACH ROW
 BEGIN IF OLD.order_no = '%s' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected fault: order update refused'; END IF; END`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { appPoisonTimeout(t, tt.attempts, tt.env(t), tt.trigger) })
	}
}

func appPoisonTimeout(t *testing.T, attempts int, env map[string]string, trigger string) {
	env["SEATFLOW_HOLD_TTL"] = "1s"
	env["SEATFLOW_TIMEOUT_MAX_ATTEMPTS"] = strconv.Itoa(attempts)
	env["SEATFLOW_RECONCILE_SWEEP_EVERY"] = "1h" // only the timeout may end these holds
	app, base, _ := startApp(t, env, nil)
	ctx := t.Context()
	show, err := app.DB.CreateShow(ctx, core.Show{Name: "Poison", StartsAt: time.Now().Add(time.Hour)}, store.DemoSeats(1, 2, 1000))
	if err != nil {
		t.Fatal(err)
	}
	poison, err := app.Engine().Place(ctx, core.PlaceRequest{UserID: 1, ShowID: show.ID, SeatIDs: []string{"A-1"}})
	if err != nil {
		t.Fatal(err)
	}
	good, err := app.Engine().Place(ctx, core.PlaceRequest{UserID: 2, ShowID: show.ID, SeatIDs: []string{"A-2"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.X().Exec(fmt.Sprintf(trigger, poison.OrderNo)); err != nil {
		t.Fatal(err)
	}

	var letters []core.DeadLetter
	if err := testenv.Eventually(20*time.Second, func() error {
		if letters, err = app.DB.DeadLetters(ctx, 10); err != nil || len(letters) == 0 {
			return fmt.Errorf("no dead letter yet (%v)", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(letters) != 1 || letters[0].Msg.OrderNo != poison.OrderNo || letters[0].Attempts != attempts ||
		!strings.Contains(letters[0].LastError, "injected fault") {
		t.Errorf("dead letters %+v, want one for %s after %d attempts", letters, poison.OrderNo, attempts)
	}
	if err := testenv.Eventually(20*time.Second, func() error {
		o, err := app.DB.Order(ctx, good.OrderNo)
		if err == nil && o.Status != core.StatusCancelled {
			err = fmt.Errorf("other order %s", o.Status)
		}
		return err
	}); err != nil {
		t.Errorf("the other order's timeout: %v", err)
	}

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "\nseatflow_timeout_dead_letters_total 1\n") {
		t.Errorf("/metrics lacks seatflow_timeout_dead_letters_total 1")
	}
	// The fault fixed, a retry sends the timeout again and it cancels the hold.
	if _, err := app.DB.X().Exec(`DROP TRIGGER poison_order_fault`); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Engine().RetryDeadLetter(ctx, app.DB, letters[0].ID,
		&core.StaffAction{Staff: "ops-user", Role: access.RoleOps, IP: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Eventually(20*time.Second, func() error {
		o, err := app.DB.Order(ctx, poison.OrderNo)
		if err == nil && (o.Status != core.StatusCancelled || o.CancelReason != core.ReasonTimeout) {
			err = fmt.Errorf("retried order %s (%s)", o.Status, o.CancelReason)
		}
		return err
	}); err != nil {
		t.Errorf("after the retry: %v", err)
	}
	if err := reconcile.CheckInvariants(ctx, app.DB, app.seats, time.Now()); err != nil {
		t.Error(err)
	}
}
