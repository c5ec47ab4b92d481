package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
)

// TestConsoleQuickExtend: a one-click button extends the hold by its
// minutes through the extend path, audited with a reason saying so; other
// minutes are refused.
func TestConsoleQuickExtend(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleBoxOffice)
	o := env.place(32, "B-1")
	path := "/console/orders/" + o.OrderNo + "/extend"
	if page := b.do("GET", "/console/orders/"+o.OrderNo, nil, nil).Body.String(); !strings.Contains(page, `id="quick-extend"`) {
		t.Fatal("the order page lacks the one-click extensions")
	}
	if rec := b.post(path, url.Values{"quick": {"7"}}); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("+7 min: %d, want 422 (not one of the buttons)", rec.Code)
	}
	rec := b.post(path, url.Values{"quick": {"10"}})
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !strings.HasSuffix(loc, "?outcome=extended") {
		t.Fatalf("+10 min: %d %q", rec.Code, loc)
	}
	got, _, _ := env.engine.Order(t.Context(), o.OrderNo)
	if want := o.ExpireAt.Truncate(time.Millisecond).Add(10 * time.Minute); !got.ExpireAt.Equal(want) {
		t.Errorf("expiry %v, want %v", got.ExpireAt, want)
	}
	var details []string
	if err := env.db.X().Select(&details, `SELECT detail FROM audit_log WHERE action = ?`, core.AuditExtendHold); err != nil {
		t.Fatal(err)
	}
	if len(details) != 1 || !strings.Contains(details[0], `"minutes":10`) || !strings.Contains(details[0], "one-click extension, +10 min") {
		t.Errorf("audit of the one-click extension: %q", details)
	}
}

// TestConsoleOrderCaseLink: the page of an order whose payment became a
// discrepancy case links the case, for those who may see cases; and it
// draws the hold's time bar.
func TestConsoleOrderCaseLink(t *testing.T) {
	env := newConsoleEnv(t)
	o := env.place(33, "C-3")
	if _, err := env.engine.Cancel(t.Context(), o.OrderNo, o.UserID); err != nil {
		t.Fatal(err)
	}
	env.pay(o)
	var id int64
	if err := env.db.X().Get(&id, `SELECT id FROM discrepancy WHERE order_no = ?`, o.OrderNo); err != nil {
		t.Fatal(err)
	}
	link := fmt.Sprintf(`href="/console/discrepancies/%d"`, id)
	page := env.login(access.RoleOps).do("GET", "/console/orders/"+o.OrderNo, nil, nil).Body.String()
	if !strings.Contains(page, `id="order-cases"`) || !strings.Contains(page, link) {
		t.Errorf("the order page does not link its case %d", id)
	}
	if !strings.Contains(page, `id="holdbar"`) || !strings.Contains(page, `class="hb-mark hb-end"`) {
		t.Error("the order page lacks the time bar with the cancel on it")
	}
	if page := env.login(access.RoleBoxOffice).do("GET", "/console/orders/"+o.OrderNo, nil, nil).Body.String(); strings.Contains(page, link) {
		t.Error("box office, who may not see cases, is shown the link")
	}
	other := env.place(34, "C-4")
	if page := env.login(access.RoleOps).do("GET", "/console/orders/"+other.OrderNo, nil, nil).Body.String(); strings.Contains(page, `id="order-cases"`) {
		t.Error("an order without a case shows cases")
	}
}
