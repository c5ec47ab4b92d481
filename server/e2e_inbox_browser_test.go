package server

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/web"
)

// TestInboxInBrowser: a refund a clerk asks for above the approval
// threshold shows in an ops user's navigation count and inbox (axe-clean
// in both languages at both widths); ops approve it there, and the clerk
// sees the approval, by whom, on the order page and on their dashboard.
func TestInboxInBrowser(t *testing.T) {
	const threshold = 2000 // two A seats (3000) are above it
	axe, err := os.ReadFile("testdata/axe/axe.min.js")
	if err != nil {
		t.Fatal(err)
	}
	bb := startBoxOfficeBrowser(t, "SEATFLOW_REFUND_APPROVAL_CENTS", strconv.Itoa(threshold))
	order, code := bb.placeOn(bb.a.show.ID, 91, core.Customer{Name: "Grace"}, "A-1", "A-2")
	bb.payOrder(order)
	ops := bb.tab("ops", access.RoleOps)
	clerk := bb.tab("box office", access.RoleBoxOffice)

	navCount := func(b tab) string {
		t.Helper()
		return evalIn[string](b, "the inbox count", `document.getElementById('inbox-count')?.textContent.trim() ?? ''`)
	}
	ops.do("dashboard before", chromedp.Navigate(bb.url+"/console/"), chromedp.WaitVisible(chromedp.ID("stat-inbox")))
	if got := navCount(ops); got != "" {
		t.Fatalf("count before any request: %q, want none", got)
	}

	clerk.do("ask for the refund",
		chromedp.Navigate(bb.url+"/console/orders/"+order),
		chromedp.WaitVisible(chromedp.ID("refund-form")),
		chromedp.SendKeys(chromedp.ID("refund-reason"), "show date clashes with a wedding"),
		chromedp.Click(chromedp.ID("refund-button")),
		chromedp.WaitVisible(chromedp.ID("cancel-outcome")),
	)
	if got := clerk.text("#refunds"); !strings.Contains(got, "waiting for a second person's approval") {
		t.Errorf("clerk's order page after the request: %q", got)
	}
	if n := evalIn[int](clerk, "the inbox link", `document.querySelectorAll('#nav-inbox').length`); n != 0 {
		t.Error("box office is shown the inbox")
	}

	ops.do("dashboard after", chromedp.Navigate(bb.url+"/console/"), chromedp.WaitVisible(chromedp.ID("stat-inbox")))
	if got, card := navCount(ops), ops.text("#stat-inbox"); got != "1" || card != "1" {
		t.Errorf("ops' count after the request: nav %q, dashboard %q, want 1 and 1", got, card)
	}
	ops.do("open the inbox", chromedp.Click(chromedp.ID("nav-inbox")), chromedp.WaitVisible(chromedp.ID("inbox")))
	row := evalIn[string](ops, "the request's row", fmt.Sprintf(
		`[...document.querySelectorAll('#inbox tbody tr')].filter(r => r.textContent.includes(%q)).map(r => r.id).join(',')`, code))
	if !strings.HasPrefix(row, "inbox-refund-") || strings.Contains(row, ",") {
		t.Fatalf("inbox rows with the order's code %s: %q, want one refund request", code, row)
	}
	ops.screenshot("inbox-01-waiting")

	// The inbox with a request in it, in both languages at both widths.
	for _, lang := range []web.Lang{web.LangEN, web.LangZH} {
		ops.do("inbox in "+string(lang),
			chromedp.EmulateViewport(a11yWidths[0].width, a11yWidths[0].height),
			chromedp.Navigate(bb.url+web.LangURL(lang, web.URL("/inbox"))),
			chromedp.WaitVisible(chromedp.ID("inbox")),
			chromedp.Evaluate[chromedp.Void](string(axe)))
		for _, w := range a11yWidths {
			ops.do("viewport "+w.name, chromedp.EmulateViewport(w.width, w.height))
			where := fmt.Sprintf("inbox (%s, %s px)", lang, w.name)
			if problem := evalIn[string](ops, "layout of "+where, layoutCheck); problem != "" {
				t.Errorf("%s: %s", where, problem)
			}
			var found []axeViolation
			if err := json.Unmarshal([]byte(evalIn[string](ops, "axe on "+where, axeRun, chromedp.EvalAwaitPromise)), &found); err != nil {
				t.Fatal(err)
			}
			for _, v := range found {
				report := t.Logf
				if axeFails[v.Impact] {
					report = t.Errorf
				}
				for _, n := range v.Nodes {
					report("%s: axe %s (%s) at %v: %s", where, v.ID, v.Impact, n.Target, v.Help)
				}
			}
		}
	}
	ops.do("back to English at the desk",
		chromedp.EmulateViewport(a11yWidths[0].width, a11yWidths[0].height),
		chromedp.Navigate(bb.url+web.LangURL(web.LangEN, web.URL("/inbox"))),
		chromedp.WaitVisible(chromedp.ID("inbox")))

	id := strings.TrimPrefix(row, "inbox-refund-")
	ops.do("approve from the inbox",
		chromedp.Click(chromedp.ID("approve-"+id)),
		chromedp.WaitVisible(chromedp.ID("cancel-outcome")),
	)
	if got := ops.text("#order-status"); got != "refunded" {
		t.Errorf("after the approval the order page shows %q, want refunded", got)
	}
	ops.do("dashboard after the approval", chromedp.Navigate(bb.url+"/console/"), chromedp.WaitVisible(chromedp.ID("stat-inbox")))
	if got := navCount(ops); got != "" {
		t.Errorf("ops' count after the approval: %q, want none", got)
	}

	want := "refunded by " + bb.staff[access.RoleOps] + " at "
	clerk.do("the clerk's order page", chromedp.Navigate(bb.url+"/console/orders/"+order), chromedp.WaitVisible(chromedp.ID("refunds")))
	if got := clerk.text("#refunds"); !strings.Contains(got, want) {
		t.Errorf("clerk's order page: %q, want %q", got, want)
	}
	clerk.do("the clerk's dashboard", chromedp.Navigate(bb.url+"/console/"), chromedp.WaitVisible(chromedp.ID("my-requests")))
	if got := clerk.text("#my-requests"); !strings.Contains(got, code) || !strings.Contains(got, want) {
		t.Errorf("clerk's dashboard: %q, want the code %s and %q", got, code, want)
	}
	clerk.screenshot("inbox-02-clerk-dashboard")
}
