package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/till"
)

// TestConsoleTill: a clerk closes the shift the test env opened with a
// wrong count (a case for a manager), is refused a counter payment with no
// open shift, opens a new one and sells; the report and the day view show
// the money by tender; the day view is a manager's.
func TestConsoleTill(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	box := env.login(access.RoleBoxOffice)
	clerk := env.staff[access.RoleBoxOffice].Username

	if rec := box.post("/console/till/close", url.Values{"counted": {"abc"}}); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("count of abc: %d", rec.Code)
	}
	rec := box.post("/console/till/close", url.Values{"counted": {"99.00"}}) // the float is 100.00
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("close: %d %.300s", rec.Code, rec.Body)
	}
	page := box.do("GET", rec.Header().Get("Location"), nil, nil).Body.String()
	for _, want := range []string{`id="till-case"`, `id="till-open-form"`, "-€1.00"} {
		if !strings.Contains(page, want) {
			t.Errorf("till after the close lacks %q: %.2000s", want, page)
		}
	}

	o, err := env.cn.counter.Hold(ctx, core.CounterHold{ShowID: env.show.ID, SeatIDs: []string{"A-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if rec := box.post("/console/orders/"+o.OrderNo+"/pay", url.Values{"tender": {"cash"}}); rec.Code != http.StatusConflict ||
		!strings.Contains(rec.Body.String(), "No open shift at the till") {
		t.Errorf("payment with no open shift: %d %.300s", rec.Code, rec.Body)
	}
	for _, tc := range []struct {
		name   string
		form   url.Values
		status int
	}{
		{"float of text", url.Values{"currency": {"EUR"}, "float": {"ten"}}, http.StatusUnprocessableEntity},
		{"unknown currency", url.Values{"currency": {"XYZ"}, "float": {"10"}}, http.StatusUnprocessableEntity},
		{"opened", url.Values{"currency": {env.show.Currency}, "float": {"50"}}, http.StatusSeeOther},
		{"second open shift", url.Values{"currency": {env.show.Currency}, "float": {"50"}}, http.StatusConflict},
	} {
		if rec := box.post("/console/till/open", tc.form); rec.Code != tc.status {
			t.Errorf("%s: %d, want %d: %.300s", tc.name, rec.Code, tc.status, rec.Body)
		}
	}
	if rec := box.post("/console/orders/"+o.OrderNo+"/pay", url.Values{"tender": {"cash"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("payment in the new shift: %d %.300s", rec.Code, rec.Body)
	}
	s, tot, ok, err := env.cn.Till.Current(ctx, clerk)
	if err != nil || !ok || tot.Cash.Sales != 1 || tot.Cash.SalesCents != o.AmountCents || s.Expected(tot) != 5000+o.AmountCents {
		t.Fatalf("open shift %+v totals %+v %v %v", s, tot, ok, err)
	}
	report := box.do("GET", "/console/till/report", nil, nil).Body.String()
	if !strings.Contains(report, `id="till-shift-`) || strings.Count(report, `<tr id="till-shift-`) != 2 {
		t.Errorf("the clerk's report shows %d shifts, want 2", strings.Count(report, `<tr id="till-shift-`))
	}
	if rec := box.do("GET", "/console/till/day", nil, nil); rec.Code != http.StatusForbidden {
		t.Errorf("the day view for box office: %d", rec.Code)
	}
	ops := env.login(access.RoleOps)
	day := ops.do("GET", "/console/till/day", nil, nil)
	if day.Code != 200 || strings.Count(day.Body.String(), `<tr id="till-shift-`) < len(access.AllRoles())+1 {
		t.Errorf("day view: %d, %d shifts", day.Code, strings.Count(day.Body.String(), `<tr id="till-shift-`))
	}
	if got := env.auditCount(till.AuditShiftClose); got != 1 {
		t.Errorf("closings audited: %d", got)
	}
}
