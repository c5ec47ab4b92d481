package server

import (
	"slices"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"seatflow/core"
	"seatflow/core/access"
)

// toneRecorder keeps the frequency of every tone a page starts, in
// window.doorTones, before the page's own scripts run.
const toneRecorder = `window.doorTones = [];
(function () {
  var start = OscillatorNode.prototype.start;
  OscillatorNode.prototype.start = function () {
    window.doorTones.push(this.frequency.value);
    return start.apply(this, arguments);
  };
})();`

// TestDoorSoundInBrowser: a gate hears its answer: one high tone when a
// ticket is admitted, two low ones when the same ticket comes again.
func TestDoorSoundInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	show := bb.createGridShow("Door Show", 2, 4)
	orderNo, code := bb.placeOn(show, 71, core.Customer{}, "A-1")
	bb.payOrder(orderNo)
	door := bb.tab("door", access.RoleDoor)
	if _, err := chromedp.Call(door.ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: toneRecorder}); err != nil {
		t.Fatal(err)
	}
	for _, scan := range []struct {
		name  string
		class string
		tones []float64
	}{
		{"first scan", "ok", []float64{880}},
		{"second scan", "refused", []float64{220, 220}},
	} {
		door.do(scan.name,
			chromedp.Navigate(bb.url+"/console/door"),
			chromedp.WaitVisible(chromedp.ID("door-code")),
			chromedp.SendKeys(chromedp.ID("door-gate"), "north"),
			chromedp.SendKeys(chromedp.ID("door-code"), code+"\n"),
			chromedp.WaitVisible("#door-result."+scan.class),
		)
		if got := evalIn[[]float64](door, "tones of the "+scan.name, "window.doorTones"); !slices.Equal(got, scan.tones) {
			t.Errorf("%s: tones %v, want %v", scan.name, got, scan.tones)
		}
	}
}
