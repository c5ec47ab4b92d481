package server

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/checkin"
	"seatflow/core/till"
	"seatflow/web"
)

// a11yPage is one console page the accessibility test visits: its path,
// the action a role needs to see it, and an element that says it is drawn.
type a11yPage struct {
	name, path, act, ready string
}

// a11yWidth is a viewport the test lays every page out in: a desk screen
// and a phone held upright.
type a11yWidth struct {
	name          string
	width, height int64
}

var a11yWidths = []a11yWidth{{"1440", 1440, 900}, {"390", 390, 844}}

// axeViolation is the part of an axe-core result the test reports.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

// axeRun runs the injected axe-core on the whole document and answers its
// violations as JSON.
const axeRun = `axe.run(document, {resultTypes: ['violations']}).then(r => JSON.stringify(r.violations))`

// axeFails is the impacts that fail the test; a minor violation is logged
// for review.
var axeFails = map[string]bool{"critical": true, "serious": true, "moderate": true}

// layoutCheck answers what is wrong with the page's layout at the current
// width, or "": the first thing to focus must be the skip link to the
// main content, the page must not scroll sideways, and every header item
// that is meant to show (on a narrow screen the menu button folds the nav
// and the account items) must be drawn inside the viewport.
const layoutCheck = `(() => {
  const out = [];
  const first = document.querySelector('a[href], button:not([hidden]), input:not([type=hidden]), select, textarea, [tabindex]:not([tabindex="-1"])');
  if (!first || !first.matches('a.skip[href="#main"]') || !document.getElementById('main')) out.push('the first focusable element is not the skip link to #main but ' + (first && first.outerHTML.slice(0, 80)));
  const se = document.scrollingElement;
  if (se.scrollWidth > innerWidth) out.push('the page is ' + se.scrollWidth + ' px wide in a ' + innerWidth + ' px viewport');
  const header = document.querySelector('header.top');
  if (!header) return out.join('; ');
  const toggle = document.getElementById('menu-toggle');
  const folds = toggle && toggle.getBoundingClientRect().width > 0;
  if (folds && innerWidth >= 1280) out.push('the menu is folded on a wide screen');
  const collapsed = folds && toggle.getAttribute('aria-expanded') === 'false';
  for (const el of header.querySelectorAll('a, button, input:not([type=hidden]), .user')) {
    if (el === toggle && !folds) continue;
    if (collapsed && el.closest('#menu')) continue;
    const r = el.getBoundingClientRect();
    const name = el.id || el.className || el.textContent.trim();
    if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === 'hidden') out.push('header item ' + name + ' is not drawn');
    else if (r.left < 0 || r.right > innerWidth + 0.5) out.push('header item ' + name + ' is outside the viewport (' + r.left + '…' + r.right + ')');
  }
  return out.join('; ');
})()`

