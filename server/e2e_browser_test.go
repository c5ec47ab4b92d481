package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"seatflow/core/access"
)

// chromium finds Debian's Chromium. Without it the browser tests skip on a
// developer machine and fail under CI, which must run them.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed: CI must run the browser tests (apt-get install chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium); skipping the browser test")
	return ""
}

// screenshotDir is where the browser test saves its screenshots:
// $SEATFLOW_SCREENSHOTS, or the test's temp dir.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SEATFLOW_SCREENSHOTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tab is one browser tab of the test, with helpers that fail the test.
type tab struct {
	t    *testing.T
	ctx  context.Context
	name string
	dir  string
}

func (b tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %s: %v", b.name, what, err)
	}
}

func (b tab) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("%s: text of %s: %v", b.name, sel, err)
	}
	return s
}

// waitJS waits until a JavaScript expression is true. It asks again after
// an error, because the page may be navigating (a form post and its
// redirect) while it waits, which ends any one evaluation.
func (b tab) waitJS(what, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: waiting for %s (%s): last answer %v, %v", b.name, what, expr, ok, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b tab) screenshot(name string) {
	b.t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("%s: screenshot %s: %v", b.name, name, err)
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

// TestConsoleInBrowser drives the console in headless Chromium against the
// whole app (NewApp: API, console, engine, timeout consumer) on a real
// listener: log in, place an order through the API and see it count down
// in the pending holds, read its timeline, force-cancel it and watch an
// already open seat map free the seat without a reload, watch a payment
// callback sell a seat live, and see box office refused the reconcile page.
func TestConsoleInBrowser(t *testing.T) {
	path := chromium(t)
	a := newTestApp(t)
	staff := map[access.Role]string{}
	for _, role := range []access.Role{access.RoleOps, access.RoleBoxOffice} {
		hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		s, err := a.app.DB.CreateStaff(t.Context(), access.Staff{Username: "e2e-" + strings.ReplaceAll(string(role), "_", "-"),
			Role: role, CreatedAt: time.Now()}, string(hash))
		if err != nil {
			t.Fatal(err)
		}
		staff[role] = s.Username
	}
	srv := httptest.NewServer(a.app.Handler)
	t.Cleanup(srv.Close)
	// Seat-map streams end when the hub closes; close it before the server
	// waits for its connections (cleanups run last-registered first).
	t.Cleanup(a.app.hub.Close)
	dir := screenshotDir(t)

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Flag("disable-background-networking", true),
			chromedp.WindowSize(1280, 800),
		)...)
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browserCtx); err != nil { // starts the browser, without a deadline
		t.Fatalf("start chromium: %v", err)
	}
	newTab := func(name string, opts ...chromedp.ContextOption) tab {
		ctx, cancel := chromedp.NewContext(browserCtx, opts...)
		t.Cleanup(cancel)
		// The first action on a tab opens it and binds it to the context it
		// runs with: run it without do's deadline.
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
			t.Fatalf("open tab %s: %v", name, err)
		}
		return tab{t: t, ctx: ctx, name: name, dir: dir}
	}
	login := func(b tab, username string) {
		t.Helper()
		b.do("log in as "+username,
			chromedp.Navigate(srv.URL+"/console/login"),
			chromedp.WaitVisible(chromedp.ID("username")),
			chromedp.SendKeys(chromedp.ID("username"), username),
			chromedp.SendKeys(chromedp.ID("password"), testPassword),
			chromedp.Click(chromedp.ID("login-submit")),
			chromedp.WaitVisible(chromedp.ID("stat-pending")),
		)
	}

	desk := newTab("desk")
	desk.do("login page", chromedp.Navigate(srv.URL+"/console/login"), chromedp.WaitVisible(chromedp.ID("username")))
	desk.screenshot("01-login")
	login(desk, staff[access.RoleOps])

	hold := a.place(41, "A-1", "A-2")["order_no"].(string)
	toPay := a.place(42, "B-3")
	toPayNo := toPay["order_no"].(string)
	desk.do("dashboard", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("stat-pending")))
	if got := desk.text("#stat-pending"); got != "2" {
		t.Errorf("dashboard pending holds %q, want 2", got)
	}
	desk.screenshot("02-dashboard")

	// The seat map opens first and stays open: what it shows later comes
	// through its event stream alone.
	seatMap := newTab("seat map")
	seatMap.do("open the seat map",
		chromedp.Navigate(fmt.Sprintf("%s/console/shows/%d", srv.URL, a.show.ID)),
		chromedp.WaitVisible(chromedp.ID("seat-grid")),
		chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`),
	)
	seatMap.waitJS("the event stream", `document.getElementById('seat-live').dataset.sseState === 'open'`)
	seatMap.waitJS("A-1 locked", `document.getElementById('seat-A-1').classList.contains('locked')`)
	seatMap.screenshot("03-seat-map")

	holdRow := "#hold-" + hold
	desk.do("pending holds",
		chromedp.Navigate(srv.URL+"/console/holds"),
		chromedp.WaitVisible(chromedp.CSS(holdRow)),
	)
	first := desk.text(holdRow + " .countdown")
	if !regexp.MustCompile(`^14:[0-5]\d$`).MatchString(first) {
		t.Fatalf("countdown %q: want m:ss just under the 15m hold", first)
	}
	desk.waitJS("the countdown to tick", fmt.Sprintf(`document.querySelector('%s .countdown').textContent !== %q`, holdRow, first))
	if hops := desk.text(holdRow + " td.hops"); hops != "1" {
		t.Errorf("hop count %q, want 1", hops)
	}
	desk.screenshot("04-pending-holds")
	desk.do("switch to Chinese",
		chromedp.Click(chromedp.CSS("a.lang")),
		chromedp.WaitVisible(chromedp.CSS(`html[lang="zh-CN"] `+holdRow)),
	)
	if h := desk.text("h1"); !strings.Contains(h, "待支付锁座") {
		t.Errorf("Chinese heading %q", h)
	}
	desk.screenshot("04b-pending-holds-zh")
	desk.do("back to English", chromedp.Click(chromedp.CSS("a.lang")), chromedp.WaitVisible(chromedp.CSS(`html[lang="en"] `+holdRow)))

	desk.do("open the order",
		chromedp.Click(chromedp.CSS(holdRow+" a")),
		chromedp.WaitVisible(chromedp.ID("timeline")),
	)
	if tl := desk.text("#timeline"); !strings.Contains(tl, "Placed") || !strings.Contains(tl, "Timeout hop scheduled") {
		t.Errorf("timeline: %q", tl)
	}
	desk.screenshot("05-order-timeline")

	desk.do("force-cancel, first step",
		chromedp.SendKeys(chromedp.ID("reason"), "customer changed their mind at the desk"),
		chromedp.Click(chromedp.ID("cancel-button")),
		chromedp.WaitVisible(chromedp.ID("confirm-cancel")),
	)
	desk.screenshot("06-confirm-cancel")
	desk.do("confirm",
		chromedp.Click(chromedp.ID("confirm-cancel")),
		chromedp.WaitVisible(chromedp.ID("cancel-outcome")),
	)
	if got := desk.text("#cancel-outcome"); !strings.Contains(got, "Order cancelled") {
		t.Errorf("outcome %q", got)
	}
	desk.screenshot("07-cancelled")

	seatMap.waitJS("A-1 and A-2 available without a reload",
		`window.__sameDocument === true && ['seat-A-1','seat-A-2'].every(id => document.getElementById(id).classList.contains('available'))`)
	seatMap.screenshot("08-seat-map-after-cancel")

	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-e2e","amount_cents":%v}`, toPayNo, toPay["amount_cents"])); rec.Code != 200 {
		t.Fatalf("payment callback: %d %s", rec.Code, rec.Body)
	}
	seatMap.waitJS("B-3 sold without a reload",
		`window.__sameDocument === true && document.getElementById('seat-B-3').classList.contains('sold')`)
	seatMap.do("open B-3's panel",
		chromedp.Click(chromedp.ID("seat-B-3")),
		chromedp.WaitVisible(chromedp.ID("panel-order")),
	)
	if got := seatMap.text("#panel-order"); got != toPayNo {
		t.Errorf("seat panel order %q, want %s", got, toPayNo)
	}
	seatMap.screenshot("09-seat-map-after-payment")

	// Box office, in a browser context of its own (its own cookies).
	box := newTab("box office", chromedp.WithNewBrowserContext())
	login(box, staff[access.RoleBoxOffice])
	resp, err := chromedp.Run(box.ctx, chromedp.NavigateResponse(srv.URL+"/console/reconcile"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 403 || !strings.Contains(box.text("h1"), "Not allowed") {
		t.Errorf("box office on the reconcile page: status %d, heading %q", resp.Status, box.text("h1"))
	}
	box.screenshot("10-box-office-forbidden")
	if n, err := chromedp.Run(box.ctx, chromedp.Evaluate[int](`document.querySelectorAll('nav a[href="/console/reconcile"]').length`)); err != nil || n != 0 {
		t.Errorf("box office sees a reconcile link: %d, %v", n, err)
	}
}
