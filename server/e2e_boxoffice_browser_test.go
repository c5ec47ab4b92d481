package server

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"golang.org/x/crypto/bcrypt"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/till"
)

// boxOfficeBrowser is a whole app (NewApp) on a real listener, one staff
// account per role and a headless Chromium to drive the console with.
type boxOfficeBrowser struct {
	t       *testing.T
	a       *testApp
	url     string
	srv     *httptest.Server
	staff   map[access.Role]string
	browser context.Context
	dir     string
}

// startBoxOfficeBrowser starts the app (override: extra settings, as
// newTestApp takes them) and the browser.
func startBoxOfficeBrowser(t *testing.T, override ...string) *boxOfficeBrowser {
	t.Helper()
	return startBoxOfficeBrowserFlags(t, nil, override...)
}

// startBoxOfficeBrowserFlags is startBoxOfficeBrowser with more Chromium
// flags (a fake camera, say).
func startBoxOfficeBrowserFlags(t *testing.T, flags []chromedp.ExecAllocatorOption, override ...string) *boxOfficeBrowser {
	t.Helper()
	path := chromium(t)
	a := newTestApp(t, override...)
	staff := map[access.Role]string{}
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := till.New(a.app.DB, core.SystemClock{}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range access.AllRoles() {
		s, err := a.app.DB.CreateStaff(t.Context(), access.Staff{Username: "bo-" + strings.ReplaceAll(string(role), "_", "-"),
			Role: role, CreatedAt: time.Now()}, string(hash))
		if err != nil {
			t.Fatal(err)
		}
		staff[role] = s.Username
		// Every counter sale needs its clerk's open shift at the till.
		if _, err := tl.Open(t.Context(), till.OpenRequest{Clerk: s.Username, Currency: "EUR", FloatCents: 10000}); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(a.app.Handler)
	t.Cleanup(srv.Close)
	t.Cleanup(a.app.hub.Close) // seat streams end before the server waits for them
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.WindowSize(1280, 800))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, flags...)...)
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browserCtx); err != nil { // starts the browser, without a deadline
		t.Fatalf("start chromium: %v", err)
	}
	return &boxOfficeBrowser{t: t, a: a, url: srv.URL, srv: srv, staff: staff, browser: browserCtx, dir: screenshotDir(t)}
}

// tab opens a tab in a browser context of its own (its own cookies) and
// logs in as the account of role.
func (bb *boxOfficeBrowser) tab(name string, role access.Role) tab {
	bb.t.Helper()
	ctx, cancel := chromedp.NewContext(bb.browser, chromedp.WithNewBrowserContext())
	bb.t.Cleanup(cancel)
	// The first action opens the tab and binds it to the context it runs
	// with: run it without do's deadline.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		bb.t.Fatalf("open tab %s: %v", name, err)
	}
	b := tab{t: bb.t, ctx: ctx, name: name, dir: bb.dir}
	landing := "stat-pending" // the dashboard
	if !role.Can(access.ActView) {
		landing = "door-code" // gate staff land on the scan page
	}
	b.do("log in as "+bb.staff[role],
		chromedp.Navigate(bb.url+"/console/login"),
		chromedp.WaitVisible(chromedp.ID("username")),
		chromedp.SendKeys(chromedp.ID("username"), bb.staff[role]),
		chromedp.SendKeys(chromedp.ID("password"), testPassword),
		chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.ID(landing)),
	)
	return b
}

// createGridShow sets up a show of rows × perRow seats at 2500 cents
// through the API and returns its id.
func (bb *boxOfficeBrowser) createGridShow(name string, rows, perRow int) int64 {
	bb.t.Helper()
	body := fmt.Sprintf(`{"name":%q,"venue":"Arena","starts_at":%q,"currency":"EUR",
		"price_categories":[{"code":"STD","name":"Standard","price_cents":2500}],
		"grid":{"rows":%d,"seats_per_row":%d,"category":"STD"}}`,
		name, time.Now().Add(72*time.Hour).UTC().Format(time.RFC3339), rows, perRow)
	return bb.postShow(name, body)
}

