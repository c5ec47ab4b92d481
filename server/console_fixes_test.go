package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
)

// TestDiscrepancyKindsAndUnknownOrders: the queue filters by every kind,
// unknown_order and txn_conflict included; a case without an order shows
// its number as text and its amount as of unknown currency, and the order
// page of that number says no such order was ever placed.
func TestDiscrepancyKindsAndUnknownOrders(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	ops := env.login(access.RoleOps)
	late := env.place(61, "A-1")
	if _, err := env.engine.CancelAndRelease(ctx, core.CancelRequest{OrderNo: late.OrderNo, Reason: core.ReasonCustomer, Actor: "user:61"}); err != nil {
		t.Fatal(err)
	}
	env.pay(late) // paid_after_cancel
	const ghost = "SF20991231000000000000000000"
	if _, err := env.engine.HandlePayment(ctx, core.Payment{TxnID: "T-ghost", OrderNo: ghost, AmountCents: 700}); err != nil {
		t.Fatal(err)
	}
	paid := env.place(62, "B-1")
	env.pay(paid)
	other := env.place(63, "C-1")
	// The paid order's txn id for other money: refused, and recorded as a case.
	if _, err := env.engine.HandlePayment(ctx, core.Payment{TxnID: "T" + paid.OrderNo, OrderNo: other.OrderNo, AmountCents: other.AmountCents}); err == nil {
		t.Fatal("a txn id reused for other money was accepted")
	}
	cases, err := env.db.DiscrepancyCases(ctx, store.CaseQuery{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{} // kind → row id
	for _, c := range cases {
		ids[c.Kind] = fmt.Sprintf(`id="disc-%d"`, c.ID)
	}
	for _, k := range []string{core.DiscrepancyPaidAfterCancel, core.DiscrepancyUnknownOrder, core.DiscrepancyTxnConflict} {
		if ids[k] == "" {
			t.Fatalf("no %s case among %+v", k, cases)
		}
	}
	tests := []struct {
		kind   string
		status int
		want   []string // kinds listed
	}{
		{"", 200, []string{core.DiscrepancyPaidAfterCancel, core.DiscrepancyUnknownOrder, core.DiscrepancyTxnConflict}},
		{core.DiscrepancyUnknownOrder, 200, []string{core.DiscrepancyUnknownOrder}},
		{core.DiscrepancyTxnConflict, 200, []string{core.DiscrepancyTxnConflict}},
		{core.DiscrepancyPaidAfterCancel, 200, []string{core.DiscrepancyPaidAfterCancel}},
		{core.DiscrepancyPaidAfterRefund, 200, nil},
		{"no_such_kind", 400, nil},
	}
	for _, tc := range tests {
		rec := ops.do("GET", "/console/discrepancies?state=all&kind="+tc.kind, nil, nil)
		if rec.Code != tc.status {
			t.Fatalf("kind %q: status %d, want %d", tc.kind, rec.Code, tc.status)
		}
		if tc.status != 200 {
			continue
		}
		page := rec.Body.String()
		if tc.kind != "" && !strings.Contains(page, `<option value="`+tc.kind+`" selected>`) {
			t.Errorf("kind %q is not offered and selected", tc.kind)
		}
		for k, id := range ids {
			if listed, want := strings.Contains(page, id), containsString(tc.want, k); listed != want {
				t.Errorf("kind %q: %s listed %v, want %v", tc.kind, k, listed, want)
			}
		}
	}

	list := ops.do("GET", "/console/discrepancies?kind=unknown_order", nil, nil).Body.String()
	var ghostCase int64
	for _, c := range cases {
		if c.Kind == core.DiscrepancyUnknownOrder {
			ghostCase = c.ID
		}
	}
	casePage := ops.do("GET", fmt.Sprintf("/console/discrepancies/%d", ghostCase), nil, nil).Body.String()
	for name, page := range map[string]string{"list": list, "case page": casePage} {
		if strings.Contains(page, `href="/console/orders/`+ghost+`"`) {
			t.Errorf("%s links to the order that was never placed", name)
		}
		if !strings.Contains(page, ghost) || !strings.Contains(page, "7.00 (currency unknown: no such order)") {
			t.Errorf("%s lacks the number as text or the amount of unknown currency", name)
		}
	}
	if paidList := ops.do("GET", "/console/discrepancies?kind=paid_after_cancel", nil, nil).Body.String(); !strings.Contains(paidList, `href="/console/orders/`+late.OrderNo+`"`) {
		t.Error("a case with an order does not link to it")
	}

	pages := []struct {
		path, want string
	}{
		{"/console/orders/" + ghost, "No order " + ghost + " was ever placed here."},
		{"/console/orders/SF-NEVER", "No order SF-NEVER was ever placed here."},
	}
	for _, p := range pages {
		rec := ops.do("GET", p.path, nil, nil)
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), p.want) {
			t.Errorf("%s: status %d, want 404 with %q: %.300s", p.path, rec.Code, p.want, rec.Body)
		}
	}
	if page := ops.do("GET", "/console/orders/"+ghost, nil, nil).Body.String(); !strings.Contains(page, fmt.Sprintf(`href="/console/discrepancies/%d"`, ghostCase)) {
		t.Error("the no-such-order page does not link the payment's case")
	}
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestWriteOffAskerNotOffered: who asked for a write-off is not offered
// "written off" on the case (four eyes would refuse it); a second person is.
func TestWriteOffAskerNotOffered(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	ops, admin := env.login(access.RoleOps), env.login(access.RoleAdmin)
	late := env.place(71, "A-1")
	if _, err := env.engine.CancelAndRelease(ctx, core.CancelRequest{OrderNo: late.OrderNo, Reason: core.ReasonCustomer, Actor: "user:71"}); err != nil {
		t.Fatal(err)
	}
	env.pay(late)
	cases, err := env.db.DiscrepancyCases(ctx, store.CaseQuery{})
	if err != nil || len(cases) != 1 {
		t.Fatalf("cases %v %v", cases, err)
	}
	path := fmt.Sprintf("/console/discrepancies/%d", cases[0].ID)
	if rec := ops.post(path+"/move", url.Values{"to": {"write_off_requested"}, "note": {"small"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("ask for the write-off: %d", rec.Code)
	}
	const writtenOff = `<option value="written_off"`
	for _, v := range []struct {
		who     *browser
		name    string
		offered bool
	}{{ops, "the asker", false}, {admin, "a second person", true}} {
		page := v.who.do("GET", path, nil, nil).Body.String()
		if got := strings.Contains(page, writtenOff); got != v.offered {
			t.Errorf("%s offered written off: %v, want %v", v.name, got, v.offered)
		}
		if !strings.Contains(page, `<option value="open"`) {
			t.Errorf("%s is not offered sending it back", v.name)
		}
	}
}

// TestLangAliases: the language switch takes any spelling of its two
// languages; anything else leaves the cookie alone.
func TestLangAliases(t *testing.T) {
	env := newConsoleEnv(t)
	for _, tc := range []struct{ to, cookie string }{
		{"zh", "zh-CN"}, {"zh-CN", "zh-CN"}, {"zh-cn", "zh-CN"}, {"zh-Hans", "zh-CN"},
		{"en", "en"}, {"en-US", "en"}, {"fr", ""}, {"", ""},
	} {
		rec := env.browser().do("GET", "/console/lang?to="+url.QueryEscape(tc.to)+"&next=/console/login", nil, nil)
		got := ""
		for _, c := range rec.Result().Cookies() {
			if c.Name == langCookie {
				got = c.Value
			}
		}
		if rec.Code != http.StatusSeeOther || got != tc.cookie {
			t.Errorf("to=%q: status %d, cookie %q, want 303 and %q", tc.to, rec.Code, got, tc.cookie)
		}
	}
}

// TestSessionsDeviceAndEndOne: the sessions page names each session's
// browser and system, not the raw user agent, and logs out one other
// session alone; this one is not ended that way, and a session ended
// meanwhile is a message.
func TestSessionsDeviceAndEndOne(t *testing.T) {
	env := newConsoleEnv(t)
	const (
		win    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
		iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1"
	)
	login := func(ua string) *browser {
		t.Helper()
		b := env.browser()
		h := http.Header{"User-Agent": {ua}}
		form := b.do("GET", "/console/login", nil, h)
		m := hiddenCSRF.FindStringSubmatch(form.Body.String())
		if rec := b.do("POST", "/console/login", url.Values{"_csrf": {m[1]}, "username": {env.staff[access.RoleBoxOffice].Username},
			"password": {testPassword}}, h); rec.Code != http.StatusSeeOther {
			t.Fatalf("login: %d", rec.Code)
		}
		b.csrf = metaCSRF.FindStringSubmatch(b.do("GET", "/console/", nil, h).Body.String())[1]
		return b
	}
	desk, phone, tablet := login(win), login(iphone), login("Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X) Version/16.0 Mobile/15E148 Safari/604.1")
	page := desk.do("GET", "/console/sessions", nil, nil).Body.String()
	for _, want := range []string{">Chrome 120 · Windows<", ">Safari 17 · iPhone<", ">Safari 16 · iPad<"} {
		if !strings.Contains(page, want) {
			t.Errorf("sessions page lacks %q", want)
		}
	}
	if strings.Contains(page, ">"+win+"<") {
		t.Error("sessions page shows the raw user agent as the device")
	}
	keys := sessionKeyRE.FindAllStringSubmatch(page, -1)
	if len(keys) != 2 {
		t.Fatalf("end forms: %d, want one per other session (2)", len(keys))
	}
	phoneKey := ""
	for _, k := range keys {
		if strings.Contains(page[strings.Index(page, `id="session-`+k[1]+`"`):], "iPhone") &&
			!strings.Contains(strings.SplitN(page[strings.Index(page, `id="session-`+k[1]+`"`):], "</tr>", 2)[0], "iPad") {
			phoneKey = k[1]
		}
	}
	steps := []struct {
		name     string
		key      string
		status   int
		location string
	}{
		{"no key", "", 400, ""},
		{"end the phone's", phoneKey, 303, "/console/sessions?msg=session_ended"},
		{"the phone's again", phoneKey, 303, "/console/sessions?msg=session_gone"},
		{"unknown key", "0000000000000000", 303, "/console/sessions?msg=session_gone"},
	}
	for _, s := range steps {
		rec := desk.post("/console/sessions/end", url.Values{"session": {s.key}})
		if rec.Code != s.status || rec.Header().Get("Location") != s.location {
			t.Errorf("%s: %d to %q, want %d to %q", s.name, rec.Code, rec.Header().Get("Location"), s.status, s.location)
		}
	}
	for _, b := range []struct {
		name string
		b    *browser
		in   bool
	}{{"desk", desk, true}, {"phone", phone, false}, {"tablet", tablet, true}} {
		if got := b.b.loggedIn(); got != b.in {
			t.Errorf("%s logged in: %v, want %v", b.name, got, b.in)
		}
	}
	if n := env.auditCount(access.AuditSessionEnd); n != 1 {
		t.Errorf("session_end audited %d times, want 1", n)
	}
}

var sessionKeyRE = regexp.MustCompile(`name="session" value="([0-9a-f]+)"`)
