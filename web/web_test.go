package web

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
)

// TestCatalogCoversTemplates finds every literal catalog key the views use
// and checks the catalog has it, in both languages.
func TestCatalogCoversTemplates(t *testing.T) {
	files, err := filepath.Glob("*.templ")
	if err != nil || len(files) == 0 {
		t.Fatalf("templ files: %v, %v", files, err)
	}
	more, _ := filepath.Glob("*.go")
	// Prefixes joined with data at run time ("role." + role) end in a dot
	// and are checked by TestCatalogComplete instead.
	uses := regexp.MustCompile(`(?:\.T|\.Tf|Translate)\("([a-z_.0-9]*[a-z_0-9])"`)
	keys := regexp.MustCompile(`(?:Key|label|Title|Error|Notice|FormError|Text):\s*"([a-z_]+\.[a-z_.0-9]+)"`)
	found := 0
	for _, f := range append(files, more...) {
		if filepath.Ext(f) == ".go" && (regexp.MustCompile(`_(templ|test)\.go$`).MatchString(f) || f == "i18n.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []*regexp.Regexp{uses, keys} {
			for _, m := range re.FindAllStringSubmatch(string(src), -1) {
				found++
				if !Known(m[1]) {
					t.Errorf("%s: key %q is not in the catalog", f, m[1])
				}
			}
		}
	}
	if found < 100 {
		t.Errorf("found only %d key uses: the patterns no longer match the views", found)
	}
}

// TestCatalogComplete checks every entry has both languages and that keys
// built from data at run time have an entry for every value core defines.
func TestCatalogComplete(t *testing.T) {
	for k, e := range catalog {
		if e.en == "" || e.zh == "" {
			t.Errorf("%s: en %q, zh %q", k, e.en, e.zh)
		}
	}
	var want []string
	for _, r := range access.AllRoles() {
		want = append(want, "role."+string(r))
	}
	for _, s := range []core.OrderStatus{core.StatusPending, core.StatusPaid, core.StatusCancelled} {
		want = append(want, "status."+s.String())
	}
	for _, s := range []core.SeatState{core.SeatAvailable, core.SeatLocked, core.SeatSold, core.SeatBlocked} {
		want = append(want, "seat."+s.String())
	}
	for _, k := range []string{core.EventPlaced, core.EventTimeoutScheduled, core.EventTimeoutSendFailed,
		core.EventTimeoutFired, core.EventCancelled, core.EventPaid, core.EventPaymentDuplicate, core.EventDiscrepancy,
		core.EventAmountMismatch, core.EventSeatsReleased, core.EventSeatReleaseFailed, core.EventSeatsSold,
		core.EventSeatSellFailed, core.EventRepaired} {
		want = append(want, "ev.kind."+k)
	}
	for _, o := range []string{core.OutcomeIgnored, core.OutcomeRearmed, core.OutcomeCancelled,
		core.OutcomeResent, core.OutcomeDeferred} {
		want = append(want, "ev.outcome."+o)
	}
	for _, r := range []string{core.ReasonTimeout, core.ReasonCustomer, core.ReasonStaff, core.ReasonReconcile, core.ReasonShowCancelled} {
		want = append(want, "reason."+r)
	}
	for _, a := range []string{core.AuditLogin, core.AuditLoginFailed, core.AuditLogout, core.AuditForceCancel,
		core.AuditResolveDiscrepancy, core.AuditReconcileRun, core.AuditStaffAdd, core.AuditStaffDisable, core.AuditStaffEnable,
		access.AuditPasswordChange, access.AuditPasswordResetLink, access.AuditPasswordReset, access.AuditStaffRole, core.AuditArchiveDelete,
		access.AuditTOTPEnable, access.AuditTOTPDisable, access.AuditTOTPReset, access.AuditLoginCodeFailed,
		access.AuditSessionsEndOthers, access.AuditSessionsEndAll, access.AuditStaffSessionsEnd} {
		want = append(want, "audit.action."+a)
	}
	for _, t := range []core.Tender{core.TenderCash, core.TenderCard} {
		want = append(want, "quick.sell."+string(t))
	}
	want = append(want, "staff."+toggleVerb(access.Staff{}), "staff."+toggleVerb(access.Staff{Disabled: true}))
	for _, s := range []int{400, 403, 404, 429, 500} {
		want = append(want, errorKey(s)+".title", errorKey(s)+".text")
	}
	for _, k := range want {
		if !Known(k) {
			t.Errorf("catalog lacks %q", k)
		}
	}
}

func TestPickLang(t *testing.T) {
	for _, c := range []struct {
		cookie, accept string
		want           Lang
	}{
		{"", "", LangEN},
		{"", "zh-CN,zh;q=0.9,en;q=0.8", LangZH},
		{"", "en-US,en;q=0.9,zh-CN;q=0.8", LangEN},
		{"", "fr-FR, zh-TW;q=0.5", LangZH},
		{"", "de, fr", LangEN},
		{"", "en;q=0.2, zh;q=0.7", LangZH},
		{"en", "zh-CN", LangEN},
		{"zh-CN", "en", LangZH},
		{"klingon", "zh", LangZH},
	} {
		if got := PickLang(c.cookie, c.accept); got != c.want {
			t.Errorf("PickLang(%q, %q) = %s, want %s", c.cookie, c.accept, got, c.want)
		}
	}
}