// TestConsoleAccessibleInBrowser visits every console page as every role,
// in English and in Chinese, on a desk screen (1440×900) and on a phone
// (390×844), and runs axe-core (testdata/axe) on each: any critical,
// serious or moderate violation fails it, a minor one is logged. At each width the page must not scroll
// sideways and the header's items must show; on the phone the menu button
// opens the nav and Escape folds it, a table row is a card labelled with
// its headings and the seat panel a sheet at the bottom; without script
// the phone layout still fits. With SEATFLOW_SCREENSHOTS set every page is
// saved once per language and width (a11y-<page>-<lang>-<width>.png).
func TestConsoleAccessibleInBrowser(t *testing.T) {
	started := time.Now()
	axe, err := os.ReadFile("testdata/axe/axe.min.js")
	if err != nil {
		t.Fatal(err)
	}
	bb := startBoxOfficeBrowser(t)
	a := bb.a
	// Something on every page: a hold, a paid order, a discrepancy case
	// (paid after the cancel), a reconcile run.
	pending := a.place(61, "A-1")["order_no"].(string)
	paid := a.place(62, "B-1")
	paidNo := paid["order_no"].(string)
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-a11y-1","amount_cents":%v}`, paidNo, paid["amount_cents"])); rec.Code != 200 {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	// A partial refund: seats to tick on the order page, seats_refunded
	// on its timeline.
	partial := a.place(64, "C-2", "C-3", "C-4")
	partialNo := partial["order_no"].(string)
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-a11y-3","amount_cents":%v}`, partialNo, partial["amount_cents"])); rec.Code != 200 {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	if rec := a.do("POST", "/api/v1/orders/"+partialNo+"/refund", `{"reason":"a11y","seat_ids":["C-2"]}`); rec.Code != 200 {
		t.Fatalf("partial refund: %d %s", rec.Code, rec.Body)
	}
	late := a.place(63, "C-1")
	lateNo := late["order_no"].(string)
	if rec := a.do("POST", "/api/v1/orders/"+lateNo+"/cancel", `{"user_id":63}`); rec.Code != 200 {
		t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
	}
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-a11y-2","amount_cents":%v}`, lateNo, late["amount_cents"])); rec.Code != 200 {
		t.Fatalf("late payment: %d %s", rec.Code, rec.Body)
	}
	if rec := a.do("POST", "/api/v1/reconcile/runs?dry_run=true", ""); rec.Code/100 != 2 {
		t.Fatalf("reconcile run: %d %s", rec.Code, rec.Body)
	}
	var caseID, runID int64
	if err := a.app.DB.X().GetContext(t.Context(), &caseID, `SELECT id FROM discrepancy ORDER BY id LIMIT 1`); err != nil {
		t.Fatalf("the discrepancy case: %v", err)
	}
	if err := a.app.DB.X().GetContext(t.Context(), &runID, `SELECT id FROM reconcile_run ORDER BY id LIMIT 1`); err != nil {
		t.Fatalf("the reconcile run: %v", err)
	}
	// Something in the approvals inbox: a box-office refund request of the
	// paid order (asked through a workflow whose threshold every order is
	// above) and the case's write-off, asked for by ops.
	asks, err := core.NewRefunds(a.app.engine, a.app.DB, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := asks.Refund(t.Context(), core.RefundRequest{OrderNo: paidNo, Reason: "a11y",
		Actor: core.ActorStaffPrefix + bb.staff[access.RoleBoxOffice]}); err != nil {
		t.Fatalf("refund request: %v", err)
	}
	if _, err := core.NewCases(a.app.DB, nil).Move(t.Context(), caseID, core.CaseWriteOffRequested,
		bb.staff[access.RoleOps], "a11y", nil); err != nil {
		t.Fatalf("write-off request: %v", err)
	}
	// The box office's dashboard lists the holds expiring within 5
	// minutes: bring one that close.
	if _, err := a.app.DB.X().ExecContext(t.Context(), `UPDATE order_info SET expire_at = ? WHERE order_no = ?`,
		time.Now().Add(3*time.Minute).UnixMilli(), pending); err != nil {
		t.Fatal(err)
	}
	// A map taller than the phone's screen, so that the seat panel has to
	// be held at its bottom.
	tall := bb.createGridShow("Tall Show", 30, 10)
	if rec := a.placeOn(tall, 64, "A-1"); rec.Code != 201 {
		t.Fatalf("hold on the tall map: %d %s", rec.Code, rec.Body)
	}
	show := fmt.Sprint(tall)
	// A draft, whose edit page offers to publish it.
	draft := bb.createGridShow("Draft Show", 2, 4)
	if _, err := a.app.DB.X().ExecContext(t.Context(), `UPDATE show_info SET status = ? WHERE id = ?`, int(core.ShowDraft), draft); err != nil {
		t.Fatal(err)
	}
	// The till: ops closes its shift short (a case), so its till page
	// offers to open one and the day view has a closed shift.
	tl, err := till.New(a.app.DB, core.SystemClock{}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	closed, _, err := tl.Close(t.Context(), till.CloseRequest{Clerk: bb.staff[access.RoleOps], CountedCents: 2550})
	if err != nil || closed.CaseID == 0 {
		t.Fatalf("close the ops shift short: %+v %v", closed, err)
	}
	// A ticket admitted at a gate: the show's check-in page has a gate and
	// a quarter hour of arrivals.
	admitted, err := checkin.New(a.app.DB, core.SystemClock{}, nil).Admit(t.Context(),
		checkin.Request{OrderNo: paidNo, Gate: "north", Actor: "staff:a11y"})
	if err != nil {
		t.Fatalf("admit the paid order: %v", err)
	}
	// A waiting list on the tall show: a walk-in waiting.
	if _, err := a.app.engine.SetWaitlist(t.Context(), core.WaitlistSettings{ShowID: tall, Enabled: true,
		JoinWhen: core.JoinWhenAlways}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.app.engine.JoinWaitlist(t.Context(), core.WaitJoin{ShowID: tall, UserID: core.BoxOfficeUserID, Count: 2,
		Together: true, Customer: core.Customer{Name: "A. Walk-in"}, AddedBy: "staff:a11y"}); err != nil {
		t.Fatalf("join the waiting list: %v", err)
	}
	pages := []a11yPage{
		// First: every role, the door too, switches language here.
		{"door", "/door", access.ActCheckin, "#door-code"},
		{"dashboard", "/", access.ActView, "#stat-pending"},
		{"holds", "/holds", access.ActView, "#holds"},
		{"orders", "/orders", access.ActView, "#orders"},
		{"order-pending", "/orders/" + pending, access.ActView, "#timeline"},
		{"order-paid", "/orders/" + paidNo, access.ActView, "#timeline"},
		{"ticket", "/orders/" + paidNo + "/ticket", access.ActView, "#ticket"},
		{"order-partial", "/orders/" + partialNo, access.ActRefund, "#refund-seats"},
		{"shows", "/shows", access.ActView, "#shows"},
		{"show-new", "/shows/new", access.ActShows, "main form"},
		{"seat-map", "/shows/" + show, access.ActView, "#seat-grid"},
		{"best-rules", "/shows/" + show + "/best-available", access.ActShows, "#best-heat"},
		{"waitlist", "/shows/" + show + "/waitlist", access.ActView, "#waitlist-entries"},
		{"checkins", fmt.Sprintf("/shows/%d/checkins", admitted.Order.ShowID), access.ActView, "#checkins-arrivals"},
		{"show-edit", "/shows/" + show + "/edit", access.ActShows, "#show-edit-form"},
		{"show-cancel", "/shows/" + show + "/cancel", access.ActShows, "#cancel-show-form"},
		{"show-edit-draft", fmt.Sprintf("/shows/%d/edit", draft), access.ActShows, "#publish-show-form"},
		{"inbox", "/inbox", access.ActApproveRefund, "#inbox"},
		{"discrepancies", "/discrepancies", access.ActDiscrepancies, "#discrepancies"},
		{"discrepancy-case", fmt.Sprintf("/discrepancies/%d", caseID), access.ActDiscrepancies, "#case-history"},
		{"reconcile", "/reconcile", access.ActReconcile, "#runs"},
		{"reconcile-run", fmt.Sprintf("/reconcile/runs/%d", runID), access.ActReconcile, "main h1"},
		{"dead-letters", "/dead-letters", access.ActReconcile, "#dead-letters"},
		{"audit", "/audit", access.ActAudit, "#audit"},
		{"staff", "/staff", access.ActStaff, "#staff"},
		{"apikeys", "/apikeys", access.ActStaff, "#apikeys"},
		{"password", "/account/password", access.ActView, "main form"},
		{"two-step", "/account/2fa", access.ActView, "main h1"},
		{"sessions", "/sessions", access.ActView, "#sessions"},
		{"till", fmt.Sprintf("/till?closed=%d", closed.ID), access.ActCounterSale, "main h1"},
		{"till-report", "/till/report", access.ActCounterSale, "#till-shifts"},
		{"till-shift", fmt.Sprintf("/till/shifts/%d", closed.ID), access.ActDiscrepancies, "#till-shifts"},
		{"till-day", "/till/day", access.ActDiscrepancies, "#till-totals"},
		{"time-zone", "/account/zone", access.ActView, "main form"},
		{"forbidden", "/staff", "!" + access.ActStaff, "main h1"},
		{"not-found", "/orders/NO-SUCH-ORDER", access.ActView, "main h1"},
	}

	shot := map[string]bool{} // screenshots taken, one per page, language and width
	screens := os.Getenv("SEATFLOW_SCREENSHOTS") != ""
	visits := 0
	// check lays the tab out at each width, runs axe-core and the layout
	// check; page names the page in failures and screenshots.
	check := func(b tab, page, lang string, widths ...a11yWidth) {
		t.Helper()
		for _, w := range widths {
			b.do("viewport "+w.name, chromedp.EmulateViewport(w.width, w.height))
			where := fmt.Sprintf("%s (%s, %s, %s px)", page, b.name, lang, w.name)
			if problem := evalIn[string](b, "layout of "+where, layoutCheck); problem != "" {
				t.Errorf("%s: %s", where, problem)
			}
			var found []axeViolation
			res := evalIn[string](b, "axe on "+where, axeRun, chromedp.EvalAwaitPromise)
			if err := json.Unmarshal([]byte(res), &found); err != nil {
				t.Fatalf("%s: axe answered %q: %v", where, res, err)
			}
			for _, v := range found {
				report := t.Logf
				if axeFails[v.Impact] {
					report = t.Errorf
				}
				for _, n := range v.Nodes {
					report("%s: axe %s (%s) at %v: %s\n  %s", where, v.ID, v.Impact, n.Target, v.Help, strings.ReplaceAll(n.Summary, "\n", "\n  "))
				}
			}
			visits++
			if key := page + "-" + lang + "-" + w.name; screens && !shot[key] {
				shot[key] = true
				b.screenshot("a11y-" + key)
			}
		}
	}
	// The login page, before anyone logs in.
	guestCtx, cancelGuest := chromedp.NewContext(bb.browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancelGuest)
	if err := chromedp.Do(guestCtx, chromedp.EmulateViewport(1440, 900)); err != nil { // opens the tab, without a deadline
		t.Fatalf("open the guest tab: %v", err)
	}
	guest := tab{t: t, ctx: guestCtx, name: "guest", dir: bb.dir}
	for _, lang := range []web.Lang{web.LangEN, web.LangZH} {
		guest.do("login page", chromedp.Navigate(bb.url+web.LangURL(lang, web.URL("/login"))), chromedp.WaitVisible(chromedp.ID("username")))
		guest.do("inject axe-core", chromedp.Evaluate[chromedp.Void](string(axe)))
		check(guest, "login", string(lang), a11yWidths...)
	}

	// The most privileged role first: its header is the fullest, so its
	// screenshots show the worst case.
	roles := slices.Clone(access.AllRoles())
	slices.Reverse(roles)
	for _, role := range roles {
		b := bb.tab(string(role), role)
		for _, lang := range []web.Lang{web.LangEN, web.LangZH} {
			for i, p := range pages {
				if act, refused := strings.CutPrefix(p.act, "!"); refused == role.Can(act) {
					continue
				}
				to := web.URL(p.path)
				if i == 0 { // the language switch leads to the first page
					to = web.LangURL(lang, to)
				}
				b.do("open "+p.name,
					chromedp.EmulateViewport(a11yWidths[0].width, a11yWidths[0].height),
					chromedp.Navigate(bb.url+to),
					chromedp.WaitVisible(chromedp.CSS(p.ready)),
					chromedp.Evaluate[chromedp.Void](string(axe)))
				if got := evalIn[string](b, "lang", `document.documentElement.lang`); got != string(lang) {
					t.Fatalf("%s as %s: page in %q, want %q", p.name, role, got, lang)
				}
				name := p.name
				if name == "dashboard" && !role.Can(access.ActReconcile) {
					name = "dashboard-box-office" // a view of its own (web.Page.BoxOfficeView)
				}
				check(b, name, string(lang), a11yWidths...)
				switch p.name {
				case "dashboard":
					// The phone's menu: the button opens the nav and the
					// account links, and they pass too.
					phone := a11yWidths[1]
					b.do("phone", chromedp.EmulateViewport(phone.width, phone.height), chromedp.KeyEvent(kb.Tab))
					if skip := evalIn[string](b, "the skip link", `(() => { const a = document.activeElement, r = a.getBoundingClientRect();
						return a.matches('a.skip') && r.top >= 0 && r.right <= innerWidth ? '' : a.outerHTML.slice(0, 80) + ' at ' + JSON.stringify(r) })()`); skip != "" {
						t.Errorf("as %s on a phone the first Tab focuses %s, want the skip link in view", role, skip)
					}
					if got := evalIn[string](b, "menu button", `document.getElementById('menu-toggle')?.getAttribute('aria-expanded') ?? 'no button'`); got != "false" {
						t.Errorf("as %s on a phone the menu starts aria-expanded=%q, want false", role, got)
						continue
					}
					b.do("open the menu", chromedp.Click(chromedp.ID("menu-toggle")), chromedp.WaitVisible(chromedp.CSS("#menu nav a")))
					check(b, "dashboard-menu", string(lang), phone)
					b.do("Escape", chromedp.KeyEvent(kb.Escape))
					if got := evalIn[string](b, "the menu after Escape", `(() => { const btn = document.getElementById('menu-toggle');
						return btn.getAttribute('aria-expanded') + ' ' + (document.activeElement === btn) + ' ' + document.querySelector('#menu nav a').getBoundingClientRect().height })()`); got != "false true 0" {
						t.Errorf("as %s on a phone Escape leaves the menu (expanded, button focused, link height) %q, want \"false true 0\"", role, got)
					}
				case "holds":
					// A row is a card on the phone, each value beside its
					// column's heading.
					b.do("phone", chromedp.EmulateViewport(a11yWidths[1].width, a11yWidths[1].height))
					if got := evalIn[string](b, "the holds' card", `(() => { const th = document.querySelector('#holds thead th'), td = document.querySelector('#holds tbody td');
						return getComputedStyle(td, '::before').content === JSON.stringify(th.textContent.trim()) ? '' : getComputedStyle(td, '::before').content })()`); got != "" {
						t.Errorf("as %s on a phone the first cell of a hold is labelled %s, want its column heading", role, got)
					}
				case "seat-map":
					// The seat's panel, a bottom sheet on the phone.
					b.do("open a seat's panel", chromedp.Click(chromedp.ID("seat-A-1")), chromedp.WaitVisible(chromedp.ID("panel-order")))
					check(b, "seat-panel", string(lang), a11yWidths...)
					if role.Can(access.ActCounterSale) {
						// Best N's preview: the counter's forms swapped in,
						// the seats marked, the focus on Hold.
						b.do("best 2, Enter", chromedp.Focus(chromedp.ID("best-count")), chromedp.KeyEvent("2"), chromedp.KeyEvent(kb.Enter))
						b.waitJS("the preview", `document.getElementById('best-status').textContent !== '' && document.querySelectorAll('.seat-row .picked').length === 2`)
						check(b, "counter-best", string(lang), a11yWidths...)
					}
					if at := evalIn[string](b, "the sheet", `(() => { scrollTo(0, 0); const r = document.getElementById('seat-panel').getBoundingClientRect();
						return Math.abs(r.bottom - innerHeight) < 1 && r.top > innerHeight / 3 ? '' : JSON.stringify(r) })()`); at != "" {
						t.Errorf("as %s on a phone the seat panel is at %s, want a sheet at the bottom of the %d px screen", role, at, a11yWidths[1].height)
					}
				}
			}
		}
	}
	// Without script the menu button stays hidden, the menu shows and the
	// tables scroll inside themselves: still nothing wider than the phone.
	b := bb.tab("no script", access.RoleAdmin)
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("turn script off: %v", err)
	}
	for _, p := range []string{"/holds", "/audit"} {
		b.do("open "+p+" without script", chromedp.EmulateViewport(a11yWidths[1].width, a11yWidths[1].height),
			chromedp.Navigate(bb.url+web.URL(p)), chromedp.WaitVisible(chromedp.CSS("header nav a")))
		if problem := evalIn[string](b, "layout without script", layoutCheck); problem != "" {
			t.Errorf("%s without script on a phone: %s", p, problem)
		}
		if screens {
			b.screenshot("a11y-noscript" + strings.ReplaceAll(p, "/", "-") + "-390")
		}
	}
	t.Logf("%d page layouts checked in %s", visits, time.Since(started).Round(time.Millisecond))
}

// headerCheck answers what is wrong with the desk header, or "": the menu
// must not be folded, the header no taller than maxHeight, the nav on one
// line if oneLine, every nav link inside the nav, the nav inside the
// header, and the brand, search and account items inside the header, the
// viewport, clear of each other and above the nav.
const headerCheck = `((oneLine, maxHeight) => {
  const out = [], header = document.querySelector('header.top'), nav = header.querySelector('nav');
  const hr = header.getBoundingClientRect(), nr = nav.getBoundingClientRect();
  const inside = (r, o) => r.left >= o.left - 0.5 && r.right <= o.right + 0.5 && r.top >= o.top - 0.5 && r.bottom <= o.bottom + 0.5;
  const name = el => el.id || el.className || el.textContent.trim();
  if (document.getElementById('menu-toggle').getBoundingClientRect().width > 0) out.push('the menu is folded');
  if (hr.height > maxHeight) out.push('the header is ' + hr.height + ' px tall');
  const links = [...nav.querySelectorAll('a')];
  const lines = new Set(links.map(a => Math.round(a.getBoundingClientRect().top))).size;
  if (oneLine && lines !== 1) out.push('the nav takes ' + lines + ' lines');
  for (const a of links) if (!inside(a.getBoundingClientRect(), nr)) out.push('nav link ' + name(a) + ' overflows the nav');
  if (!inside(nr, hr) || nr.right > innerWidth) out.push('the nav overflows the header');
  const items = [...header.querySelectorAll('.brand, #header-search, .who > *')];
  const rs = items.map(el => el.getBoundingClientRect());
  items.forEach((el, i) => {
    if (!inside(rs[i], hr) || rs[i].left < 0 || rs[i].right > innerWidth) out.push(name(el) + ' is outside the header (' + rs[i].left + '…' + rs[i].right + ')');
    if (rs[i].bottom > nr.top + 0.5) out.push(name(el) + ' runs into the nav');
    for (let j = i + 1; j < items.length; j++) {
      const a = rs[i], b = rs[j];
      if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) out.push(name(el) + ' overlaps ' + name(items[j]));
    }
  });
  return out.join('; ');
})`

// TestHeaderNavInBrowser: on desk screens from 901 px (where the menu
// stops folding) to 1280 px, the fullest header (an admin's) in English
// and in Chinese keeps the nav on a line of its own under the brand, the
// search and the account links, none of them overflowing or overlapping,
// the nav on one line from 1024 px, and the header at most 96 px tall.
// With SEATFLOW_SCREENSHOTS set each is saved (header-<lang>-<width>.png).
func TestHeaderNavInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	admin := bb.tab("admin", access.RoleAdmin)
	for _, lang := range []web.Lang{web.LangEN, web.LangZH} {
		admin.do("dashboard in "+string(lang), chromedp.Navigate(bb.url+web.LangURL(lang, web.URL("/"))), chromedp.WaitVisible(chromedp.ID("stat-pending")))
		for _, w := range []a11yWidth{{"901", 901, 700}, {"1024", 1024, 768}, {"1280", 1280, 800}} {
			admin.do("viewport "+w.name, chromedp.EmulateViewport(w.width, w.height))
			if problem := evalIn[string](admin, "the header", fmt.Sprintf("%s(%t, 96)", headerCheck, w.width >= 1024)); problem != "" {
				t.Errorf("header in %s at %s px: %s", lang, w.name, problem)
			}
			viewportShot(admin, "header-"+string(lang)+"-"+w.name)
		}
	}
}
