package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"seatflow/core/access"
)

// TestConsoleQueueInBrowser: in headless Chromium a manager opens a show's
// waiting-room page, turns the queue on with the form, and the page's live
// part (htmx polling under the console's CSP) then follows the Room as the
// test steps it, with no reload.
func TestConsoleQueueInBrowser(t *testing.T) {
	path := chromium(t)
	a := newQueueApp(t)
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.app.DB.CreateStaff(t.Context(), access.Staff{Username: "queue-e2e", Role: access.RoleManager,
		CreatedAt: time.Now()}, string(hash)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.app.Handler)
	t.Cleanup(srv.Close)
	t.Cleanup(a.app.hub.Close)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.Flag("disable-background-networking", true), chromedp.WindowSize(1280, 800))...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	// Started on the long-lived context: the first action's own timeout
	// would otherwise end the browser with it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b := tab{t: t, ctx: ctx, name: "manager", dir: screenshotDir(t)}
	page := fmt.Sprintf("%s/console/shows/%d/queue", srv.URL, a.show.ID)
	b.do("log in and open the queue page",
		chromedp.Navigate(srv.URL+"/console/login?next="+fmt.Sprintf("/console/shows/%d/queue", a.show.ID)),
		chromedp.WaitVisible(chromedp.ID("username")),
		chromedp.SendKeys(chromedp.ID("username"), "queue-e2e"),
		chromedp.SendKeys(chromedp.ID("password"), testPassword),
		chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.ID("queue-settings")),
	)
	if got := b.text("#queue-state .level-warn"); got != "off" {
		t.Fatalf("a new show's queue: %q, want off (at %s)", got, page)
	}
	b.do("turn the queue on",
		chromedp.Click(chromedp.ID("queue-enabled")),
		chromedp.SetValue(chromedp.ID("queue-window-input"), "120"),
		chromedp.Click(chromedp.ID("queue-save")),
		chromedp.WaitVisible(chromedp.ID("queue-pause")),
	)
	if got := b.text("#queue-window"); got != "2 min" {
		t.Errorf("window after the save: %q", got)
	}
	b.screenshot("queue-on")
	for u := range int64(5) {
		a.join(a.show.ID, u+1)
	}
	t0 := time.Now()
	a.step(t0)
	a.step(t0.Add(3 * time.Second)) // one a second: 3 admitted
	b.waitJS("the live part to show the admissions",
		`document.getElementById("queue-admitted").textContent === "3" && document.getElementById("queue-waiting").textContent === "2"`)
}
