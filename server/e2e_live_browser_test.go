package server

import (
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"seatflow/core/access"
)

// watchFor makes the tab note the time (Date.now(), the machine's clock)
// at which cond first holds, checked every 10 ms in the page; doneAt reads
// it. The page measures, so the test's own round trips add nothing.
func (b tab) watchFor(what, cond string) {
	b.t.Helper()
	b.do("watch for "+what, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`window.__seenAt = 0;
		clearInterval(window.__watch);
		window.__watch = setInterval(function () {
			try { if (!window.__seenAt && (%s)) { window.__seenAt = Date.now(); } } catch (e) {}
		}, 10)`, cond)))
}

// doneAt waits (up to 15 s) for the time watchFor noted.
func (b tab) doneAt(what string) time.Time {
	b.t.Helper()
	b.waitJS(what, `window.__seenAt > 0`)
	ms, err := chromedp.Run(b.ctx, chromedp.Evaluate[int64](`window.__seenAt`))
	if err != nil {
		b.t.Fatalf("%s: %s: %v", b.name, what, err)
	}
	return time.UnixMilli(ms)
}

// TestLivePagesInBrowser: an open seat panel, the holds list and an order
// page follow a payment callback without a reload, each within 1 s of the
// callback's return, and the dashboard within its 2 s between fetches and
// 1 s; with the server gone, every page turns stale (greyed out, inert, a
// banner naming the time, in the page's language) within 5 s; once a
// server listens again, the pages fetch themselves again and the banner
// goes.
func TestLivePagesInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	a := bb.a
	toPay := a.place(61, "C-1")
	toPayNo := toPay["order_no"].(string)
	stays := a.place(62, "C-2")["order_no"].(string)

	seats := bb.tab("seat map", access.RoleOps)
	seats.do("open C-1's panel",
		chromedp.Navigate(fmt.Sprintf("%s/console/shows/%d", bb.url, a.show.ID)),
		chromedp.WaitVisible(chromedp.ID("seat-grid")),
	)
	seats.waitJS("the seat stream", `document.getElementById('seat-live').dataset.sseState === 'open'`)
	seats.do("click C-1", chromedp.Click(chromedp.ID("seat-C-1")), chromedp.WaitVisible(chromedp.ID("panel-order")))
	if seats.text("#panel-order") != toPayNo {
		t.Fatalf("panel order %q, want %s", seats.text("#panel-order"), toPayNo)
	}
	seats.waitJS("a locked seat with a countdown and force-cancel",
		`!!(document.querySelector('#seat-panel .seat-state.locked') && document.querySelector('#seat-panel .countdown') && document.querySelector('#seat-panel #cancel-form'))`)

	holds := bb.tab("holds", access.RoleBoxOffice)
	holds.do("open the holds", chromedp.Navigate(bb.url+"/console/holds"), chromedp.WaitVisible(chromedp.ID("hold-"+toPayNo)))

	order := bb.tab("order", access.RoleManager)
	order.do("open the order in Chinese",
		chromedp.Navigate(bb.url+"/console/orders/"+toPayNo),
		chromedp.WaitVisible(chromedp.ID("order-status")),
		chromedp.Click(chromedp.CSS("a.lang")),
		chromedp.WaitVisible(chromedp.CSS(`html[lang="zh-CN"] #order-status.status-pending`)),
	)

	dash := bb.tab("dashboard", access.RoleBoxOffice)
	dash.do("open the dashboard", chromedp.Navigate(bb.url+"/console/"), chromedp.WaitVisible(chromedp.ID("seats-left")))
	left := func() string { return dash.text(fmt.Sprintf("#left-%d .left", a.show.ID)) }
	heldLeft := left()

	all := []tab{seats, holds, order, dash}
	for _, b := range all {
		b.waitJS("the live stream", `document.body.dataset.liveState === 'live'`)
		b.do("mark the document", chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))
	}
	same := `window.__sameDocument === true && `
	seats.watchFor("the panel to say sold", same+`document.querySelector('#seat-panel .seat-state.sold') && !document.querySelector('#seat-panel .countdown') && !document.querySelector('#seat-panel #cancel-form')`)
	holds.watchFor("the paid hold to leave", same+fmt.Sprintf(`!document.getElementById('hold-%s') && document.getElementById('hold-%s') && document.getElementById('holds-total').textContent.trim() === '1 in all'`, toPayNo, stays))
	order.watchFor("the order to say paid", same+`document.querySelector('#order-status.status-paid') && !document.getElementById('cancel-form')`)
	dash.watchFor("one hold pending", same+`document.getElementById('stat-pending').textContent.trim() === '1'`)

	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-live","amount_cents":%v}`, toPayNo, toPay["amount_cents"])); rec.Code != http.StatusOK {
		t.Fatalf("payment callback: %d %s", rec.Code, rec.Body)
	}
	paid := time.Now()
	for _, b := range all {
		within := time.Second
		if b.name == dash.name {
			within += 2 * time.Second // data-live-min: a busy box office's changes share a fetch
		}
		if took := b.doneAt("the payment").Sub(paid); took > within {
			t.Errorf("%s: changed %v after the callback returned, want within %v", b.name, took, within)
		} else {
			t.Logf("%s: changed %v after the callback returned", b.name, took)
		}
	}
	holds.screenshot("live-01-holds-after-payment")
	seats.screenshot("live-02-seat-panel-after-payment")

	// The server goes away: the listener closes and so do the open streams.
	const seatTakesClicks = `(seat => document.elementFromPoint(...(r => [r.x + r.width / 2, r.y + r.height / 2])(seat.getBoundingClientRect())) === seat)(document.getElementById('seat-C-2'))`
	if hit, err := chromedp.Run(seats.ctx, chromedp.Evaluate[bool](seatTakesClicks)); err != nil || !hit {
		t.Fatalf("a seat of the live map does not take clicks: %v, %v", hit, err)
	}
	for _, b := range all {
		b.watchFor("the stale banner", `document.body.dataset.liveState === 'stale' && !document.getElementById('stale-notice').hidden`)
	}
	addr := bb.srv.Listener.Addr().String()
	bb.srv.Listener.Close()
	bb.srv.CloseClientConnections()
	gone := time.Now()
	for _, b := range all {
		if took := b.doneAt("the stale banner").Sub(gone); took > 5*time.Second {
			t.Errorf("%s: stale banner %v after the server stopped, want within 5s", b.name, took)
		}
	}
	stale := regexp.MustCompile(`^Stale since \d\d:\d\d:\d\d: `)
	if got := holds.text("#stale-notice"); !stale.MatchString(got) {
		t.Errorf("holds banner %q, want %s", got, stale)
	}
	if got := order.text("#stale-notice"); !regexp.MustCompile(`^自 \d\d:\d\d:\d\d 起数据已过期`).MatchString(got) {
		t.Errorf("Chinese banner %q", got)
	}
	for _, c := range []struct {
		b   tab
		ids []string
	}{{seats, []string{"seat-live", "seat-panel-live"}}, {holds, []string{"holds-live", "holds-total"}}, {order, []string{"order-live"}},
		{dash, []string{"dashboard-live"}}} {
		for _, id := range c.ids {
			if ok, err := chromedp.Run(c.b.ctx, chromedp.Evaluate[bool](fmt.Sprintf(
				`(function (el) { return el.inert && el.classList.contains('stale') && getComputedStyle(el).opacity < 1 })(document.getElementById(%q))`, id))); err != nil || !ok {
				t.Errorf("%s: #%s is not greyed out and inert while stale: %v, %v", c.b.name, id, ok, err)
			}
		}
	}
	if hit, err := chromedp.Run(seats.ctx, chromedp.Evaluate[bool](seatTakesClicks)); err != nil || hit {
		t.Errorf("a seat of the stale map takes clicks: %v, %v", hit, err)
	}
	holds.screenshot("live-03-holds-stale")
	seats.screenshot("live-04-seat-map-stale")
	order.screenshot("live-05-order-stale-zh")
	dash.screenshot("live-06-dashboard-stale")

	// A hold placed meanwhile is on the list once a server listens again.
	late := a.place(63, "C-3")["order_no"].(string)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	again := &http.Server{Handler: a.app.Handler}
	go again.Serve(l)
	t.Cleanup(func() { again.Close() })
	holds.waitJS("live again, with the hold placed while stale",
		fmt.Sprintf(`!!(document.body.dataset.liveState === 'live' && document.getElementById('stale-notice').hidden && document.getElementById('hold-%s') && !document.getElementById('holds-live').inert)`, late))
	// The stream swaps a fresh grid in: its seats are made and it is drawn
	// to the plan again once htmx has settled it.
	seats.waitJS("the seat map live again", `document.body.dataset.liveState === 'live' && !document.getElementById('seat-live').inert && document.getElementById('seat-C-3') !== null && document.getElementById('seat-C-3').classList.contains('locked') && document.getElementById('seat-grid').classList.contains('placed') && document.getElementById('seat-grid').style.width !== ''`)
	if got := holds.text("#holds-total"); !strings.Contains(got, "2 in all") {
		t.Errorf("holds total after reconnecting %q, want 2 in all", got)
	}
	dash.waitJS("the dashboard live again, with the hold placed while stale",
		`document.body.dataset.liveState === 'live' && !document.getElementById('dashboard-live').inert && document.getElementById('stat-pending').textContent.trim() === '2'`)
	if n, err := strconv.Atoi(heldLeft); err != nil || left() != strconv.Itoa(n-1) {
		t.Errorf("seats left after a hold placed while stale: %s, want one less than %s", left(), heldLeft)
	}
}
