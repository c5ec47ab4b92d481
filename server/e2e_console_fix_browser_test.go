package server

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"seatflow/core"
	"seatflow/core/access"
)

// pdfPages reads the MediaBox of every page of a PDF as Chromium writes
// it (page objects in the clear), in points.
func pdfPages(t *testing.T, pdf []byte) [][2]float64 {
	t.Helper()
	var pages [][2]float64
	for _, m := range regexp.MustCompile(`/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]`).FindAllSubmatch(pdf, -1) {
		var v [4]float64
		for i := range v {
			f, err := strconv.ParseFloat(string(m[i+1]), 64)
			if err != nil {
				t.Fatalf("MediaBox %s: %v", m[0], err)
			}
			v[i] = f
		}
		pages = append(pages, [2]float64{v[2] - v[0], v[3] - v[1]})
	}
	return pages
}

// TestTicketPrintInBrowser prints a paid order's tickets to PDF in
// Chromium as a print dialog does (the page size the CSS asks for) and
// reads the paper from the PDF: the A6 card on one page of 105 × 148 mm,
// the receipt 80 mm wide. Chromium prints a page sized "A6" by name on
// Letter.
func TestTicketPrintInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	o := bb.a.place(82, "B-1", "B-2")
	no := o["order_no"].(string)
	if rec := bb.a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-PRINT","amount_cents":%v}`, no, o["amount_cents"])); rec.Code != 200 {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	clerk := bb.tab("clerk", access.RoleBoxOffice)
	const mm = 72 / 25.4 // points
	for _, tc := range []struct {
		format        string
		width, height float64 // mm; height 0: any
		pages         int     // 0: any
	}{
		{"a6", 105, 148, 3}, // the order's ticket and one card per seat (B-1, B-2), each on its own page
		{"receipt", 80, 0, 0},
	} {
		clerk.do("open the "+tc.format+" ticket",
			chromedp.Navigate(fmt.Sprintf("%s/console/orders/%s/ticket?format=%s", bb.url, no, tc.format)),
			chromedp.WaitVisible(chromedp.ID("ticket-qr")))
		pdf, err := chromedp.Run(clerk.ctx, chromedp.PrintToPDF(chromedp.PDFPreferCSSPageSize()))
		if err != nil {
			t.Fatalf("print the %s ticket: %v", tc.format, err)
		}
		pages := pdfPages(t, pdf)
		if len(pages) == 0 || tc.pages != 0 && len(pages) != tc.pages {
			t.Fatalf("%s ticket: %d pages, want %d", tc.format, len(pages), tc.pages)
		}
		t.Logf("%s ticket: %d page(s), the first %.1f × %.1f pt (%.1f × %.1f mm)", tc.format, len(pages),
			pages[0][0], pages[0][1], pages[0][0]/mm, pages[0][1]/mm)
		for i, pg := range pages {
			w, h := pg[0], pg[1]
			if math.Abs(w-tc.width*mm) > 1 || tc.height != 0 && math.Abs(h-tc.height*mm) > 1 {
				t.Errorf("%s ticket's page %d prints on %.1f × %.1f mm, want %.0f × %.0f", tc.format, i+1, w/mm, h/mm, tc.width, tc.height)
			}
		}
	}
}

