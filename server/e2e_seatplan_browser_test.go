package server

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"seatflow/core"
	"seatflow/core/access"
)

// createCurvedShow sets up, through the API, a plan drawn from x/y only:
// 12 rows curved around the stage, each two seats longer than the one in
// front (16 … 38), seats about 100 units apart along the row and rows 110
// apart, in one section.
func (bb *boxOfficeBrowser) createCurvedShow(name string) int64 {
	bb.t.Helper()
	var seats []string
	for r := range 12 {
		n := 16 + 2*r
		radius := 1000 + 110*float64(r)
		for i := range n {
			a := (float64(i) - float64(n-1)/2) * 100 / radius
			seats = append(seats, fmt.Sprintf(`{"section":"Parterre","row":%q,"number":%d,"category":"STD","x":%d,"y":%d}`,
				core.RowName(r+1), i+1, int(math.Round(5000+radius*math.Sin(a))), int(math.Round(radius*math.Cos(a)-500))))
		}
	}
	body := fmt.Sprintf(`{"name":%q,"venue":"Amphitheatre","starts_at":%q,"currency":"EUR",
		"price_categories":[{"code":"STD","name":"Standard","price_cents":2500}],
		"seats":[%s]}`, name, time.Now().Add(72*time.Hour).UTC().Format(time.RFC3339), strings.Join(seats, ","))
	return bb.postShow(name, body)
}

// fitProblem answers "" when the map's box does not scroll sideways and
// the leftmost and rightmost seats of the widest row (the one of most
// seats) are inside the box and on top at their centres; the page is
// scrolled to each seat first, the map is not. A run of seats is drawn
// only once on screen (content-visibility: auto, decided when the
// browser next renders), so the seat is hit-tested two frames after the
// scroll, not in the same task, where a loaded machine still finds the
// run undrawn and the run itself on top.
const fitProblem = `(async () => {
	const m = document.getElementById('seat-scroll');
	if (m.scrollWidth > m.clientWidth) return 'the map scrolls sideways: ' + m.scrollWidth + ' px in a ' + m.clientWidth + ' px box';
	let widest = null;
	for (const row of document.querySelectorAll('#seat-grid .seat-row')) {
		if (!widest || row.querySelectorAll('button').length > widest.querySelectorAll('button').length) widest = row;
	}
	const seats = [...widest.querySelectorAll('button')];
	const x = b => b.getBoundingClientRect().left;
	const ends = [seats.reduce((a, b) => x(b) < x(a) ? b : a), seats.reduce((a, b) => x(b) > x(a) ? b : a)];
	const bad = [];
	for (const s of ends) {
		const q = s.getBoundingClientRect();
		window.scrollBy(0, q.top + q.height / 2 - innerHeight / 2);
		await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
		const r = s.getBoundingClientRect(), box = m.getBoundingClientRect();
		const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
		if (!(r.width > 0 && r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom && top === s)) {
			bad.push(s.id + ' at ' + JSON.stringify(r) + ' in box ' + JSON.stringify(box) + ', on top ' + (top && (top.id || top.className)));
		}
	}
	return bad.join('; ');
})()`

// foundProblem answers "" when seat id is inside the map's box, inside
// the window and on top at its centre.
const foundProblem = `(id => {
	const s = document.getElementById(id), r = s.getBoundingClientRect(), box = document.getElementById('seat-scroll').getBoundingClientRect();
	const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
	return r.width > 0 && r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom &&
		r.right <= innerWidth && r.bottom <= innerHeight && top === s ? '' :
		id + ' at ' + JSON.stringify(r) + ' in box ' + JSON.stringify(box) + ', on top ' + (top && (top.id || top.className));
})`

// TestSeatPlanFitInBrowser (issue 31): at 1440×900 and on a 390×844
// phone, Fit shows the whole of a 100×200 grid and of a plan of curved
// rows drawn from x/y, with no sideways scroll in the map's box, the
// first and last seat of the widest row visible and clickable; Find
// CV-150 on the 20,000-seat map puts it inside the box and says where
// it is. The 20,000-seat map's first paint is printed against 0.5 s.
func TestSeatPlanFitInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	grid := bb.createGridShow("Arena 20k", 100, 200)
	curved := bb.createCurvedShow("Amphitheatre")
	ops := bb.tab("ops", access.RoleOps)
	if _, err := chromedp.Call(ops.ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: gridTimingScript}); err != nil {
		t.Fatalf("timing script: %v", err)
	}
	for _, vp := range []struct {
		name   string
		w, h   int64
		mobile bool
	}{{"desktop", 1440, 900, false}, {"phone", 390, 844, true}} {
		opts := []chromedp.EmulateViewportOption{}
		if vp.mobile {
			opts = append(opts, chromedp.EmulateMobile)
		}
		ops.do("viewport "+vp.name, chromedp.EmulateViewport(vp.w, vp.h, opts...))
		for _, show := range []struct {
			name string
			id   int64
		}{{"100×200 grid", grid}, {"curved rows", curved}} {
			openSeatMap(ops, bb.url, show.id)
			if show.id == grid {
				ops.waitJS("the grid's first frame", `window.__gridFrameAt !== undefined`)
				paint := evalIn[float64](ops, "first paint", `window.__gridFrameAt`)
				t.Logf("%s: the 20,000-seat map drawn %.0f ms after navigation start = %.2f × the 0.5 s target", vp.name, paint, paint/500)

				ops.do("find CV-150", chromedp.SendKeys(chromedp.ID("seat-search"), "CV-150"+kb.Enter))
				if where := evalIn[string](ops, "where CV-150 is", foundProblem+`('seat-CV-150')`); where != "" {
					t.Errorf("%s: CV-150 found but not shown: %s", vp.name, where)
				}
				if id := activeID(ops); id != "seat-CV-150" {
					t.Errorf("%s: finding CV-150 focused %q", vp.name, id)
				}
				if st := ops.text("#seat-find-status"); st == "" {
					t.Errorf("%s: finding CV-150 left the status line empty", vp.name)
				} else {
					t.Logf("%s: find CV-150 says %q", vp.name, st)
				}
				viewportShot(ops, "seatplan-find-"+vp.name)
			}
			ops.do("fit", chromedp.Click(chromedp.ID("zoom-fit")),
				chromedp.Evaluate[chromedp.Void](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))`, chromedp.EvalAwaitPromise))
			if problem := evalIn[string](ops, "after Fit", fitProblem, chromedp.EvalAwaitPromise); problem != "" {
				t.Errorf("%s, %s, Fit at %s: %s", vp.name, show.name, ops.text("#zoom-level"), problem)
			}
			viewportShot(ops, "seatplan-fit-"+vp.name+"-"+fmt.Sprint(show.id))
		}
	}
}
