package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
)

// inboxCount reads the navigation's approvals count from a page ("" when
// the page shows none).
var inboxCountRE = regexp.MustCompile(`<span class="count" id="inbox-count">(\d+)</span>`)

func inboxCount(page string) string {
	if m := inboxCountRE.FindStringSubmatch(page); m != nil {
		return m[1]
	}
	return ""
}

// inboxRow is the inbox page's row of one request: its decision cell's text.
func inboxRow(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `<tr id="`+id+`"`)
	if i < 0 {
		return ""
	}
	row := page[i:]
	return row[:strings.Index(row, "</tr>")]
}

// TestInbox: the refund and write-off requests waiting are listed for
// those who may approve, with a count in the navigation and on the
// dashboard; a request of one's own, or of an account one made, is shown
// as waiting for someone else, never with a decision; the requester sees
// the outcome on the order page and on their dashboard.
func TestInbox(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	// An account ops-user made: four eyes count it as ops-user.
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.db.CreateStaff(ctx, access.Staff{Username: "ops-puppet", Role: access.RoleOps, CreatedAt: time.Now(),
		CreatedBy: core.ActorStaffPrefix + "ops-user"}, string(hash)); err != nil {
		t.Fatal(err)
	}
	box, ops, admin := env.login(access.RoleBoxOffice), env.login(access.RoleOps), env.login(access.RoleAdmin)
	manager := env.login(access.RoleManager)
	puppet := env.browser()
	if rec := puppet.login("ops-puppet", testPassword); rec.Code != http.StatusSeeOther {
		t.Fatalf("login as ops-puppet: %d", rec.Code)
	}

	clerkOrder := env.place(41, "A-1", "A-2") // 15000: above the threshold
	env.pay(clerkOrder)
	opsOrder := env.place(42, "B-1", "B-2")
	env.pay(opsOrder)
	for _, r := range []struct {
		who *browser
		o   core.Order
	}{{box, clerkOrder}, {ops, opsOrder}} {
		if rec := r.who.post("/console/orders/"+r.o.OrderNo+"/refund", url.Values{"reason": {"illness"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("refund request: %d", rec.Code)
		}
	}
	late := env.place(43, "C-1")
	if _, err := env.engine.CancelAndRelease(ctx, core.CancelRequest{OrderNo: late.OrderNo, Reason: core.ReasonCustomer, Actor: "user:43"}); err != nil {
		t.Fatal(err)
	}
	env.pay(late) // after the cancel: a discrepancy case
	cases, err := env.db.DiscrepancyCases(ctx, store.CaseQuery{})
	if err != nil || len(cases) != 1 {
		t.Fatalf("cases %v %v", cases, err)
	}
	caseID := fmt.Sprint(cases[0].ID)
	if rec := ops.post("/console/discrepancies/"+caseID+"/move", url.Values{"to": {"write_off_requested"}, "note": {"below the cost"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("write-off request: %d", rec.Code)
	}
	reqID := func(o core.Order) string {
		t.Helper()
		rs, err := env.db.OrderRefunds(ctx, o.OrderNo)
		if err != nil || len(rs) == 0 {
			t.Fatalf("refunds of %s: %v %v", o.OrderNo, rs, err)
		}
		return fmt.Sprint(rs[len(rs)-1].ID)
	}
	clerkRow, opsRow, caseRow := "inbox-refund-"+reqID(clerkOrder), "inbox-refund-"+reqID(opsOrder), "inbox-write_off-"+caseID
	approveClerk := `action="/console/refunds/` + reqID(clerkOrder) + `/approve"`
	approveOps := `action="/console/refunds/` + reqID(opsOrder) + `/approve"`

	viewers := []struct {
		name   string
		who    *browser
		status int
		count  string            // in the navigation; "" none
		rows   map[string]string // row id → text its decision cell must hold
		never  []string          // what the page must not offer
	}{
		{"box office has no inbox", box, http.StatusForbidden, "", nil, nil},
		{"manager has no inbox", manager, http.StatusForbidden, "", nil, nil},
		{"admin decides all three", admin, http.StatusOK, "3",
			map[string]string{clerkRow: approveClerk, opsRow: approveOps, caseRow: "/console/discrepancies/" + caseID}, nil},
		{"ops: their own two wait for someone else", ops, http.StatusOK, "1",
			map[string]string{clerkRow: approveClerk, opsRow: "You asked for this: it waits for someone else.",
				caseRow: "You asked for this: it waits for someone else."}, []string{approveOps}},
		{"an account ops made counts as ops", puppet, http.StatusOK, "3",
			map[string]string{clerkRow: approveClerk, opsRow: "One of you created the other", caseRow: "One of you created the other"},
			[]string{approveOps}},
	}
	for _, v := range viewers {
		t.Run(v.name, func(t *testing.T) {
			rec := v.who.do("GET", "/console/inbox", nil, nil)
			if rec.Code != v.status {
				t.Fatalf("inbox: status %d, want %d", rec.Code, v.status)
			}
			dash := v.who.do("GET", "/console/", nil, nil).Body.String()
			if got := inboxCount(dash); got != v.count {
				t.Errorf("navigation count %q, want %q", got, v.count)
			}
			if v.status != http.StatusOK {
				if strings.Contains(dash, `id="nav-inbox"`) {
					t.Error("navigation links to an inbox this role may not open")
				}
				return
			}
			if !strings.Contains(dash, `id="stat-inbox">`+v.count+`<`) {
				t.Errorf("dashboard lacks the count %s", v.count)
			}
			page := rec.Body.String()
			for id, want := range v.rows {
				if row := inboxRow(t, page, id); !strings.Contains(row, want) {
					t.Errorf("row %s lacks %q: %.600s", id, want, row)
				}
			}
			for _, bad := range v.never {
				if strings.Contains(page, bad) {
					t.Errorf("inbox offers %q", bad)
				}
			}
		})
	}

	// The clerk's own request: waiting on their dashboard and order page,
	// then the outcome once a second person decided.
	outcomes := []struct {
		name   string
		decide func()
		want   string
	}{
		{"waiting", func() {}, "waiting for a second person&#39;s approval"},
		{"approved from the inbox", func() {
			if rec := admin.post("/console/refunds/"+reqID(clerkOrder)+"/approve", nil); rec.Code != http.StatusSeeOther {
				t.Fatalf("approve: %d", rec.Code)
			}
		}, "refunded by admin-user at " + env.clock.Now().Local().Format("2006-01-02")},
	}
	for _, o := range outcomes {
		o.decide()
		dash := box.do("GET", "/console/", nil, nil).Body.String()
		if !strings.Contains(dash, `id="my-requests"`) || !strings.Contains(dash, o.want) {
			t.Errorf("%s: clerk's dashboard lacks %q", o.name, o.want)
		}
		if page := box.do("GET", "/console/orders/"+clerkOrder.OrderNo, nil, nil).Body.String(); !strings.Contains(page, o.want) {
			t.Errorf("%s: clerk's order page lacks %q", o.name, o.want)
		}
	}
	if got := inboxCount(ops.do("GET", "/console/", nil, nil).Body.String()); got != "" {
		t.Errorf("ops' count after the approval: %q, want none", got)
	}
	// Ops' write-off: waiting on their dashboard, then written off by admin.
	for _, o := range []struct {
		name   string
		decide func()
		want   string
	}{
		{"waiting", func() {}, "waiting for a second person&#39;s approval"},
		{"written off", func() {
			if rec := admin.post("/console/discrepancies/"+caseID+"/move", url.Values{"to": {"written_off"}, "note": {"agreed"}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("write off: %d", rec.Code)
			}
		}, "written off by admin-user at "},
	} {
		o.decide()
		dash := ops.do("GET", "/console/", nil, nil).Body.String()
		i := strings.Index(dash, `id="my-write-offs"`)
		if i < 0 || !strings.Contains(dash[i:], "Case #"+caseID) || !strings.Contains(dash[i:], o.want) {
			t.Errorf("%s: ops' dashboard lacks the write-off with %q", o.name, o.want)
		}
	}
	// Ops' own open request: the order page does not offer its approval.
	page := ops.do("GET", "/console/orders/"+opsOrder.OrderNo, nil, nil).Body.String()
	if !strings.Contains(page, `id="own-refund-request"`) || strings.Contains(page, `id="approve-refund-form"`) {
		t.Error("ops' own request's order page offers its approval")
	}
}

// TestOrdersRefundRequestedFilter: the orders page lists only the orders
// whose refund request waits, alone or with the other filters; a bad value
// is a message.
func TestOrdersRefundRequestedFilter(t *testing.T) {
	env := newConsoleEnv(t)
	box := env.login(access.RoleBoxOffice)
	waiting := env.place(51, "A-1", "A-2") // above the threshold: a request
	env.pay(waiting)
	paid := env.place(52, "B-1", "B-2")
	env.pay(paid)
	small := env.place(53, "C-1") // refunded in one step
	env.pay(small)
	for _, o := range []core.Order{waiting, small} {
		if rec := box.post("/console/orders/"+o.OrderNo+"/refund", url.Values{"reason": {"r"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("refund: %d", rec.Code)
		}
	}
	cases := []struct {
		query  string
		status int
		want   []core.Order
	}{
		{"refund=requested", 200, []core.Order{waiting}},
		{"refund=requested&status=paid", 200, []core.Order{waiting}},
		{"refund=requested&status=refunded", 200, nil},
		{"refund=requested&q=" + waiting.OrderNo[:12], 200, []core.Order{waiting}},
		{"refund=requested&show_id=" + fmt.Sprint(env.show.ID), 200, []core.Order{waiting}},
		{"status=paid", 200, []core.Order{waiting, paid}},
		{"refund=bogus", 400, nil},
	}
	all := []core.Order{waiting, paid, small}
	for _, c := range cases {
		rec := box.do("GET", "/console/orders?"+c.query, nil, nil)
		if rec.Code != c.status {
			t.Fatalf("%s: status %d, want %d", c.query, rec.Code, c.status)
		}
		for _, o := range all {
			listed := strings.Contains(rec.Body.String(), `id="order-`+o.OrderNo+`"`)
			if want := containsOrder(c.want, o); listed != want {
				t.Errorf("%s: %s listed %v, want %v", c.query, o.OrderNo, listed, want)
			}
		}
	}
	if page := box.do("GET", "/console/orders?refund=requested", nil, nil).Body.String(); !strings.Contains(page, `id="orders-refund-requested" checked`) {
		t.Error("the filter's box is not ticked on the filtered page")
	}
}

func containsOrder(os []core.Order, o core.Order) bool {
	for _, x := range os {
		if x.OrderNo == o.OrderNo {
			return true
		}
	}
	return false
}
