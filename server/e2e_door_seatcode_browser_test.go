package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"seatflow/core"
	"seatflow/core/access"
)

// TestDoorOfflineSeatCodeInBrowser: offline, the gate's list decides a
// seat's own code: it admits that seat only, refuses it a second time,
// and the order's code then admits the rest; back online, the scans reach
// the server as admissions of those seats, no double entry.
func TestDoorOfflineSeatCodeInBrowser(t *testing.T) {
	bb := startBoxOfficeBrowser(t)
	show := bb.createGridShow("Seat Code Door", 1, 3)
	no, code := bb.placeOn(show, 1, core.Customer{}, "A-1", "A-2", "A-3")
	bb.payOrder(no)
	tickets, err := bb.a.app.DB.SeatTickets(t.Context(), no)
	if err != nil || len(tickets) != 3 {
		t.Fatalf("seat tickets %+v %v", tickets, err)
	}
	gate := bb.tab("north", access.RoleDoor)
	gate.do("download the list",
		chromedp.Navigate(bb.url+"/console/door"),
		chromedp.WaitVisible(chromedp.ID("door-offline-download")),
		chromedp.SetValue(chromedp.ID("door-offline-show"), fmt.Sprint(show)),
		chromedp.SendKeys(chromedp.ID("door-gate"), "north"),
		chromedp.Click(chromedp.ID("door-offline-download")),
	)
	gate.waitJS("the list kept", `(JSON.parse(localStorage.getItem("seatflow.door")) || {}).list?.tickets[0]?.seat_codes?.length === 3`)
	cutConnection(t, gate, true)
	for i, step := range []struct{ code, class, seats string }{
		{strings.ToLower(tickets[1].Code), "ok", "A-2"},
		{tickets[1].Code, "refused", "A-2"},
		{code, "ok", "A-1, A-3"},
	} {
		// The last answer goes first, so the wait below sees this scan's.
		evalIn[bool](gate, "clear the answer", `document.getElementById("door-answer").replaceChildren() === undefined`)
		gate.do("scan offline", chromedp.SendKeys(chromedp.ID("door-code"), step.code+"\n"))
		gate.waitJS("the offline answer", `document.querySelector("#door-result.`+step.class+`") !== null`)
		if got := gate.text("#door-result"); !strings.Contains(got, step.seats) {
			t.Errorf("scan %d (%s): answer %q, want seats %s", i, step.code, got, step.seats)
		}
	}
	gate.waitJS("two scans queued", `JSON.parse(localStorage.getItem("seatflow.door")).queue.length === 2`)
	cutConnection(t, gate, false)
	gate.waitJS("every scan sent", `JSON.parse(localStorage.getItem("seatflow.door")).queue.length === 0`)
	if n := bb.a.count("order_seat WHERE checked_in_at <> 0 AND checkin_gate = 'north'"); n != 3 {
		t.Errorf("%d seats admitted at north, want 3", n)
	}
	if n := bb.a.count("discrepancy"); n != 0 {
		t.Errorf("%d cases, want none", n)
	}
}