// postShow creates the show of body (POST /api/v1/shows) and returns its id.
func (bb *boxOfficeBrowser) postShow(name, body string) int64 {
	bb.t.Helper()
	rec := bb.a.do("POST", "/api/v1/shows", body)
	if rec.Code != 201 {
		bb.t.Fatalf("create show %s: %d %s", name, rec.Code, rec.Body)
	}
	id, ok := decode(bb.t, rec)["id"].(float64)
	if !ok {
		bb.t.Fatalf("create show %s: no id in %s", name, rec.Body)
	}
	return int64(id)
}

// eval runs a JavaScript expression in b and returns its value.
func evalIn[T any](b tab, what, expr string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		b.t.Fatalf("%s: %s: %v", b.name, what, err)
	}
	return v
}

// gridTimingScript runs in the seat-map tab before any page script. After
// the load event it waits for the next frame (style and layout of the grid
// are done before a frame is drawn) and a task after it (the frame is
// drawn), and records the time since navigation start; the same once the
// seat stream is open. It counts the stream's messages.
const gridTimingScript = `(() => {
  const afterFrame = (key) => requestAnimationFrame(() => setTimeout(() => { window[key] = performance.now(); }, 0));
  addEventListener('load', () => afterFrame('__gridFrameAt'));
  window.__sseMessages = 0;
  document.addEventListener('htmx:sseOpen', () => { if (window.__streamOpenAt === undefined) afterFrame('__streamOpenAt'); });
  document.addEventListener('htmx:sseMessage', () => { window.__sseMessages++; });
})()`

// seatMapLoads is how many times TestSeatMap20000InBrowser loads the map:
// the machine is shared, so it prints each load and their median.
const seatMapLoads = 3

