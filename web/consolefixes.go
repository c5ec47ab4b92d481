package web

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"

	"seatflow/core"
	"seatflow/core/checkin"
	"seatflow/core/till"
)

// Small fixes of issue 31 (item 10): the discrepancy queue's kinds, cases
// without an order, amounts in their currency, the write-off's asker, the
// engine's actors in the hold bar, and sessions by device.

// DiscrepancyKinds are the kinds the discrepancy queue filters by: every
// kind HandlePayment records, the till's and the door's.
var DiscrepancyKinds = []string{core.DiscrepancyPaidAfterCancel, core.DiscrepancySecondPayment,
	core.DiscrepancyAmountMismatch, core.DiscrepancyPaidAfterRefund, core.DiscrepancyUnknownOrder,
	core.DiscrepancyTxnConflict, till.DiscrepancyTillDifference,
	checkin.DiscrepancyDoubleEntry}

// HasOrder reports whether a case's order number names an order: an
// unknown_order case is about a payment for a number never placed, so it
// is shown as text, not as a link to a page that cannot exist.
func HasOrder(x core.DiscrepancyCase) bool {
	return x.Kind != core.DiscrepancyUnknownOrder && x.OrderNo != "" // a till count's case has no order
}

// CaseMoney is a case's amount in the currency of its order's show; with
// no order to tell the currency, the amount says so rather than passing
// as one.
func (p Page) CaseMoney(x core.DiscrepancyCase) string {
	if x.Currency == "" {
		return p.Tf("disc.amount_no_currency", p.Money(x.AmountCents, ""))
	}
	return p.Money(x.AmountCents, x.Currency)
}

// MoveOptions are the states the viewer may move a case to: the machine's
// next states, without written_off for who asked for the write-off (the
// owner while it is requested), whom four eyes would refuse after submit.
func (p Page) MoveOptions(x core.DiscrepancyCase) []core.CaseState {
	var out []core.CaseState
	for _, next := range x.State.Next() {
		if next == core.CaseWrittenOff && x.State == core.CaseWriteOffRequested && x.Owner == p.Staff.Username {
			continue
		}
		out = append(out, next)
	}
	return out
}

// WhoIn is who a hold-bar mark names in the page's language: the engine's
// own actors (sweep, system, reconcile) translated; people, keys and
// payment references as written.
func (m HoldMark) WhoIn(p Page) string { return TranslateOr(p.Lang, "actor."+m.Who, m.Who) }

// SessionKey names a session on the sessions page and in its end form: a
// digest of its token hash, which itself is compared, never shown.
func SessionKey(tokenHash string) string {
	sum := sha256.Sum256([]byte("session-key:" + tokenHash))
	return hex.EncodeToString(sum[:8])
}

// uaRules find the browser in a user agent, first match wins: Edge and
// Opera also say Chrome, Chrome also says Safari.
var uaRules = []struct {
	name string
	re   *regexp.Regexp
}{
	{"Edge", regexp.MustCompile(`Edg(?:e|A|iOS)?/(\d+)`)},
	{"Opera", regexp.MustCompile(`OPR/(\d+)`)},
	{"Samsung Internet", regexp.MustCompile(`SamsungBrowser/(\d+)`)},
	{"Firefox", regexp.MustCompile(`(?:Firefox|FxiOS)/(\d+)`)},
	{"Chrome", regexp.MustCompile(`(?:Chrome|CriOS)/(\d+)`)},
	{"Safari", regexp.MustCompile(`Version/(\d+)[.\d]* (?:Mobile/\S+ )?Safari/`)},
	{"curl", regexp.MustCompile(`^curl/(\d+)`)},
}

// uaSystems find the operating system, first match wins: Android also
// says Linux, iOS also says Mac OS X.
var uaSystems = []struct{ name, marker string }{
	{"Android", "Android"}, {"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Windows", "Windows"},
	{"ChromeOS", "CrOS"}, {"macOS", "Mac OS X"}, {"Linux", "Linux"},
}

// Device is a user agent as a reader names it: "Chrome 120 · Windows",
// "Safari 17 · iPhone". What it cannot tell is left out; an agent it
// cannot read at all is "" (the page then shows the raw text).
func Device(ua string) string {
	browser := ""
	for _, r := range uaRules {
		if m := r.re.FindStringSubmatch(ua); m != nil {
			browser = r.name + " " + m[1]
			break
		}
	}
	system := ""
	for _, s := range uaSystems {
		if strings.Contains(ua, s.marker) {
			system = s.name
			break
		}
	}
	switch {
	case browser != "" && system != "":
		return browser + " · " + system
	case browser != "":
		return browser
	}
	return system
}

// fixTexts are the catalog entries of these fixes; init adds them.
var fixTexts = map[string]entry{
	"disc.amount_no_currency":  {"%s (currency unknown: no such order)", "%s（币种未知：无此订单）"},
	"race.path.sweep":          {"expiry sweep", "超时清扫"},
	"noorder.title":            {"No such order", "无此订单"},
	"noorder.text":             {"No order %s was ever placed here.", "本系统从未生成订单 %s。"},
	"noorder.cases":            {"Payments recorded for this number", "此订单号的支付记录"},
	"noorder.case":             {"Case #%d: %s, %s", "案件 #%d：%s，%s"},
	"sessions.device":          {"Device", "设备"},
	"sessions.unknown_device":  {"unknown device", "未知设备"},
	"sessions.end_one":         {"Log out", "退出"},
	"sessions.end_one_label":   {"Log out the session from %s", "退出来自 %s 的会话"},
	"notice.session_ended":     {"That session is logged out.", "该会话已退出。"},
	"audit.action.session_end": {"logged out one session", "退出一个会话"},
	"sessions.err_gone":        {"That session has already ended.", "该会话已经结束。"},
}

func init() {
	for k, e := range fixTexts {
		if _, dup := catalog[k]; dup {
			panic("web: catalog key " + k + " defined twice")
		}
		catalog[k] = e
	}
}
