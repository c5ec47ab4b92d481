package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"seatflow/core"
	"seatflow/core/access"
)

// TestDoorOfflineInBrowser: two gates download a show's ticket list, lose
// their connection (the browser cuts it: a scan gets no answer), scan 500
// tickets each with 20 in common, and reconnect: every scan reaches the
// server, the 20 tickets let in twice are 20 double_entry cases naming
// both gates, and the door counts every ticket once. Offline, a gate says so and how many scans
// wait; a ticket it admitted itself it refuses, without the server.
func TestDoorOfflineInBrowser(t *testing.T) {
	const perGate, common = 500, 20
	bb := startBoxOfficeBrowser(t)
	show := bb.createGridShow("Offline Door", 20, 49) // 980 = 2 × 500 − 20 seats
	codes := make([]string, 0, 2*perGate-common)
	for row := range 20 {
		for n := 1; n <= 49; n++ {
			no, code := bb.placeOn(show, int64(len(codes)+1), core.Customer{}, fmt.Sprintf("%c-%d", 'A'+row, n))
			bb.payOrder(no)
			codes = append(codes, code)
		}
	}
	gates := []struct {
		name  string
		codes []string
		tab   tab
	}{
		{name: "north", codes: codes[:perGate]},
		{name: "south", codes: codes[perGate-common:]},
	}
	for i := range gates {
		g := &gates[i]
		g.tab = bb.tab(g.name, access.RoleDoor)
		g.tab.do("download the list",
			chromedp.Navigate(bb.url+"/console/door"),
			chromedp.WaitVisible(chromedp.ID("door-offline-download")),
			chromedp.SetValue(chromedp.ID("door-offline-show"), fmt.Sprint(show)),
			chromedp.SendKeys(chromedp.ID("door-gate"), g.name),
			chromedp.Click(chromedp.ID("door-offline-download")),
		)
		g.tab.waitJS("the list kept", `(JSON.parse(localStorage.getItem("seatflow.door")) || {}).list?.tickets.length === 980`)
		cutConnection(t, g.tab, true)
		// The first scan is typed, as a wedge scanner does: the server does
		// not answer, and the list decides.
		g.tab.do("scan offline", chromedp.SendKeys(chromedp.ID("door-code"), g.codes[0]+"\n"))
		g.tab.waitJS("the offline answer", `document.querySelector("#door-result.ok") !== null &&
			document.getElementById("door-offline").classList.contains("offline")`)
		if got := g.tab.text("#door-offline-status"); !strings.HasPrefix(got, "OFFLINE") {
			t.Errorf("%s: status %q, want it to say the gate is offline", g.name, got)
		}
		// The rest as fast as the page takes them.
		evalIn[bool](g.tab, "scan the rest", fmt.Sprintf(`(() => {
			const form = document.getElementById("door-form"), field = document.getElementById("door-code");
			for (const code of %s) { field.value = code; form.requestSubmit(); }
			return true;
		})()`, jsArray(g.codes[1:])))
		g.tab.waitJS("every scan queued", fmt.Sprintf(`JSON.parse(localStorage.getItem("seatflow.door")).queue.length === %d`, perGate))
		if got := g.tab.text("#door-offline-queue"); !strings.Contains(got, fmt.Sprint(perGate)) {
			t.Errorf("%s: queue line %q, want %d scans waiting", g.name, got, perGate)
		}
		g.tab.do("scan one again", chromedp.SendKeys(chromedp.ID("door-code"), g.codes[0]+"\n"))
		g.tab.waitJS("refused from the list", `document.querySelector("#door-result.refused") !== null`)
	}
	if n := bb.a.count("order_seat WHERE checked_in_at <> 0"); n != 0 {
		t.Fatalf("%d tickets admitted on the server while both gates were offline", n)
	}
	for _, g := range gates {
		cutConnection(t, g.tab, false)
	}
	for _, g := range gates {
		g.tab.waitJS("every scan sent", `JSON.parse(localStorage.getItem("seatflow.door")).queue.length === 0 &&
			!document.getElementById("door-offline").classList.contains("offline")`)
	}
	if n := bb.a.count("order_seat WHERE checked_in_at <> 0"); n != len(codes) {
		t.Errorf("%d tickets admitted, want %d: each once", n, len(codes))
	}
	if n := bb.a.count("order_seat WHERE checked_in_at <> 0 AND checkin_gate IN ('north', 'south')"); n != len(codes) {
		t.Errorf("%d tickets admitted at north or south, want %d", n, len(codes))
	}
	if n := bb.a.count("discrepancy WHERE kind = 'double_entry' AND note LIKE '%gate north%' AND note LIKE '%gate south%'"); n != common {
		t.Errorf("%d double_entry cases naming both gates, want %d", n, common)
	}
	if n := bb.a.count("discrepancy"); n != common {
		t.Errorf("%d cases in all, want %d", n, common)
	}
	c, err := bb.a.app.Checkins.Counts(t.Context(), show)
	if err != nil || c.Admitted != len(codes) || c.Expected != len(codes) {
		t.Errorf("door counts %+v (%v), want %d of %d", c, err, len(codes), len(codes))
	}
}

// cutConnection takes the tab's network down (every request fails; the
// page is not told, as when a venue's wifi stays up and the server is
// gone) or brings it back.
func cutConnection(t *testing.T, b tab, cut bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Offline: cut, DownloadThroughput: -1, UploadThroughput: -1}}}); err != nil {
		t.Fatalf("%s: network offline=%v: %v", b.name, cut, err)
	}
}

// jsArray is ss as a JavaScript array literal.
func jsArray(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ",") + "]"
}