// TestHoldControlsInBrowser: on a 390×844 phone, a held order's page keeps
// "Take payment" and the extend buttons apart (16 px or more between their
// boxes, so a mis-tap does not extend a hold instead of paying), the extend
// buttons below their own heading and not styled as the primary action.
func TestHoldControlsInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	o, err := core.NewCounter(bb.a.app.engine, bb.a.app.DB).Hold(t.Context(), core.CounterHold{ShowID: bb.a.show.ID, SeatIDs: []string{"C-1"}})
	if err != nil {
		t.Fatal(err)
	}
	no := o.OrderNo
	clerk := bb.tab("clerk", access.RoleBoxOffice)
	clerk.do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch))
	clerk.do("open the hold",
		chromedp.Navigate(fmt.Sprintf("%s/console/orders/%s", bb.url, no)),
		chromedp.WaitVisible(chromedp.ID("take-payment")))
	const measure = `(() => {
		const pay = document.getElementById('take-payment'), payBox = pay.getBoundingClientRect();
		const heading = document.getElementById('extend-title').getBoundingClientRect();
		const bg = e => getComputedStyle(e).backgroundColor;
		let gap = Infinity, primary = 0, above = 0;
		for (const b of document.querySelectorAll('#quick-extend button, #extend-button')) {
			const r = b.getBoundingClientRect();
			const dx = Math.max(0, r.left - payBox.right, payBox.left - r.right);
			const dy = Math.max(0, r.top - payBox.bottom, payBox.top - r.bottom);
			gap = Math.min(gap, Math.hypot(dx, dy));
			if (bg(b) === bg(pay)) primary++;
			if (r.top < heading.bottom) above++;
		}
		return {gap, primary, above};
	})()`
	type result struct {
		Gap            float64
		Primary, Above int
	}
	got := evalIn[result](clerk, "the hold's controls", measure)
	viewportShot(clerk, "hold-controls-phone")
	t.Logf("390×844: %.0f px between Take payment and the nearest extend button", got.Gap)
	if got.Gap < 16 {
		t.Errorf("an extend button is %.1f px from Take payment, want 16 or more", got.Gap)
	}
	if got.Primary != 0 {
		t.Errorf("%d extend buttons look like Take payment (the primary action)", got.Primary)
	}
	if got.Above != 0 {
		t.Errorf("%d extend buttons sit above their heading", got.Above)
	}
}

// TestStaffPageLayoutInBrowser: at 1440×900 the staff table takes 60 % or
// more of the page's main column and no button of the table overlaps the
// "Add an account" card; adding an account asks for no password and shows
// its one-time set-password link.
func TestStaffPageLayoutInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	admin := bb.tab("admin", access.RoleAdmin)
	admin.do("desk", chromedp.EmulateViewport(1440, 900))
	admin.do("open the staff page",
		chromedp.Navigate(bb.url+"/console/staff"),
		chromedp.WaitVisible(chromedp.ID("staff")))
	const measure = `(() => {
		const main = document.querySelector('main').getBoundingClientRect();
		const table = document.getElementById('staff').getBoundingClientRect();
		const card = document.getElementById('staff-add-card').getBoundingClientRect();
		let overlaps = 0;
		for (const b of document.querySelectorAll('#staff button, #staff select')) {
			const r = b.getBoundingClientRect();
			if (r.right > card.left && r.left < card.right && r.bottom > card.top && r.top < card.bottom) overlaps++;
		}
		return {ratio: table.width / main.width, overlaps, password: document.querySelectorAll('#staff-add input[type=password]').length};
	})()`
	type layout struct {
		Ratio              float64
		Overlaps, Password int
	}
	got := evalIn[layout](admin, "the staff page", measure)
	viewportShot(admin, "staff-1440")
	t.Logf("1440×900: the staff table is %.0f %% of main", got.Ratio*100)
	if got.Ratio < 0.6 {
		t.Errorf("the staff table is %.0f %% of main, want 60 %% or more", got.Ratio*100)
	}
	if got.Overlaps != 0 {
		t.Errorf("%d controls of the table overlap the Add an account card", got.Overlaps)
	}
	if got.Password != 0 {
		t.Errorf("the add form asks for a password")
	}
	admin.do("add an account",
		chromedp.SendKeys(chromedp.ID("new-username"), "new-clerk"),
		chromedp.Click(chromedp.CSS("#staff-add button[type=submit]")),
		chromedp.WaitVisible(chromedp.ID("reset-link")))
	if link := evalIn[string](admin, "the link", `document.querySelector('#reset-link input').value`); !regexp.MustCompile(`/console/reset/[A-Za-z0-9_-]+$`).MatchString(link) {
		t.Errorf("the new account's link is %q", link)
	}
}