// TestSeatMap20000InBrowser sets up a 20,000-seat show through the API and
// loads its console seat map in Chromium: every seat gets its button, the seat
// stream does not send them all again, and a seat held afterwards turns
// locked through the stream. The time from navigation start to the drawn
// grid is printed against the 1 s target, split into the server's answer,
// parsing and scripts, and the main thread's script, style and layout.
func TestSeatMap20000InBrowser(t *testing.T) {
	const rows, perRow = 100, 200
	bb := startBoxOfficeBrowser(t)
	showID := bb.createGridShow("Arena 20k", rows, perRow)
	ops := bb.tab("seat map", access.RoleOps)
	if _, err := chromedp.Call(ops.ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: gridTimingScript}); err != nil {
		t.Fatalf("timing script: %v", err)
	}
	if _, err := chromedp.Call(ops.ctx, performance.Enable, performance.EnableParams{}); err != nil {
		t.Fatalf("performance metrics: %v", err)
	}
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) + " ms" }
	var drawn []float64
	for load := 1; load <= seatMapLoads; load++ {
		ops.do("open the 20,000-seat map", chromedp.Navigate(fmt.Sprintf("%s/console/shows/%d", bb.url, showID)))
		ops.waitJS("the grid's first frame", `window.__gridFrameAt !== undefined`)
		atGrid := mainThreadTimes(ops) // Chromium counts them afresh for each document
		// The buttons out of view are made once the browser is idle.
		ops.waitJS("every seat's button", fmt.Sprintf(`document.querySelectorAll('#seat-grid .seat-row button').length === %d`, rows*perRow))
		ops.waitJS("the seat stream open", `window.__streamOpenAt !== undefined`)
		var timing struct {
			RequestStart, ResponseStart, ResponseEnd, DOMInteractive, DOMContentLoaded, GridFrame, StreamOpen, Bytes float64
		}
		raw := evalIn[string](ops, "timings", `JSON.stringify((() => { const n = performance.getEntriesByType('navigation')[0];
			return {RequestStart: n.requestStart, ResponseStart: n.responseStart, ResponseEnd: n.responseEnd,
				DOMInteractive: n.domInteractive, DOMContentLoaded: n.domContentLoadedEventEnd, GridFrame: window.__gridFrameAt,
				StreamOpen: window.__streamOpenAt, Bytes: n.transferSize || n.encodedBodySize}; })())`)
		if err := json.Unmarshal([]byte(raw), &timing); err != nil {
			t.Fatal(err)
		}
		drawn = append(drawn, timing.GridFrame)
		t.Logf("load %d: grid drawn %s after navigation start = %.2f × the 1 s target; stream open %s", load,
			ms(timing.GridFrame), timing.GridFrame/1000, ms(timing.StreamOpen))
		t.Logf("  request sent %s, first byte %s (the server's work), last byte %s (%.1f MB), DOM parsed %s, scripts done %s; main thread %s",
			ms(timing.RequestStart), ms(timing.ResponseStart), ms(timing.ResponseEnd), timing.Bytes/1e6,
			ms(timing.DOMInteractive), ms(timing.DOMContentLoaded), atGrid)
	}
	slices.Sort(drawn)
	median := drawn[len(drawn)/2]
	t.Logf("20,000-seat map: median of %d loads: grid drawn %s = %.2f × the 1 s target (under -race the server's part is several times slower)",
		seatMapLoads, ms(median), median/1000)

	// A seat held now turns locked through the stream. Nothing changed
	// between the page's read of the seats and the stream's start, so that
	// change is the stream's first message: it did not send the 20,000
	// seats again (events arrive in order, so one before it would count).
	ops.do("mark the document", chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))
	last := fmt.Sprintf("%s-%d", core.RowName(rows), perRow)
	bb.placeOn(showID, 91, core.Customer{}, last)
	ops.waitJS("the held seat locked without a reload", fmt.Sprintf(
		`window.__sameDocument === true && document.getElementById('seat-%s').classList.contains('locked')`, last))
	viewportShot(ops, "boxoffice-01-seat-map-20000")
	if n := evalIn[int](ops, "stream messages", `window.__sseMessages`); n != 1 {
		t.Errorf("the stream sent %d messages for one change, want 1 (not the whole grid first)", n)
	}

	// Rows off screen skip layout until they scroll near: the map scrolled
	// (inside its box) to the far right and down to row 90, that row's
	// last seat is drawn.
	far := fmt.Sprintf("seat-%s-%d", core.RowName(90), perRow)
	ops.do("scroll to the far right, then down", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const m = document.querySelector('.seat-scroll');
		m.scrollLeft = m.scrollWidth;
		m.scrollTop += document.getElementById(%q).parentElement.getBoundingClientRect().top - m.getBoundingClientRect().top - 100;
	})()`, far)))
	ops.waitJS("a seat scrolled into view drawn", fmt.Sprintf(
		`document.getElementById(%q).checkVisibility({contentVisibilityAuto: true})`, far))
	viewportShot(ops, "boxoffice-01-seat-map-20000-scrolled")

	// A row wider than the map starts at the map's left edge (issue 15: a
	// centred row put its first seats left of the scroll area): seat A-1
	// of a 100-column plan is inside the map, on top at its centre, and a
	// click on it opens its panel. Focused, it names its state.
	wide := bb.createGridShow("Wide hall", 2, 100)
	ops.do("open the 100-column map", chromedp.Navigate(fmt.Sprintf("%s/console/shows/%d", bb.url, wide)),
		chromedp.WaitVisible(chromedp.ID("seat-A-1")))
	if where := evalIn[string](ops, "where seat A-1 is", `(() => {
		const s = document.getElementById('seat-A-1').getBoundingClientRect(), m = document.querySelector('.seat-scroll').getBoundingClientRect();
		const top = document.elementFromPoint(s.left + s.width / 2, s.top + s.height / 2);
		return s.left >= m.left && s.right <= m.right && top && top.id === 'seat-A-1' ? '' : 'seat ' + JSON.stringify(s) + ' map ' + JSON.stringify(m) + ' on top ' + (top && top.id);
	})()`); where != "" {
		t.Errorf("seat A-1 of a 100-column map is not visible and clickable: %s", where)
	}
	ops.do("click seat A-1", chromedp.Click(chromedp.ID("seat-A-1")))
	ops.waitJS("the panel of A-1", `document.querySelector('#seat-panel h2') !== null && document.querySelector('#seat-panel h2').textContent.includes('A-1')`)
	ops.do("focus seat A-2", chromedp.Focus(chromedp.ID("seat-A-2")))
	if label := evalIn[string](ops, "A-2's label", `document.getElementById('seat-A-2').getAttribute('aria-label') || ''`); label != "A-2 · available" {
		t.Errorf("focused seat A-2 is labelled %q, want %q", label, "A-2 · available")
	}
}

// threadTimes are Chromium's main-thread times of a tab's document so
// far, in seconds.
type threadTimes struct{ script, style, layout, task float64 }

func mainThreadTimes(b tab) threadTimes {
	b.t.Helper()
	res, err := chromedp.Call(b.ctx, performance.GetMetrics, cdp.Empty{})
	if err != nil {
		b.t.Fatalf("%s: performance metrics: %v", b.name, err)
	}
	var tt threadTimes
	for _, m := range res.Metrics {
		switch m.Name {
		case "ScriptDuration":
			tt.script = m.Value
		case "RecalcStyleDuration":
			tt.style = m.Value
		case "LayoutDuration":
			tt.layout = m.Value
		case "TaskDuration":
			tt.task = m.Value
		}
	}
	return tt
}

func (tt threadTimes) String() string {
	return fmt.Sprintf("busy %.0f ms (script %.0f ms, style %.0f ms, layout %.0f ms)",
		tt.task*1000, tt.script*1000, tt.style*1000, tt.layout*1000)
}

// viewportShot saves what the tab's viewport shows: a full-page shot of a
// 20,000-seat grid would be a huge image for nothing more.
func viewportShot(b tab, name string) {
	b.t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("%s: screenshot %s: %v", b.name, name, err)
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

// placeOn places an order for user on show through the API, with a
// customer, and returns its order number and code.
func (bb *boxOfficeBrowser) placeOn(showID, user int64, cu core.Customer, seats ...string) (orderNo, code string) {
	bb.t.Helper()
	body, err := json.Marshal(map[string]any{"user_id": user, "show_id": showID, "seat_ids": seats, "customer": cu})
	if err != nil {
		bb.t.Fatal(err)
	}
	rec := bb.a.do("POST", "/api/v1/orders", string(body))
	if rec.Code != 201 {
		bb.t.Fatalf("place %v on show %d: %d %s", seats, showID, rec.Code, rec.Body)
	}
	m := decode(bb.t, rec)
	return m["order_no"].(string), m["code"].(string)
}

// payOrder pays an order in full through the signed callback.
func (bb *boxOfficeBrowser) payOrder(orderNo string) {
	bb.t.Helper()
	o, err := bb.a.app.DB.Order(bb.t.Context(), orderNo)
	if err != nil {
		bb.t.Fatal(err)
	}
	if rec := bb.a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-%s","amount_cents":%d}`, orderNo, orderNo, o.AmountCents)); rec.Code != 200 {
		bb.t.Fatalf("pay %s: %d %s", orderNo, rec.Code, rec.Body)
	}
}