func TestHoldsQueryValues(t *testing.T) {
	for _, c := range []struct {
		q    HoldsQuery
		page int
		want string
	}{
		{HoldsQuery{}, 1, ""},
		{HoldsQuery{Sort: "expire"}, 2, "?page=2"},
		{HoldsQuery{Search: "SF 1&x", ShowID: 3, UserID: 9, Sort: "created"}, 3, "?page=3&q=SF+1%26x&show=3&sort=created&user=9"},
		{HoldsQuery{Due: DueSoon}, 1, "?due=soon"},
	} {
		if got := c.q.Values(c.page); got != c.want {
			t.Errorf("%+v.Values(%d) = %q, want %q", c.q, c.page, got, c.want)
		}
	}
}

func TestSeatRows(t *testing.T) {
	seat := func(row, col int) core.SeatView { return core.SeatView{Seat: core.Seat{Row: row, Col: col}} }
	d := SeatMapData{Seats: []core.SeatView{seat(1, 1), seat(1, 2), seat(2, 1), seat(3, 1), seat(3, 2)}}
	rows := d.Rows()
	if len(rows) != 3 || len(rows[0]) != 2 || len(rows[1]) != 1 || len(rows[2]) != 2 {
		t.Fatalf("rows %v", rows)
	}
	if (SeatMapData{}).Rows() != nil {
		t.Error("no seats, rows")
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct {
		d      time.Duration
		en, zh string
	}{
		{-time.Second, "0 s", "0 秒"},
		{1500 * time.Microsecond, "2 ms", "2 毫秒"},
		{90*time.Second + 400*time.Millisecond, "1 min 30 s", "1 分 30 秒"},
		{15 * time.Minute, "15 min", "15 分"},
		{2 * time.Hour, "2 h", "2 小时"},
		{21*time.Minute + 18*time.Second, "21 min 18 s", "21 分 18 秒"},
		{time.Hour + 5*time.Second, "1 h 5 s", "1 小时 5 秒"},
	} {
		if got := (Page{Lang: LangEN}).Duration(c.d); got != c.en {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.en)
		}
		if got := (Page{Lang: LangZH}).Duration(c.d); got != c.zh {
			t.Errorf("Chinese Duration(%v) = %q, want %q", c.d, got, c.zh)
		}
	}
	for _, c := range []struct {
		d      time.Duration
		en, zh string
	}{
		{3 * time.Millisecond, "+3 ms", "+3 毫秒"},
		{-1200 * time.Millisecond, "-1.2 s", "-1.2 秒"},
	} {
		if got := (Page{Lang: LangEN}).SignedDuration(c.d); got != c.en {
			t.Errorf("SignedDuration(%v) = %q, want %q", c.d, got, c.en)
		}
		if got := (Page{Lang: LangZH}).SignedDuration(c.d); got != c.zh {
			t.Errorf("Chinese SignedDuration(%v) = %q, want %q", c.d, got, c.zh)
		}
	}
	for d, want := range map[time.Duration]string{-time.Second: "0:00", 61 * time.Second: "1:01", 2*time.Hour + 65*time.Second: "2:01:05"} {
		if got := CountdownText(d); got != want {
			t.Errorf("CountdownText(%v) = %q, want %q", d, got, want)
		}
	}
	p := Page{Lang: LangZH}
	ev := core.Event{Kind: core.EventTimeoutScheduled, Detail: map[string]any{"hop": 2.0, "level": 0.0,
		"delay_ms": 300000.0, "zzz": "x"}}
	facts := EventFacts(p, ev, "EUR")
	want := []Fact{{"跳数", "2"}, {"延迟级别", "精确定时"}, {"延迟", "5 分"}, {"zzz", "x"}}
	if len(facts) != len(want) {
		t.Fatalf("facts %v", facts)
	}
	for i := range want {
		if facts[i] != want[i] {
			t.Errorf("fact %d = %v, want %v", i, facts[i], want[i])
		}
	}
	// Values the engine writes are words of the console's language too.
	ev = core.Event{Kind: core.EventDiscrepancy, Detail: map[string]any{"actor": "system", "order_status": "paid",
		"kind": "second_payment", "check": "limit_drift", "late_ms": 1278000.0}}
	got := map[string]string{}
	for _, f := range EventFacts(p, ev, "EUR") {
		got[f.Label] = f.Value
	}
	for label, value := range map[string]string{p.T("ev.actor"): "系统", p.T("ev.order_status"): "已支付",
		p.T("ev.discrepancy_kind"): "重复支付", p.T("ev.check"): "限购计数", p.T("ev.late"): "21 分 18 秒"} {
		if got[label] != value {
			t.Errorf("%s = %q, want %q (facts %v)", label, got[label], value, got)
		}
	}
}

func TestSeatListInSeatMapOrder(t *testing.T) {
	if got := seatList([]string{"B-10", "B-8", "A-2"}); got != "A-2 B-8 B-10" {
		t.Errorf("seatList = %q, want A-2 B-8 B-10", got)
	}
}
