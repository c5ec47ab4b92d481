package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"seatflow/core"
	"seatflow/core/access"
)

// openSeatMap loads a show's seat map in b and waits for its stream, so no
// fresh grid from the stream replaces the seats while the test uses them.
func openSeatMap(b tab, url string, showID int64) {
	b.t.Helper()
	b.do("open the seat map of show "+fmt.Sprint(showID),
		chromedp.Navigate(fmt.Sprintf("%s/console/shows/%d", url, showID)),
		chromedp.WaitVisible(chromedp.ID("seat-grid")))
	b.waitJS("the seat stream", `document.getElementById('seat-live').dataset.sseState === 'open'`)
}

// inGrid reports whether a seat of the grid has the focus.
func inGrid(b tab) bool {
	b.t.Helper()
	return evalIn[bool](b, "the focus in the grid", `document.activeElement !== null && document.activeElement.matches('#seat-grid button')`)
}

func activeID(b tab) string {
	b.t.Helper()
	return evalIn[string](b, "the focused element", `document.activeElement ? document.activeElement.id : ''`)
}

// TestSeatMapKeyboardInBrowser: from the seat map's load, a held seat is
// reached with the arrow keys and its order force-cancelled in under 15
// key presses, each counted: the find box has the focus, the grid is one
// Tab stop after the tools, Enter on a seat puts the focus on the cancel
// reason, and the confirmation's button has the focus. The order ends
// cancelled in the store. Then the grid is one Tab stop both ways and
// comes back to the seat last focused.
func TestSeatMapKeyboardInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	show := bb.a.show.ID // 3×4: A-1 … C-4
	no, _ := bb.placeOn(show, 71, core.Customer{}, "B-2")
	ops := bb.tab("ops", access.RoleOps)
	openSeatMap(ops, bb.url, show)

	presses := 0
	press := func(key, what string) {
		t.Helper()
		presses++
		ops.do(fmt.Sprintf("key %d: %s", presses, what), chromedp.KeyEvent(key))
	}
	if id := activeID(ops); id != "seat-search" {
		t.Fatalf("at load the focus is on %q, want the find box", id)
	}
	for !inGrid(ops) {
		if presses == 10 {
			t.Fatalf("10 Tab presses from the find box and no seat has the focus (at %q)", activeID(ops))
		}
		press(kb.Tab, "Tab")
	}
	if id := activeID(ops); id != "seat-A-1" {
		t.Fatalf("tabbing into the grid focused %q, want its first seat", id)
	}
	press(kb.ArrowDown, "down")
	press(kb.ArrowRight, "right")
	if id := activeID(ops); id != "seat-B-2" {
		t.Fatalf("down and right from A-1 focused %q, want seat-B-2", id)
	}
	press(kb.Enter, "choose B-2")
	ops.waitJS("the focus on the cancel reason", `document.activeElement && document.activeElement.id === 'reason'`)
	press("x", "the reason")
	press(kb.Tab, "Tab to the cancel button")
	if id := activeID(ops); id != "cancel-button" {
		t.Fatalf("Tab from the reason focused %q, want the cancel button", id)
	}
	press(kb.Enter, "cancel")
	ops.waitJS("the confirmation's button focused", `document.activeElement && document.activeElement.id === 'confirm-cancel'`)
	press(kb.Enter, "confirm")
	ops.waitJS("the order page says cancelled", `document.getElementById('confirm-form') === null &&
		document.querySelector('#order-status.status-cancelled') !== null`)
	o, err := bb.a.app.DB.Order(t.Context(), no)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != core.StatusCancelled {
		t.Fatalf("order %s is %s after the keyboard cancel, want cancelled", no, o.Status)
	}
	t.Logf("held seat B-2 force-cancelled in %d key presses", presses)
	if presses >= 15 {
		t.Errorf("the keyboard cancel took %d key presses, want under 15", presses)
	}

	// One Tab stop: Tab leaves the grid from any seat, Shift+Tab comes back
	// to that seat, and Shift+Tab again leaves it backwards.
	openSeatMap(ops, bb.url, show)
	ops.do("focus C-3", chromedp.Focus(chromedp.ID("seat-C-3")))
	ops.do("End", chromedp.KeyEvent(kb.End))
	if id := activeID(ops); id != "seat-C-4" {
		t.Fatalf("End in row C focused %q, want seat-C-4", id)
	}
	ops.do("Home", chromedp.KeyEvent(kb.Home))
	if id := activeID(ops); id != "seat-C-1" {
		t.Fatalf("Home in row C focused %q, want seat-C-1", id)
	}
	ops.do("ArrowUp", chromedp.KeyEvent(kb.ArrowUp))
	ops.do("Tab out", chromedp.KeyEvent(kb.Tab))
	if after := activeID(ops); inGrid(ops) || after == "" {
		t.Fatalf("Tab from seat B-1 focused %q, want the first thing after the grid", after)
	}
	ops.do("Shift+Tab back", chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(kb.ModifierShift)))
	if id := activeID(ops); id != "seat-B-1" {
		t.Fatalf("Shift+Tab back into the grid focused %q, want seat-B-1, the seat it was left from", id)
	}
	ops.do("Shift+Tab out", chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(kb.ModifierShift)))
	if id := activeID(ops); id != "zoom-fit" {
		t.Fatalf("Shift+Tab from the grid focused %q, want the last tool before it (zoom-fit)", id)
	}
}