// orderRows are the order numbers of the orders page's rows, top to bottom.
func orderRows(b tab) []string {
	b.t.Helper()
	return evalIn[[]string](b, "the order rows",
		`[...document.querySelectorAll('#orders tbody tr[id^="order-"]')].map(r => r.id.slice('order-'.length))`)
}

// waitOrdersPage waits until the orders page of query (its non-empty
// parameters, encoded as URLSearchParams does) has loaded.
func waitOrdersPage(b tab, what, query string) {
	b.t.Helper()
	b.waitJS(what, fmt.Sprintf(`location.pathname === '/console/orders' && document.readyState === 'complete' &&
		document.getElementById('orders') !== null &&
		new URLSearchParams([...new URLSearchParams(location.search)].filter(([, v]) => v !== '')).toString() === %q`, query))
}

// TestOrdersPageInBrowser drives the console's orders page: the status and
// show filters, the header search box finding an order by its code, its
// customer's email and its seat, the next-page link through 55 orders, and
// the CSV export of the filtered orders.
func TestOrdersPageInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	show := bb.a.show.ID // 3×4: A-1 … C-4
	pending, pendingCode := bb.placeOn(show, 71, core.Customer{Name: "Ada Lovelace", Email: "ada@example.org"}, "A-1")
	paid, _ := bb.placeOn(show, 72, core.Customer{Name: "Grace Hopper", Email: "grace@example.org"}, "B-2")
	bb.payOrder(paid)
	cancelled, _ := bb.placeOn(show, 73, core.Customer{Name: "Alan Turing", Email: "alan@example.org"}, "C-3")
	if rec := bb.a.do("POST", "/api/v1/orders/"+cancelled+"/cancel", `{"user_id":73}`); rec.Code != 200 {
		t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
	}
	// A second show with more orders than one page holds (50), newer than
	// the first show's; its seats are A-1 … B-30, so no C-3.
	other := bb.createGridShow("Matinee", 2, 30)
	all := map[string]bool{pending: true, paid: true, cancelled: true}
	for i := range 52 {
		no, _ := bb.placeOn(other, int64(1000+i), core.Customer{}, fmt.Sprintf("%c-%d", 'A'+i/30, i%30+1))
		all[no] = true
	}

	clerk := bb.tab("orders", access.RoleBoxOffice)
	clerk.do("the orders page", chromedp.Navigate(bb.url+"/console/orders"), chromedp.WaitVisible(chromedp.ID("orders")))
	seen := map[string]bool{}
	first := orderRows(clerk)
	clerk.screenshot("boxoffice-02-orders")
	clerk.do("the next page", chromedp.Click(chromedp.ID("orders-next")))
	clerk.waitJS("the second page", `new URLSearchParams(location.search).has('cursor') && document.readyState === 'complete'`)
	second := orderRows(clerk)
	if len(first) != core.SearchDefaultLimit || len(second) != len(all)-core.SearchDefaultLimit {
		t.Errorf("pages of %d and %d rows, want %d and %d", len(first), len(second), core.SearchDefaultLimit, len(all)-core.SearchDefaultLimit)
	}
	for _, no := range append(first, second...) {
		if !all[no] || seen[no] {
			t.Errorf("order %s: unknown or on both pages", no)
		}
		seen[no] = true
	}
	if n := evalIn[int](clerk, "next link", `document.querySelectorAll('#orders-next').length`); n != 0 {
		t.Errorf("the last page still links to a next page")
	}

	filters := []struct {
		name, show, status, query string
		want                      []string // newest first
	}{
		{"status paid", "", "paid", "status=paid", []string{paid}},
		{"first show", strconv.FormatInt(show, 10), "", "show_id=" + strconv.FormatInt(show, 10), []string{cancelled, paid, pending}},
		{"first show, cancelled", strconv.FormatInt(show, 10), "cancelled", fmt.Sprintf("show_id=%d&status=cancelled", show), []string{cancelled}},
	}
	for _, f := range filters {
		clerk.do("filter "+f.name,
			chromedp.Navigate(bb.url+"/console/orders"),
			chromedp.WaitVisible(chromedp.ID("orders")),
			chromedp.SetValue(chromedp.CSS(`form.filters select[name="show_id"]`), f.show),
			chromedp.SetValue(chromedp.CSS(`form.filters select[name="status"]`), f.status),
			chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
		)
		waitOrdersPage(clerk, f.name, f.query)
		if got := orderRows(clerk); !slices.Equal(got, f.want) {
			t.Errorf("filter %s: rows %v, want %v", f.name, got, f.want)
		}
	}

	// The export link of the last filter (first show, cancelled), fetched
	// with the tab's session as a click would.
	csvText := evalIn[string](clerk, "fetch the CSV export",
		`fetch(document.getElementById('orders-csv').href).then(r => r.ok ? r.text() : 'HTTP ' + r.status)`, chromedp.EvalAwaitPromise)
	rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil {
		t.Fatalf("CSV export: %v: %q", err, csvText)
	}
	if len(rows) != 2 || rows[0][1] != "order_no" || rows[1][1] != cancelled || rows[1][2] != "cancelled" || rows[1][12] != "alan@example.org" {
		t.Errorf("CSV export of the first show's cancelled orders: %q", rows)
	}

	for _, s := range []struct {
		kind, q, want string
		landsOn       bool // an exact code lands on the order's page, not a list of one
	}{
		{"code", pendingCode, pending, true},
		{"customer email", "grace@example.org", paid, false},
		{"seat", "C-3", cancelled, false},
	} {
		clerk.do("search by "+s.kind,
			chromedp.Navigate(bb.url+"/console/"),
			chromedp.WaitVisible(chromedp.ID("header-search")),
			chromedp.SendKeys(chromedp.ID("header-search"), s.q+kb.Enter),
		)
		if s.landsOn {
			clerk.waitJS("search by "+s.kind+" lands on the order", fmt.Sprintf(
				`location.pathname === '/console/orders/' + %q && document.readyState === 'complete'`, s.want))
			continue
		}
		waitOrdersPage(clerk, "search by "+s.kind, "q="+url.QueryEscape(s.q))
		if got := orderRows(clerk); !slices.Equal(got, []string{s.want}) {
			t.Errorf("header search by %s %q: rows %v, want [%s]", s.kind, s.q, got, s.want)
		}
	}
	clerk.screenshot("boxoffice-03-search")
}

