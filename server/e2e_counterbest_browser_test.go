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

// TestCounterBestInBrowser: at the counter the clerk types 3 in best N and
// presses Enter (the keyboard only): the three best seats together are
// marked on the map before anything is held and the focus waits on Hold;
// Enter holds exactly them, and cash is taken from the keyboard too. A
// manager then tries a focal point at the back of the plan on the rules
// page (the heat map redraws, nothing stored) and saves it.
func TestCounterBestInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	show := bb.a.show.ID // 3×4: A-1 … C-4, the stage at the front
	clerk := bb.tab("clerk", access.RoleBoxOffice)
	openSeatMap(clerk, bb.url, show)
	clerk.do("best 3, Enter", chromedp.Focus(chromedp.ID("best-count")), chromedp.KeyEvent("3"), chromedp.KeyEvent(kb.Enter))
	// The marks are drawn once htmx has settled the swap (console.js).
	clerk.waitJS("the preview", `document.getElementById('best-status').textContent.includes('A-1, A-2, A-3') &&
		document.querySelectorAll('.seat-row .picked').length > 0`)
	marked := evalIn[string](clerk, "the seats marked", `[...document.querySelectorAll('.seat-row .picked[aria-pressed="true"]')].map(b => b.id).join(' ')`)
	if marked != "seat-A-1 seat-A-2 seat-A-3" {
		t.Fatalf("the map marks %q, want A-1 … A-3", marked)
	}
	if holds, err := bb.a.app.engine.SeatMap(t.Context(), show); err != nil {
		t.Fatal(err)
	} else {
		for _, s := range holds {
			if s.State != core.SeatAvailable {
				t.Fatalf("the preview took seat %s (%v)", s.SeatID, s.State)
			}
		}
	}
	if got := evalIn[string](clerk, "focus", `document.activeElement.id`); got != "counter-hold" {
		t.Fatalf("after the preview the focus is on %q, want the Hold button", got)
	}
	clerk.screenshot("counterbest-01-preview")
	clerk.do("Enter holds", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.ID("pay-form")))
	no := clerk.text("#order-no")
	clerk.do("cash, Enter", chromedp.Focus(chromedp.ID("pay-reference")), chromedp.KeyEvent("till 2"), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.ID("ticket-links")))
	o, err := bb.a.app.DB.Order(t.Context(), no)
	if err != nil {
		t.Fatal(err)
	}
	pays, err := bb.a.app.DB.OrderPayments(t.Context(), no)
	if err != nil || o.Status != core.StatusPaid || strings.Join(o.SeatIDs, ",") != "A-1,A-2,A-3" || len(pays) != 1 || pays[0].Tender != core.TenderCash {
		t.Fatalf("order %+v, payments %+v (%v)", o, pays, err)
	}
	// The queue at the window: two by card, one button, the paid order.
	openSeatMap(clerk, bb.url, show)
	clerk.do("quick sale of 2 by card", chromedp.SendKeys(chromedp.ID("best-count"), "2"), chromedp.Click(chromedp.ID("quick-card")),
		chromedp.WaitVisible(chromedp.ID("ticket-links")))
	no = clerk.text("#order-no")
	o, err = bb.a.app.DB.Order(t.Context(), no)
	if err != nil {
		t.Fatal(err)
	}
	pays, err = bb.a.app.DB.OrderPayments(t.Context(), no)
	if err != nil || o.Status != core.StatusPaid || len(o.SeatIDs) != 2 || len(pays) != 1 || pays[0].Tender != core.TenderCard {
		t.Fatalf("quick sale: order %+v, payments %+v (%v)", o, pays, err)
	}

	mgr := bb.tab("manager", access.RoleManager)
	mgr.do("open the rules from the seat map", chromedp.Navigate(fmt.Sprintf("%s/console/shows/%d", bb.url, show)),
		chromedp.Click(chromedp.ID("best-rules-link")), chromedp.WaitVisible(chromedp.ID("best-heat")))
	heat := `[...document.querySelectorAll('#best-heat .heat-map .heat')].filter(s => s.getBoundingClientRect().width > 0 && getComputedStyle(s).backgroundColor !== 'rgba(0, 0, 0, 0)').length`
	if n := evalIn[int](mgr, "the heat map's seats", heat); n != 12 {
		t.Fatalf("the heat map draws %d coloured seats, want 12", n)
	}
	best := func() string {
		return evalIn[string](mgr, "the best seat", `document.querySelector('#heat-best li').textContent`)
	}
	if got := best(); got != "A-2 · rank 1" {
		t.Errorf("best seat by the stage centre %q", got)
	}
	mgr.do("try the back right corner",
		chromedp.Click(chromedp.ID("focal-point")),
		chromedp.SendKeys(chromedp.ID("focal-x"), "4"), chromedp.SendKeys(chromedp.ID("focal-y"), "3"),
		chromedp.Click(chromedp.ID("best-rules-preview")))
	mgr.waitJS("the heat map redrawn", `document.querySelector('#heat-best li').textContent === 'C-4 · rank 1'`)
	if s, _ := bb.a.app.DB.Show(t.Context(), show); s.Best.FocalSet {
		t.Fatalf("a preview stored %+v", s.Best)
	}
	mgr.screenshot("counterbest-02-heatmap")
	mgr.do("save", chromedp.Click(chromedp.ID("best-rules-save")))
	mgr.waitJS("saved", `location.search.includes('best_rules_saved') && document.readyState === 'complete'`)
	if s, _ := bb.a.app.DB.Show(t.Context(), show); s.Best != (core.BestRules{FocalSet: true, FocalX: 4, FocalY: 3}) {
		t.Fatalf("saved %+v", s.Best)
	}
	if got := best(); got != "C-4 · rank 1" {
		t.Errorf("after the save the best seat is %q", got)
	}
}