// TestSeatMapFirstSeatInBrowser: seat A-1 of every show in the catalogue,
// narrow, wide and sectioned plans among them, is inside the map and on
// top at its centre, and a click on it opens its panel, on a 1440×900
// screen and on a 390×844 phone. The page may scroll down to the map; the
// map itself is not scrolled.
func TestSeatMapFirstSeatInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	bb.createGridShow("Wide hall", 2, 100)
	bb.createGridShow("Long hall", 40, 30)
	bb.createSectionedShow("Sections")
	shows, err := bb.a.app.DB.Shows(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(shows) < 4 {
		t.Fatalf("%d shows in the catalogue, want the test show and three more", len(shows))
	}
	clerk := bb.tab("clerk", access.RoleBoxOffice)
	for _, vp := range []struct {
		name   string
		w, h   int64
		mobile bool
	}{{"desktop", 1440, 900, false}, {"phone", 390, 844, true}} {
		opts := []chromedp.EmulateViewportOption{}
		if vp.mobile {
			opts = append(opts, chromedp.EmulateMobile)
		}
		clerk.do("viewport "+vp.name, chromedp.EmulateViewport(vp.w, vp.h, opts...))
		for _, s := range shows {
			openSeatMap(clerk, bb.url, s.ID)
			clerk.do("bring the map's top into the window", chromedp.Evaluate[chromedp.Void](
				`window.scrollTo(0, document.getElementById('seat-A-1').getBoundingClientRect().top + window.scrollY - innerHeight / 3)`))
			if where := evalIn[string](clerk, "where seat A-1 is", `(() => {
				const a = document.getElementById('seat-A-1'), s = a.getBoundingClientRect(), m = document.querySelector('.seat-scroll').getBoundingClientRect();
				const top = document.elementFromPoint(s.left + s.width / 2, s.top + s.height / 2);
				const ok = s.width > 0 && s.left >= m.left && s.right <= m.right && s.left >= 0 && s.right <= innerWidth &&
					s.top >= 0 && s.bottom <= innerHeight && top === a;
				return ok ? '' : 'seat ' + JSON.stringify(s) + ' map ' + JSON.stringify(m) + ' window ' + innerWidth + '×' + innerHeight + ' on top ' + (top && (top.id || top.className));
			})()`); where != "" {
				t.Errorf("%s, show %q: seat A-1 is not visible and clickable: %s", vp.name, s.Name, where)
				continue
			}
			clerk.do("click A-1", chromedp.Click(chromedp.ID("seat-A-1")))
			clerk.waitJS("the panel of A-1", `(h => h !== null && h.textContent.includes('A-1'))(document.querySelector('#seat-panel h2'))`)
		}
		viewportShot(clerk, "seatmap-first-seat-"+vp.name)
	}
}