// TestRefundsInBrowser refunds from the order page: ops refund a paid order
// in one step; above SEATFLOW_REFUND_APPROVAL_CENTS box office only
// requests a refund, and ops approve it. Each refunded order ends refunded
// on its page and in the store, its seats available again.
func TestRefundsInBrowser(t *testing.T) {
	const threshold = 2000 // one C seat (1000) is below it, two A seats (3000) above
	bb := startBoxOfficeBrowser(t, "SEATFLOW_REFUND_APPROVAL_CENTS", strconv.Itoa(threshold))
	show := bb.a.show.ID
	small, _ := bb.placeOn(show, 81, core.Customer{Name: "Ada"}, "C-1")
	bb.payOrder(small)
	large, _ := bb.placeOn(show, 82, core.Customer{Name: "Grace"}, "A-1", "A-2")
	bb.payOrder(large)
	ops := bb.tab("ops", access.RoleOps)
	clerk := bb.tab("box office", access.RoleBoxOffice)

	refund := func(b tab, orderNo, reason string) {
		t.Helper()
		b.do("refund "+orderNo,
			chromedp.Navigate(bb.url+"/console/orders/"+orderNo),
			chromedp.WaitVisible(chromedp.ID("refund-form")),
			chromedp.SendKeys(chromedp.ID("refund-reason"), reason),
			chromedp.SendKeys(chromedp.ID("refund-reference"), "R-"+orderNo[len(orderNo)-6:]),
			chromedp.Click(chromedp.ID("refund-button")),
			chromedp.WaitVisible(chromedp.ID("cancel-outcome")),
		)
	}
	storeStatus := func(orderNo string) core.OrderStatus {
		t.Helper()
		o, err := bb.a.app.DB.Order(t.Context(), orderNo)
		if err != nil {
			t.Fatal(err)
		}
		return o.Status
	}
	seatsIn := func(want string, seatIDs ...string) {
		t.Helper()
		states := bb.a.seatStates()
		for _, id := range seatIDs {
			if states[id] != want {
				t.Errorf("seat %s is %s, want %s", id, states[id], want)
			}
		}
	}
	refunded := func(b tab, orderNo string, seatIDs ...string) {
		t.Helper()
		if got := b.text("#cancel-outcome"); !strings.Contains(got, "Order refunded") {
			t.Errorf("%s: outcome %q", orderNo, got)
		}
		if got := b.text("#order-status"); got != "refunded" {
			t.Errorf("%s: page shows status %q, want refunded", orderNo, got)
		}
		if st := storeStatus(orderNo); st != core.StatusRefunded {
			t.Errorf("%s: stored status %s, want refunded", orderNo, st)
		}
		seatsIn("available", seatIDs...)
	}

	refund(ops, small, "customer cannot come")
	refunded(ops, small, "C-1")
	ops.screenshot("boxoffice-04-refunded")

	refund(clerk, large, "show date clashes with a wedding")
	if got := clerk.text("#cancel-outcome"); !strings.Contains(got, "Refund requested") {
		t.Errorf("box office above the threshold: outcome %q, want a request", got)
	}
	if got := clerk.text("#order-status"); got != "paid" {
		t.Errorf("after the request the page shows %q, want paid", got)
	}
	if n := evalIn[int](clerk, "approve form", `document.querySelectorAll('#approve-refund').length`); n != 0 {
		t.Errorf("box office is offered the approval")
	}
	if st := storeStatus(large); st != core.StatusPaid {
		t.Errorf("after the request the order is %s in the store, want paid", st)
	}
	seatsIn("sold", "A-1", "A-2")
	clerk.screenshot("boxoffice-05-refund-requested")

	ops.do("approve the request",
		chromedp.Navigate(bb.url+"/console/orders/"+large),
		chromedp.WaitVisible(chromedp.ID("approve-refund")),
		chromedp.Click(chromedp.ID("approve-refund")),
		chromedp.WaitVisible(chromedp.ID("cancel-outcome")),
	)
	refunded(ops, large, "A-1", "A-2")
	if got := ops.text("#refunds"); !strings.Contains(got, "refunded") {
		t.Errorf("refund list: %q", got)
	}
	ops.screenshot("boxoffice-06-refund-approved")
}
