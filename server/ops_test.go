package server

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
)

func TestAPIExtend(t *testing.T) {
	a := newTestApp(t, "SEATFLOW_HOLD_TTL", "15m", "SEATFLOW_MAX_HOLD", "1h")
	o := a.place(1, "A-1")
	no := o["order_no"].(string)
	expire, _ := time.Parse(time.RFC3339, o["expire_time"].(string))
	path := "/api/v1/orders/" + no + "/extend"

	rec := a.do("POST", path, `{"user_id":1,"minutes":30,"reason":"customer on the phone"}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("extend: %d %s", rec.Code, rec.Body)
	}
	got := decode(t, rec)
	newExpire, _ := time.Parse(time.RFC3339, got["expire_time"].(string))
	if got["order_no"] != no || got["status"] != "pending" || newExpire.Sub(expire) != 30*time.Minute {
		t.Errorf("extended order %v: want pending, expiry +30m from %v", got, expire)
	}
	detail := a.do("GET", "/api/v1/orders/"+no, "")
	if !strings.Contains(detail.Body.String(), `"kind":"extended"`) || !strings.Contains(detail.Body.String(), `"actor":"api:SEATFLOW_API_TOKEN"`) {
		t.Errorf("timeline lacks the extension: %s", detail.Body)
	}

	paid := a.place(2, "A-2")
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-ext","amount_cents":%v}`, paid["order_no"], paid["amount_cents"])); rec.Code != http.StatusOK {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	for _, c := range []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"past the maximum hold (45 of 60 min used)", path, `{"user_id":1,"minutes":16}`, 422, "hold_limit"},
		{"zero minutes", path, `{"user_id":1,"minutes":0}`, 400, "invalid_request"},
		{"more than 120", path, `{"user_id":1,"minutes":121}`, 400, "invalid_request"},
		{"not a number", path, `{"user_id":1,"minutes":"5"}`, 400, "invalid_request"},
		{"unknown field", path, `{"user_id":1,"minutes":5,"hours":1}`, 400, "invalid_request"},
		{"reason too long", path, `{"user_id":1,"minutes":5,"reason":"` + strings.Repeat("x", 501) + `"}`, 400, "invalid_request"},
		{"paid order", "/api/v1/orders/" + paid["order_no"].(string) + "/extend", `{"user_id":2,"minutes":5}`, 409, "order_not_pending"},
		{"without user_id", path, `{"minutes":5}`, 400, "invalid_request"},
		{"another user's order", path, `{"user_id":2,"minutes":5}`, 404, "order_not_found"},
		{"unknown order", "/api/v1/orders/SFNOPE/extend", `{"user_id":1,"minutes":5}`, 404, "order_not_found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := a.do("POST", c.path, c.body)
			if rec.Code != c.status || errorCode(t, rec) != c.code {
				t.Errorf("status %d %s, want %d %s", rec.Code, rec.Body, c.status, c.code)
			}
		})
	}
	if rec := a.do("POST", path, `{"user_id":1,"minutes":15}`); rec.Code != http.StatusOK {
		t.Errorf("up to the maximum: %d %s", rec.Code, rec.Body)
	}
	if rec := a.do("POST", path, `{"user_id":1,"minutes":5}`, "Authorization", ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("without a token: %d", rec.Code)
	}
}

// TestExpiryMetrics ends expired orders through each path and reads
// /metrics: the lag histogram is labelled by the path, customer cancels
// are not in it, the overdue gauge counts the orders whose cancel is late,
// and the hop counter counts by level.
func TestExpiryMetrics(t *testing.T) {
	a := newTestApp(t, "SEATFLOW_HOLD_TTL", "1s")
	ctx := t.Context()
	eng := a.app.Engine()
	scrape := func() string {
		t.Helper()
		rec := a.do("GET", "/metrics", "")
		body, _ := io.ReadAll(rec.Body)
		return string(body)
	}
	// lost places an order whose timeout message is lost: only reconcile
	// can end it.
	lost := func(user int64, seat string) string {
		t.Helper()
		no := a.place(user, seat)["order_no"].(string)
		if _, err := a.app.DB.X().ExecContext(ctx, `DELETE FROM delay_task WHERE order_no = ?`, no); err != nil {
			t.Fatal(err)
		}
		return no
	}

	// waitFor polls cond for up to 15 s.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("still waiting for %s", what)
			}
		}
	}
	overdue := func(n int) func() bool {
		return func() bool { return strings.Contains(scrape(), fmt.Sprintf("\nseatflow_orders_overdue %d\n", n)) }
	}

	timedOut := a.place(1, "A-1")["order_no"].(string)
	swept := lost(2, "A-2")
	customer := a.place(4, "A-4")["order_no"].(string)
	if _, err := eng.Cancel(ctx, customer, 4); err != nil {
		t.Fatal(err)
	}
	// The timeout consumer ends its order; the lost one expires meanwhile
	// with nobody to end it but reconcile.
	waitFor("the timeout to cancel "+timedOut, func() bool {
		o, _, err := eng.Order(ctx, timedOut)
		return err == nil && o.Status == core.StatusCancelled
	})
	// The lost one counts once it is later than the slack allows.
	waitFor("the gauge to count the lost message", overdue(1))
	// The scheduler's fast sweep, run now.
	run, err := a.app.Reconciler.RunOnce(ctx, reconcile.TriggerSweep, false)
	if c, _ := run.Check(reconcile.CheckExpiredPending); err != nil || c.Fixed != 1 || c.Items[0].OrderNo != swept {
		t.Fatalf("sweep: %+v %v", run, err)
	}
	reconciled := lost(3, "A-3")
	waitFor("the second lost order to be overdue", overdue(1))
	run, err = a.app.Reconciler.RunOnce(ctx, reconcile.TriggerManual, false)
	if c, _ := run.Check(reconcile.CheckExpiredPending); err != nil || c.Fixed != 1 || c.Items[0].OrderNo != reconciled {
		t.Fatalf("reconcile run: %+v %v", run, err)
	}
	m := scrape()
	for path, n := range map[string]int{core.PathTimeout: 1, core.PathSweep: 1, core.PathReconcile: 1} {
		want := fmt.Sprintf("seatflow_expiry_lag_seconds_count{path=%q} %d", path, n)
		if !strings.Contains(m, want) {
			t.Errorf("missing %q in:\n%s", want, grep(m, "expiry_lag_seconds_count"))
		}
	}
	if paths := regexp.MustCompile(`seatflow_expiry_lag_seconds_count\{path="([a-z]+)"\}`).FindAllStringSubmatch(m, -1); len(paths) != 3 {
		t.Errorf("lag paths %v: want exactly timeout, sweep and reconcile (no customer)", paths)
	}
	// The consumer timed the message that cancelled timedOut.
	if !regexp.MustCompile(`\nseatflow_timeout_handle_seconds_count\{outcome="cancelled",queue="dbqueue"\} [1-9]`).MatchString(m) {
		t.Errorf("the cancelling timeout is not in the handling-time histogram:\n%s", grep(m, "timeout_handle_seconds_count"))
	}
	for _, want := range []string{"\nseatflow_orders_overdue 0\n", "\nseatflow_orders_overdue_errors_total 0\n",
		`seatflow_timeout_hops_total{level="0"} 4`} {
		if !strings.Contains(m, want) {
			t.Errorf("missing %q in:\n%s", strings.TrimSpace(want), grep(m, "overdue|hops"))
		}
	}
}

// grep keeps the lines of a metrics page that match re.
func grep(page, re string) string {
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if regexp.MustCompile(re).MatchString(l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
