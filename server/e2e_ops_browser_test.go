package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
)

// TestOpsInBrowser drives the ops features in headless Chromium against a
// whole app: box office extends a hold; the order page of a three-way race
// shows who won; ops work a discrepancy case; the dashboard draws the expiry
// charts; a reconcile dry run is looked at and applied. Screenshots of each
// page go to $SEATFLOW_SCREENSHOTS (ops-*.png).
func TestOpsInBrowser(t *testing.T) {
	path := chromium(t)
	a := newTestApp(t)
	ctx := t.Context()
	staff := map[access.Role]string{}
	for _, role := range []access.Role{access.RoleOps, access.RoleBoxOffice} {
		hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		s, err := a.app.DB.CreateStaff(ctx, access.Staff{Username: "ops-e2e-" + strings.ReplaceAll(string(role), "_", "-"),
			Role: role, CreatedAt: time.Now()}, string(hash))
		if err != nil {
			t.Fatal(err)
		}
		staff[role] = s.Username
	}
	srv := httptest.NewServer(a.app.Handler)
	t.Cleanup(srv.Close)
	t.Cleanup(a.app.hub.Close)
	dir := screenshotDir(t)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.Flag("disable-background-networking", true), chromedp.WindowSize(1280, 800))...)
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	newTab := func(name, username string) tab {
		tctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		if err := chromedp.Do(tctx, chromedp.EmulateViewport(1280, 800)); err != nil {
			t.Fatalf("open tab %s: %v", name, err)
		}
		b := tab{t: t, ctx: tctx, name: name, dir: dir}
		b.do("log in as "+username,
			chromedp.Navigate(srv.URL+"/console/login"),
			chromedp.WaitVisible(chromedp.ID("username")),
			chromedp.SendKeys(chromedp.ID("username"), username),
			chromedp.SendKeys(chromedp.ID("password"), testPassword),
			chromedp.Click(chromedp.ID("login-submit")),
			chromedp.WaitVisible(chromedp.ID("stat-pending")),
		)
		return b
	}
	// An engine on the app's own stores whose clock an hour ago lets the
	// test make expired holds and late cancels without waiting for them.
	clock := stacktest.NewClock(time.Now().Add(-time.Hour))
	past, err := core.NewEngine(core.Config{HoldTTL: 10 * time.Minute, PurchaseLimit: 100, Delay: core.DefaultDelayPolicy()},
		core.Deps{Store: a.app.DB, Seats: a.app.seats, Queue: a.app.queue, Clock: clock, Notifier: a.app.hub})
	if err != nil {
		t.Fatal(err)
	}

	box := newTab("box office", staff[access.RoleBoxOffice])
	hold := a.place(51, "A-1")["order_no"].(string)
	box.do("extend a hold",
		chromedp.Navigate(srv.URL+"/console/orders/"+hold),
		chromedp.WaitVisible(chromedp.ID("extend-form")),
		chromedp.SetValue(chromedp.ID("extend-minutes"), "10"),
		chromedp.SendKeys(chromedp.ID("extend-reason"), "customer is fetching another card"),
		chromedp.Click(chromedp.ID("extend-button")),
		chromedp.WaitVisible(chromedp.ID("cancel-outcome")),
	)
	if got := box.text("#cancel-outcome"); !strings.Contains(got, "Hold extended") {
		t.Errorf("after extending: %q", got)
	}
	if tl := box.text("#timeline"); !strings.Contains(tl, "Hold extended") || !strings.Contains(tl, "customer is fetching another card") {
		t.Errorf("timeline lacks the extension: %q", tl)
	}
	box.screenshot("ops-01-extended")

	// Three actors at once on an expired hold.
	raced, err := past.Place(ctx, core.PlaceRequest{UserID: 52, ShowID: a.show.ID, SeatIDs: []string{"B-1"}})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(10*time.Minute + 1200*time.Millisecond)
	var wg sync.WaitGroup
	for _, attempt := range []func(){
		func() {
			_, _ = past.HandlePayment(ctx, core.Payment{OrderNo: raced.OrderNo, TxnID: "T-race", AmountCents: raced.AmountCents})
		},
		func() { _ = past.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: raced.OrderNo, Hop: 1}) },
		func() { _, _ = past.Cancel(ctx, raced.OrderNo, 52) },
	} {
		wg.Go(attempt)
	}
	wg.Wait()
	box.do("the raced order", chromedp.Navigate(srv.URL+"/console/orders/"+raced.OrderNo), chromedp.WaitVisible(chromedp.ID("race")))
	race := box.text("#race")
	if strings.Count(race, "won: ended the order") != 1 || strings.Count(race, "lost") != 2 {
		t.Errorf("race view: %q", race)
	}
	box.screenshot("ops-02-race")

	// A discrepancy for ops: paid after the customer cancelled.
	late := a.place(53, "C-1")
	lateNo := late["order_no"].(string)
	if rec := a.do("POST", "/api/v1/orders/"+lateNo+"/cancel", `{"user_id":53}`); rec.Code != 200 {
		t.Fatalf("cancel: %d", rec.Code)
	}
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-late","amount_cents":%v}`, lateNo, late["amount_cents"])); rec.Code != 200 {
		t.Fatalf("late payment: %d %s", rec.Code, rec.Body)
	}
	ops := newTab("ops", staff[access.RoleOps])
	ops.do("the queue", chromedp.Navigate(srv.URL+"/console/discrepancies"), chromedp.WaitVisible(chromedp.ID("discrepancies")))
	if q := ops.text("#discrepancies"); !strings.Contains(q, lateNo) {
		t.Errorf("queue lacks %s: %q", lateNo, q)
	}
	ops.screenshot("ops-03-queue")
	ops.do("open the case, take it, request the refund",
		chromedp.Click(chromedp.CSS(`#discrepancies a[href^="/console/discrepancies/"]`)),
		chromedp.WaitVisible(chromedp.ID("take-button")),
		chromedp.Click(chromedp.ID("take-button")),
		// The move form is there before the take too: wait for the page
		// that no longer offers to take the case.
		chromedp.WaitNotPresent(chromedp.ID("take-button")),
		chromedp.WaitVisible(chromedp.ID("move-form")),
		chromedp.SetValue(chromedp.ID("move-to"), string(core.CaseRefundRequested)),
		chromedp.SendKeys(chromedp.ID("move-note"), "refund asked at the gateway, ref R-1"),
		chromedp.Click(chromedp.ID("move-button")),
	)
	// The history was on the page before the move too: wait for the new state.
	ops.waitJS("the moved case", `document.querySelector('#case-state')?.textContent.trim() === 'refund requested'`)
	if st := ops.text("#case-state"); st != "refund requested" {
		t.Errorf("case state %q", st)
	}
	if h := ops.text("#case-history"); !strings.Contains(h, "took the case") || !strings.Contains(h, "ref R-1") {
		t.Errorf("history %q", h)
	}
	ops.screenshot("ops-04-case")

	// Late cancels for the lag chart; an expired hold nobody ended for the
	// overdue chart.
	for _, seat := range []string{"B-2", "B-3"} {
		o, err := past.Place(ctx, core.PlaceRequest{UserID: 54, ShowID: a.show.ID, SeatIDs: []string{seat}})
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(10*time.Minute + 700*time.Millisecond)
		if err := past.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := past.Place(ctx, core.PlaceRequest{UserID: 55, ShowID: a.show.ID, SeatIDs: []string{"B-4"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.app.DB.X().ExecContext(ctx, `DELETE FROM delay_task WHERE order_no IN (SELECT order_no FROM order_info WHERE user_id = 55)`); err != nil {
		t.Fatal(err)
	}
	ops.do("the dashboard", chromedp.Navigate(srv.URL+"/console/"), chromedp.WaitVisible(chromedp.ID("lag-chart")))
	if n, err := chromedp.Run(ops.ctx, chromedp.Evaluate[int](`document.querySelectorAll('#lag-chart rect.path-timeout').length`)); err != nil || n == 0 {
		t.Errorf("lag chart draws %d timeout bars (%v)", n, err)
	}
	ops.screenshot("ops-05-dashboard")

	// A drifted purchase counter for reconcile to find.
	if err := a.app.seats.SetLimit(ctx, a.show.ID, 99, 3); err != nil {
		t.Fatal(err)
	}
	ops.do("dry run",
		chromedp.Navigate(srv.URL+"/console/reconcile"),
		chromedp.Click(chromedp.ID("dry-run")),
		chromedp.WaitVisible(chromedp.ID("run-dry")),
	)
	if page := ops.text("main"); !strings.Contains(page, "would repair") || !strings.Contains(page, "fix the purchase counter") {
		t.Errorf("dry run page: %q", page)
	}
	ops.screenshot("ops-06-dry-run")
	ops.do("apply", chromedp.Click(chromedp.ID("apply-all")), chromedp.WaitVisible(chromedp.ID("applied")))
	if applied := ops.text("#applied"); !strings.Contains(applied, "repaired") || strings.Contains(applied, "would repair") {
		t.Errorf("applied: %q", applied)
	}
	ops.screenshot("ops-07-applied")
}
