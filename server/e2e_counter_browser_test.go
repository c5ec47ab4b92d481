package server

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"seatflow/core"
	"seatflow/core/access"
)

// TestCounterSaleInBrowser sells three seats at the counter in Chromium:
// one of them blocked, which the public API refuses. The clerk picks them
// on the seat map (a click, a shift-click for the rest of the row, the
// keyboard), holds them, takes cash and opens the ticket; the test reads
// the ticket's QR code from a screenshot with a decoder of its own
// (gozxing, not the library that drew it) and gets the order code back.
func TestCounterSaleInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	show := bb.a.show.ID // 3×4: A-1 … C-4
	if rec := bb.a.do("POST", fmt.Sprintf("/api/v1/shows/%d/blocks", show), `{"seat_ids":["A-3"],"reason":"house"}`); rec.Code != 200 {
		t.Fatalf("block A-3: %d %s", rec.Code, rec.Body)
	}
	if rec := bb.a.do("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":81,"show_id":%d,"seat_ids":["A-3"]}`, show)); rec.Code != 409 ||
		errorCode(t, rec) != core.ErrSeatUnavailable.Code {
		t.Fatalf("public order of the blocked seat: %d %s, want 409 seat_unavailable", rec.Code, rec.Body)
	}

	clerk := bb.tab("clerk", access.RoleBoxOffice)
	clerk.do("open the seat map",
		chromedp.Navigate(fmt.Sprintf("%s/console/shows/%d", bb.url, show)),
		chromedp.WaitVisible(chromedp.ID("counter-form")))
	clerk.waitJS("the event stream", `document.getElementById('seat-live').dataset.sseState === 'open'`)
	click := func(seat string, mods ...kb.Modifier) {
		t.Helper()
		ctx, cancel := context.WithTimeout(clerk.ctx, 20*time.Second)
		defer cancel()
		nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.ID("seat-"+seat)))
		if err != nil {
			t.Fatalf("find seat %s: %v", seat, err)
		}
		clerk.do("click "+seat, chromedp.MouseClickNode(nodes[0], chromedp.ButtonModifiers(mods...)))
	}
	picked := func() string {
		t.Helper()
		return evalIn[string](clerk, "the picked seats", `document.getElementById('counter-seats').value`)
	}
	click("A-2")
	click("A-4", kb.ModifierShift) // A-2 … A-4: A-3 is blocked, the counter may sell it
	if got := picked(); got != "A-2, A-3, A-4" {
		t.Fatalf("after a click and a shift-click: %q, want A-2, A-3, A-4", got)
	}
	// The keyboard: from A-4 down to B-4, Space adds it, Space again takes it out.
	clerk.do("keyboard", chromedp.Focus(chromedp.ID("seat-A-4")), chromedp.KeyEvent(kb.ArrowDown))
	if id := evalIn[string](clerk, "focus", `document.activeElement.id`); id != "seat-B-4" {
		t.Fatalf("ArrowDown from A-4 focused %q, want seat-B-4", id)
	}
	clerk.do("Space", chromedp.KeyEvent(" "))
	if got := picked(); got != "A-2, A-3, A-4, B-4" {
		t.Fatalf("Space on B-4: %q", got)
	}
	clerk.do("Space again", chromedp.KeyEvent(" "))
	if got, marks := picked(), evalIn[int](clerk, "marks", `document.querySelectorAll('.seat-row .picked[aria-pressed="true"]').length`); got != "A-2, A-3, A-4" || marks != 3 {
		t.Fatalf("Space again: %q with %d seats marked, want 3", got, marks)
	}
	if got := clerk.text("#counter-count"); got != "3 seats picked" {
		t.Errorf("count %q", got)
	}
	clerk.screenshot("counter-01-picked")

	clerk.do("hold",
		chromedp.SendKeys(chromedp.ID("counter-name"), "Ada Lovelace"),
		chromedp.Click(chromedp.ID("counter-hold")),
		chromedp.WaitVisible(chromedp.ID("pay-form")))
	if got := clerk.text("#order-status"); got != "pending" {
		t.Fatalf("after the hold the order is %q", got)
	}
	no := clerk.text("#order-no")
	clerk.do("take cash",
		chromedp.Click(chromedp.ID("tender-cash")),
		chromedp.SendKeys(chromedp.ID("pay-reference"), "till 1"),
		chromedp.Click(chromedp.ID("take-payment")),
		chromedp.WaitVisible(chromedp.ID("ticket-links")))
	if got := clerk.text("#order-status"); got != "paid" {
		t.Fatalf("after the payment the order is %q", got)
	}
	o, err := bb.a.app.DB.Order(t.Context(), no)
	if err != nil {
		t.Fatal(err)
	}
	pays, err := bb.a.app.DB.OrderPayments(t.Context(), no)
	if err != nil || len(pays) != 1 || pays[0].Method != core.PaymentMethodCounter || pays[0].Tender != core.TenderCash ||
		pays[0].Actor != "staff:"+bb.staff[access.RoleBoxOffice] || o.Status != core.StatusPaid || o.UserID != core.BoxOfficeUserID {
		t.Fatalf("order %+v, payments %+v %v", o, pays, err)
	}
	states := bb.a.seatStates()
	for _, s := range []string{"A-2", "A-3", "A-4"} {
		if states[s] != "sold" {
			t.Errorf("seat %s is %q in the seat store, want sold", s, states[s])
		}
	}

	for _, f := range []struct {
		link    string
		widthMM float64
	}{{"ticket-a6", 105}, {"ticket-receipt", 80}} {
		clerk.do("open the ticket "+f.link,
			chromedp.Navigate(fmt.Sprintf("%s/console/orders/%s", bb.url, no)),
			chromedp.Click(chromedp.ID(f.link)),
			chromedp.WaitVisible(chromedp.ID("ticket-qr")))
		width := evalIn[float64](clerk, "ticket width", `document.getElementById('ticket').getBoundingClientRect().width`)
		if want := f.widthMM * 96 / 25.4; math.Abs(width-want) > 1 {
			t.Errorf("%s: ticket %.1f px wide, want %.1f (%.0f mm)", f.link, width, want, f.widthMM)
		}
	}
	clerk.screenshot("counter-02-ticket")
	ctx, cancel := context.WithTimeout(clerk.ctx, 20*time.Second)
	defer cancel()
	shot, err := chromedp.Run(ctx, chromedp.ScreenshotScale(chromedp.CSS("#ticket-qr svg"), 2))
	if err != nil {
		t.Fatalf("screenshot of the QR code: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		t.Fatalf("decode the ticket's QR code: %v", err)
	}
	if res.GetText() != o.Code {
		t.Fatalf("QR code says %q, want the order code %q", res.GetText(), o.Code)
	}
	if got := clerk.text("#ticket-code"); got != o.Code {
		t.Errorf("ticket code %q, want %q", got, o.Code)
	}
	// Printed, the page is the ticket alone.
	if _, err := chromedp.Call(clerk.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		t.Fatalf("emulate print media: %v", err)
	}
	if shown := evalIn[string](clerk, "tools in print", `getComputedStyle(document.querySelector('.ticket-tools')).display`); shown != "none" {
		t.Errorf("the ticket's tool bar prints (display %q)", shown)
	}
	t.Logf("counter sale %s (code %s): 3 seats, QR decoded", no, o.Code)
}

// TestCounterHelpInBrowser: the counter form's help speaks of clicks,
// shift-clicks and arrow keys on a desk screen and of taps on a 390×844
// touch phone, where the form fits the screen and a tap on a seat puts
// it in the sale, as the help says.
func TestCounterHelpInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	clerk := bb.tab("clerk", access.RoleBoxOffice)
	// help answers which help paragraphs show, and what of the form is
	// wider than the screen.
	const help = `(() => {
		const shown = id => document.getElementById(id).getBoundingClientRect().height > 0;
		const f = document.getElementById('counter-form');
		const wide = [f, ...f.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > innerWidth + 0.5).map(e => e.id || e.tagName);
		return 'mouse ' + shown('counter-help') + ', touch ' + shown('counter-help-touch') + (wide.length ? ', wider than the screen: ' + wide : '');
	})()`
	for _, vp := range []struct {
		name, want string
		w, h       int64
		opts       []chromedp.EmulateViewportOption
	}{
		{"desk", "mouse true, touch false", 1440, 900, nil},
		{"phone", "mouse false, touch true", 390, 844, []chromedp.EmulateViewportOption{chromedp.EmulateMobile, chromedp.EmulateTouch}},
	} {
		clerk.do("viewport "+vp.name, chromedp.EmulateViewport(vp.w, vp.h, vp.opts...))
		openSeatMap(clerk, bb.url, bb.a.show.ID)
		if got := evalIn[string](clerk, "the counter help", help); got != vp.want {
			t.Errorf("%s: the counter form shows %s, want %s", vp.name, got, vp.want)
		}
		clerk.do("the counter form in view", chromedp.ScrollIntoView(chromedp.ID("counter-form")))
		viewportShot(clerk, "counter-help-"+vp.name)
	}
	clerk.do("tap A-2", chromedp.Tap(chromedp.ID("seat-A-2")))
	clerk.waitJS("A-2 in the sale", `document.getElementById('counter-seats').value === 'A-2'`)
}