// createSectionedShow sets up a show of two price categories in two
// sections, Stalls (rows A and B, an aisle after seat 4) and Balcony (row
// C), through the API and returns its id.
func (bb *boxOfficeBrowser) createSectionedShow(name string) int64 {
	bb.t.Helper()
	var seats []string
	for _, r := range []struct {
		row, section, cat string
		n                 int
	}{{"A", "Stalls", "STD", 8}, {"B", "Stalls", "STD", 8}, {"C", "Balcony", "VIP", 6}} {
		for n := 1; n <= r.n; n++ {
			x := n
			if r.section == "Stalls" && n > 4 {
				x = n + 2 // the aisle
			}
			seats = append(seats, fmt.Sprintf(`{"section":%q,"row":%q,"number":%d,"category":%q,"x":%d,"y":%d}`,
				r.section, r.row, n, r.cat, x, int(r.row[0]-'A'+1)))
		}
	}
	body := fmt.Sprintf(`{"name":%q,"venue":"Opera","starts_at":%q,"currency":"EUR",
		"price_categories":[{"code":"STD","name":"Standard","price_cents":2500},{"code":"VIP","name":"Balcony","price_cents":6000}],
		"seats":[%s]}`, name, time.Now().Add(72*time.Hour).UTC().Format(time.RFC3339), strings.Join(seats, ","))
	return bb.postShow(name, body)
}

// seatShape is what a seat's computed style shows besides its colours.
const seatShape = `(el => { const s = getComputedStyle(el);
	return [s.borderTopStyle, s.borderTopWidth, s.borderTopLeftRadius, s.backgroundImage].join(' | '); })`

