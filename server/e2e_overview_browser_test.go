package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"seatflow/core"
	"seatflow/core/access"
)

// overviewFree is each overview button's text, one a line.
const overviewFree = `[...document.querySelectorAll('#overview-areas button')].map(b => b.textContent).join('\n')`

// areaSeatShown answers "" when a seat of rows [from, to) (0-based, in the
// grid's order) is inside the map's box and the window and on top at its
// centre within 20 frames: a run of seats scrolled into view is drawn
// (content-visibility: auto) a frame or more after it is found there,
// and until then the run is on top.
const areaSeatShown = `((from, to) => new Promise(done => { let frames = 0; const look = () => {
	const box = document.getElementById('seat-scroll').getBoundingClientRect();
	const rows = [...document.querySelectorAll('#seat-grid .seat-row')].slice(from, to);
	for (const s of rows.flatMap(r => [...r.querySelectorAll('button')])) {
		const r = s.getBoundingClientRect();
		if (r.width > 0 && r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom &&
			r.top >= 0 && r.bottom <= innerHeight && document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === s) {
			done('');
			return;
		}
	}
	const s = rows[0].querySelectorAll('button')[24], r = s.getBoundingClientRect(), top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
	if (++frames < 20) {
		requestAnimationFrame(look);
		return;
	}
	done('no seat of rows ' + from + '–' + to + ' shown in the box ' + JSON.stringify(box) + ', scrolled to ' + document.getElementById('seat-scroll').scrollTop +
		'; ' + s.id + ' at ' + JSON.stringify(r) + ', on top ' + (top && (top.id || top.className)));
}; requestAnimationFrame(look); }))`

// viewAt is the overview's view rectangle's top and bottom, from the
// small plan's top.
const viewAt = `new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => {
	const v = document.getElementById('overview-view').getBoundingClientRect(), p = document.getElementById('overview-plan').getBoundingClientRect();
	done([v.top - p.top, v.bottom - p.top]);
})))`

// TestSeatMapOverviewInBrowser (issue 31): a 40-row hall's overview has
// a button per 10 rows naming them and their free seats; holds made
// through the API change the counts live, also of an area out of view,
// and the counts match the seats' buttons; a click on an area (or Enter
// on it) brings a seat of it into the map's box; the view rectangle
// follows the map's scroll. Sections name their areas, and a one-area
// plan has no overview.
func TestSeatMapOverviewInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	show := bb.createGridShow("Overview hall", 40, 50)
	ops := bb.tab("ops", access.RoleOps)
	ops.do("desk", chromedp.EmulateViewport(1440, 900))
	openSeatMap(ops, bb.url, show)
	ops.waitJS("the overview", `!document.getElementById('seat-overview').hidden`)
	want := "Rows A–J 500 of 500 free\nRows K–T 500 of 500 free\nRows U–AD 500 of 500 free\nRows AE–AN 500 of 500 free"
	if got := evalIn[string](ops, "the areas", overviewFree); got != want {
		t.Fatalf("overview areas:\n%s\nwant\n%s", got, want)
	}

	// Live: two seats held in the first area, one in the last, far out of
	// the map's view.
	bb.placeOn(show, 81, core.Customer{}, "A-1", "A-2")
	far, _ := bb.placeOn(show, 82, core.Customer{}, core.RowName(40)+"-50")
	ops.waitJS("the counts after the holds", fmt.Sprintf(`(%s).split('\n')[0] === 'Rows A–J 498 of 500 free' && (%s).split('\n')[3] === 'Rows AE–AN 499 of 500 free'`, overviewFree, overviewFree))
	bb.payOrder(far)
	ops.waitJS("every seat's button", `document.querySelectorAll('#seat-grid .seat-row button').length === 2000`)
	ops.waitJS("AN-50 sold", `document.getElementById('seat-AN-50').classList.contains('sold')`)
	if got := evalIn[string](ops, "counts against the buttons", `(() => {
		const rows = [...document.querySelectorAll('#seat-grid .seat-row')], texts = [...document.querySelectorAll('#overview-areas button')].map(b => b.textContent);
		const bad = [];
		for (let a = 0; a < 4; a++) {
			const free = rows.slice(a * 10, a * 10 + 10).reduce((n, r) => n + r.querySelectorAll('button.available').length, 0);
			if (!texts[a].includes(' ' + free + ' of 500 free')) bad.push(texts[a] + ' but ' + free + ' available buttons');
		}
		return bad.join('; ');
	})()`); got != "" {
		t.Errorf("overview against the map: %s", got)
	}

	// Clicking the last area brings its seats into the box, and the view
	// rectangle down to it; scrolling the map back up moves it back.
	before := evalIn[[]float64](ops, "the view", viewAt, chromedp.EvalAwaitPromise)
	ops.do("click the last area", chromedp.Click(chromedp.ID("overview-area-4")))
	if got := evalIn[string](ops, "the last area shown", areaSeatShown+`(30, 40)`, chromedp.EvalAwaitPromise); got != "" {
		t.Errorf("after a click on the last area: %s", got)
	}
	down := evalIn[[]float64](ops, "the view", viewAt, chromedp.EvalAwaitPromise)
	planH := evalIn[float64](ops, "the small plan's height", `document.getElementById('overview-plan').getBoundingClientRect().height`)
	if down[0] <= before[0] || down[1] < planH*3/4 {
		t.Errorf("the view rectangle at %.0f–%.0f px of the %.0f px plan after the last area was chosen, %.0f–%.0f px before", down[0], down[1], planH, before[0], before[1])
	}
	ops.do("scroll the map up", chromedp.Evaluate[chromedp.Void](`document.getElementById('seat-scroll').scrollTop = 0`))
	if up := evalIn[[]float64](ops, "the view", viewAt, chromedp.EvalAwaitPromise); up[0] >= down[0] || up[0] > planH/4 {
		t.Errorf("the view rectangle at %.0f px after the map scrolled to its top, %.0f px before", up[0], down[0])
	}
	viewportShot(ops, "overview-01-last-area")

	// The keyboard: Enter on the first area brings it back.
	ops.do("Enter on the first area", chromedp.Focus(chromedp.ID("overview-area-1")), chromedp.KeyEvent(kb.Enter))
	if got := evalIn[string](ops, "the first area shown", areaSeatShown+`(0, 10)`, chromedp.EvalAwaitPromise); got != "" {
		t.Errorf("after Enter on the first area: %s", got)
	}

	// Sections name their areas; a one-area plan shows no overview.
	sections := bb.createSectionedShow("Sections")
	openSeatMap(ops, bb.url, sections)
	if got := evalIn[string](ops, "the areas", overviewFree); !strings.HasPrefix(got, "Stalls · Rows A–B ") || !strings.Contains(got, "\nBalcony · Row C ") {
		t.Errorf("sectioned overview:\n%s", got)
	}
	openSeatMap(ops, bb.url, bb.a.show.ID)
	if !evalIn[bool](ops, "the small map's overview", `document.getElementById('seat-overview').hidden`) {
		t.Error("a 3-row map shows an overview")
	}
}