// TestSeatMapToolsInBrowser: the seat states differ in shape or pattern,
// not only in colour, on the map and in its legend; the find box finds a
// seat however it is typed and scrolls the map to it, and finds an
// order's seats; the panel of a held seat picks out its order's seats,
// and the marks and a seat's price category outlive the stream's
// replacement buttons; sections are headings and every row has its
// label; Fit zooms a 100-column plan to the map's width, + zooms in; the
// panel stays in view while the page scrolls.
func TestSeatMapToolsInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	show := bb.a.show.ID // 3×4: A-1 … C-4
	if rec := bb.a.do("POST", fmt.Sprintf("/api/v1/shows/%d/blocks", show), `{"seat_ids":["A-4"],"reason":"house"}`); rec.Code != 200 {
		t.Fatalf("block A-4: %d %s", rec.Code, rec.Body)
	}
	held, _ := bb.placeOn(show, 72, core.Customer{}, "A-2", "A-3")
	sold, _ := bb.placeOn(show, 73, core.Customer{}, "C-1")
	bb.payOrder(sold)
	ops := bb.tab("ops", access.RoleOps)
	openSeatMap(ops, bb.url, show)
	viewportShot(ops, "seatmap-tools-01-states")

	// Greyscale: every two states differ in border, corners or pattern.
	shapes := map[string]string{}
	for state, seat := range map[string]string{"available": "B-1", "locked": "A-2", "sold": "C-1", "blocked": "A-4"} {
		got := evalIn[string](ops, "shape of "+seat, fmt.Sprintf(`(%s)(document.getElementById('seat-%s'))`, seatShape, seat))
		if !evalIn[bool](ops, "state of "+seat, fmt.Sprintf(`document.getElementById('seat-%s').classList.contains(%q)`, seat, state)) {
			t.Fatalf("seat %s is not %s", seat, state)
		}
		for other, shape := range shapes {
			if shape == got {
				t.Errorf("%s and %s seats differ only in colour: both %s", state, other, got)
			}
		}
		shapes[state] = got
		if legend := evalIn[string](ops, "legend "+state, fmt.Sprintf(`(%s)(document.querySelector('#seat-legend .seat.%s'))`, seatShape, state)); legend != got {
			t.Errorf("the legend's %s is %s, the map's %s", state, legend, got)
		}
	}
	t.Logf("seat shapes: %v", shapes)

	// The panel of a held seat picks out its order's seats, and they stay
	// picked out when the payment turns them sold through the stream.
	ops.do("click A-2", chromedp.Click(chromedp.ID("seat-A-2")))
	ops.do("highlight its order", chromedp.WaitVisible(chromedp.ID("panel-highlight")), chromedp.Click(chromedp.ID("panel-highlight")))
	picked := func() string {
		t.Helper()
		return evalIn[string](ops, "seats picked out", `[...document.querySelectorAll('#seat-grid .in-order')].map(b => b.id).join(' ')`)
	}
	if got := picked(); got != "seat-A-2 seat-A-3" {
		t.Fatalf("the order's seats picked out: %q, want seat-A-2 seat-A-3", got)
	}
	ops.do("debug", chromedp.Evaluate[chromedp.Void](`window.__ev = []; ['htmx:oobBeforeSwap','htmx:oobAfterSwap','htmx:sseMessage','htmx:afterSettle'].forEach(n => document.addEventListener(n, e => window.__ev.push(n + ' ' + (e.target.id || e.target.tagName) + ' ' + e.target.className)));
	window.addEventListener('error', e => window.__ev.push('error ' + e.message));`))
	bb.payOrder(held)
	ops.waitJS("A-2 and A-3 sold through the stream", `['A-2', 'A-3'].every(s => document.getElementById('seat-' + s).classList.contains('sold'))`)
	if got := picked(); got != "seat-A-2 seat-A-3" {
		t.Errorf("after the stream's new buttons the order's seats picked out: %q (%s)", got,
			evalIn[string](ops, "A-2", `document.getElementById('seat-A-2').outerHTML + JSON.stringify(window.__ev)`))
	}

	find := func(q string) {
		t.Helper()
		ops.do("find "+q, chromedp.Evaluate[chromedp.Void](`document.getElementById('seat-search').value = ''`), chromedp.SendKeys(chromedp.ID("seat-search"), q+kb.Enter))
	}
	find(sold)
	if got := picked(); got != "seat-C-1" {
		t.Errorf("the find box's order %s picked out %q, want seat-C-1", sold, got)
	}
	if got := ops.text("#seat-find-status"); !strings.Contains(got, sold) {
		t.Errorf("the find box says %q for order %s", got, sold)
	}
	find("Z-999")
	if got := ops.text("#seat-find-status"); !strings.Contains(got, "Z-999") || picked() != "" {
		t.Errorf("finding Z-999: %q, picked out %q", got, picked())
	}

	// A seat far to the right of a 100-column plan, typed in small
	// letters without the dash: the map scrolls to it, it has the focus
	// and is marked, and it is on top at its centre.
	wide := bb.createGridShow("Wide hall", 2, 100)
	openSeatMap(ops, bb.url, wide)
	find("b90")
	if id := activeID(ops); id != "seat-B-90" {
		t.Fatalf("finding b90 focused %q, want seat-B-90", id)
	}
	if where := evalIn[string](ops, "where B-90 is", `(() => {
		const a = document.getElementById('seat-B-90'), s = a.getBoundingClientRect(), m = document.querySelector('.seat-scroll').getBoundingClientRect();
		const top = document.elementFromPoint(s.left + s.width / 2, s.top + s.height / 2);
		return s.left >= m.left && s.right <= m.right && top === a && a.classList.contains('found') ? '' :
			'seat ' + JSON.stringify(s) + ' map ' + JSON.stringify(m) + ' on top ' + (top && top.id) + ' class ' + a.className;
	})()`); where != "" {
		t.Errorf("seat B-90 found but not shown: %s", where)
	}
	viewportShot(ops, "seatmap-tools-02-found")

	// Fit: the whole row in the map, first and last seat on top.
	ops.do("fit", chromedp.Click(chromedp.ID("zoom-fit")))
	// A run of seats scrolled into view is drawn at the next frame.
	ops.do("a frame", chromedp.Evaluate[chromedp.Void](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))`, chromedp.EvalAwaitPromise))
	if where := evalIn[string](ops, "after Fit", `(() => {
		const m = document.querySelector('.seat-scroll'), r = m.getBoundingClientRect();
		const bad = ['A-1', 'A-100'].filter(id => { const s = document.getElementById('seat-' + id).getBoundingClientRect();
			return !(s.left >= r.left && s.right <= r.right && document.elementFromPoint(s.left + s.width / 2, s.top + s.height / 2).id === 'seat-' + id); });
		return m.scrollWidth <= m.clientWidth + 1 && bad.length === 0 ? '' : 'scroll width ' + m.scrollWidth + ' of ' + m.clientWidth + ', not shown: ' + bad +
			' ' + JSON.stringify(r) + JSON.stringify(document.getElementById('seat-A-1').getBoundingClientRect());
	})()`); where != "" {
		t.Errorf("Fit leaves the 100-column row wider than the map: %s", where)
	}
	if got := ops.text("#zoom-level"); got == "100%" {
		t.Errorf("after Fit the zoom still says %s", got)
	}
	viewportShot(ops, "seatmap-tools-03-fit")
	width := func() float64 {
		t.Helper()
		return evalIn[float64](ops, "A-1's width", `document.getElementById('seat-A-1').getBoundingClientRect().width`)
	}
	fitted := width()
	ops.do("+ on a seat", chromedp.Focus(chromedp.ID("seat-A-1")), chromedp.KeyEvent("+"))
	if w := width(); w <= fitted*1.05 {
		t.Errorf("+ on a seat: A-1 %.1f px wide, fitted %.1f px", w, fitted)
	}

	// Sections are headings, every row has its label, an aisle is a gap,
	// and a seat keeps its price category when the stream replaces it.
	sections := bb.createSectionedShow("Sections")
	openSeatMap(ops, bb.url, sections)
	if got := evalIn[string](ops, "sections and rows", `[...document.querySelectorAll('#seat-grid .seat-section, #seat-grid .row-label')].map(e => e.textContent).join(' ')`); got != "Stalls A B Balcony C" {
		t.Errorf("headings and row labels %q, want Stalls A B Balcony C", got)
	}
	if n := evalIn[int](ops, "aisles", `document.querySelectorAll('#seat-grid .seat-run.gap').length`); n != 2 {
		t.Errorf("%d aisle gaps, want 2 (rows A and B)", n)
	}
	if got := evalIn[string](ops, "price legend", `document.getElementById('category-legend').textContent`); !strings.Contains(got, "Balcony · €60.00") {
		t.Errorf("price legend %q", got)
	}
	vip := func() string {
		return evalIn[string](ops, "C-2's class", `document.getElementById('seat-C-2').className`)
	}
	if got := vip(); got != "available c1" {
		t.Fatalf("balcony seat C-2 has class %q, want available c1", got)
	}
	bb.placeOn(sections, 74, core.Customer{}, "C-2")
	ops.waitJS("C-2 locked through the stream", `document.getElementById('seat-C-2').classList.contains('locked')`)
	if got := vip(); got != "locked c1" {
		t.Errorf("after the stream's new button C-2 has class %q, want locked c1", got)
	}

	// The panel stays in view with the page scrolled to its end.
	long := bb.createGridShow("Long hall", 60, 12)
	openSeatMap(ops, bb.url, long)
	ops.do("click A-1 and scroll to the end", chromedp.Click(chromedp.ID("seat-A-1")),
		chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.documentElement.scrollHeight)`))
	if where := evalIn[string](ops, "the panel", `(() => { const p = document.getElementById('seat-panel').getBoundingClientRect();
		return window.scrollY > 0 && p.top >= 0 && p.top < innerHeight / 2 ? '' : 'page scrolled ' + scrollY + ', panel ' + JSON.stringify(p); })()`); where != "" {
		t.Errorf("the seat panel scrolled out of view: %s", where)
	}
}

// TestSeatPanelCloseInBrowser: on a 390×844 touch phone a seat's panel is
// a sheet over the map with a close button in reach at its top, even
// scrolled to its end; a tap on the button lets the sheet go (the bottom
// of the screen shows the map again) and puts the focus on the seat that
// opened it. From the keyboard, Esc in the panel does the same.
func TestSeatPanelCloseInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	tall := bb.createGridShow("Tall hall", 30, 10) // taller than the phone's screen
	bb.placeOn(tall, 81, core.Customer{}, "A-1")
	ops := bb.tab("ops", access.RoleOps)
	ops.do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch))
	openSeatMap(ops, bb.url, tall)

	// sheet answers "" while the panel of A-1 is a sheet at the bottom of
	// the screen with its close button drawn inside it, on top.
	const sheet = `(() => {
		const p = document.getElementById('seat-panel'), r = p.getBoundingClientRect();
		const b = document.getElementById('panel-close');
		if (!b || !p.querySelector('h2').textContent.includes('A-1')) return 'no panel of A-1';
		const c = b.getBoundingClientRect(), hit = document.elementFromPoint(c.left + c.width / 2, c.top + c.height / 2);
		if (Math.abs(r.bottom - innerHeight) >= 1 || r.top <= innerHeight / 3) return 'panel at ' + JSON.stringify(r);
		if (c.top < r.top || c.bottom > r.bottom || c.right > r.right || !b.contains(hit)) return 'close button at ' + JSON.stringify(c) + ', on top ' + (hit && hit.outerHTML.slice(0, 60));
		return '';
	})()`
	// closed answers "" once the panel is gone from over the map and the
	// seat that opened it has the focus.
	const closed = `(() => {
		const p = document.getElementById('seat-panel'), at = document.elementFromPoint(innerWidth / 2, innerHeight - 10);
		if (document.getElementById('seat-panel-live')) return 'the seat is still in the panel';
		if (p.contains(at)) return 'the panel still covers the bottom of the screen';
		return document.activeElement && document.activeElement.id === 'seat-A-1' ? '' : 'focus on ' + (document.activeElement && document.activeElement.outerHTML.slice(0, 60));
	})()`

	ops.do("tap A-1", chromedp.Tap(chromedp.ID("seat-A-1")))
	ops.waitJS("the panel of A-1", `document.getElementById('panel-close') !== null`)
	if problem := evalIn[string](ops, "the sheet", sheet); problem != "" {
		t.Fatalf("after a tap on A-1: %s", problem)
	}
	ops.do("scroll the sheet to its end", chromedp.Evaluate[chromedp.Void](`(p => { p.scrollTop = p.scrollHeight })(document.getElementById('seat-panel'))`))
	if problem := evalIn[string](ops, "the sheet scrolled", sheet); problem != "" {
		t.Errorf("with the sheet scrolled to its end: %s", problem)
	}
	viewportShot(ops, "seat-panel-sheet-390")
	ops.do("tap close", chromedp.Tap(chromedp.ID("panel-close")))
	if problem := evalIn[string](ops, "after close", closed); problem != "" {
		t.Errorf("after a tap on the close button: %s", problem)
	}
	viewportShot(ops, "seat-panel-closed-390")

	ops.do("Enter on A-1", chromedp.Focus(chromedp.ID("seat-A-1")), chromedp.KeyEvent(kb.Enter))
	ops.waitJS("the focus on the cancel reason", `document.activeElement && document.activeElement.id === 'reason'`)
	ops.do("Escape", chromedp.KeyEvent(kb.Escape))
	if problem := evalIn[string](ops, "after Escape", closed); problem != "" {
		t.Errorf("after Esc in the panel: %s", problem)
	}
}
