package web

import (
	"strconv"
	"time"

	"seatflow/core"
)

// WaitlistData is a show's waiting-list page (issue 33): the list's
// settings, its figures, its entries in list order, and the forms.
type WaitlistData struct {
	Show       core.Show
	Settings   core.WaitlistSettings
	Categories []core.PriceCategory
	Rows       []WaitlistRow
	// More is true when the list has more entries than the page reads;
	// the figures then count the ones listed.
	More bool
	// Form is the settings form as typed; Error why it was refused, in
	// the page's language (or the engine's words for what the console
	// does not check itself).
	Form  WaitlistForm
	Error string
	// Add is the walk-in form as typed; AddError why it was refused, as
	// Error.
	Add      WaitlistAddForm
	AddError string
	// Confirm is the entry a clerk asked to withdraw, shown for the second
	// click; nil otherwise.
	Confirm *core.WaitEntryView
}

// WaitlistForm is the settings form's fields as text.
type WaitlistForm struct {
	Enabled  bool
	JoinWhen string
	Minutes  string // the offer hold in whole minutes
}

// WaitlistAddForm is a clerk's walk-in or phone customer as typed.
type WaitlistAddForm struct {
	Name, Email, Phone, Count, Category string
	Together                            bool
}

// The settings form's bounds of the offer hold, in minutes.
const (
	WaitlistMinMinutes = int(core.MinOfferTTL / time.Minute)
	WaitlistMaxMinutes = int(core.MaxOfferTTL / time.Minute)
)

// WaitlistJoinWhens are the settings form's choices of when joins are taken.
var WaitlistJoinWhens = []string{core.JoinWhenSoldOut, core.JoinWhenAlways}

// Where an offer's seats came from (WaitlistRow.Source).
const (
	SourceOrder   = "order"   // an order that ended (From)
	SourceBlock   = "block"   // an unblock
	SourceUnknown = "unknown" // the offer's timeline is pruned
)

// WaitlistRow is one entry and, for an offer, where its seats came from
// and how long they spent between their holders.
type WaitlistRow struct {
	core.WaitEntryView
	Source string // "" without an offer
	From   string // the order that let the seats go, for SourceOrder
	// Expired: From's hold ran out, and Gap is how long after its expiry
	// its timeout handed the seats on; otherwise the hand-off was in the
	// ending's own transaction, at its time, and Gap is 0.
	Expired bool
	Gap     time.Duration
}

// WaitlistCounts are the list's figures.
type WaitlistCounts struct {
	Waiting, Offered, Accepted, Expired, Withdrawn int
	Offers                                         int // offers ever made: entries with an order
}

// ID is the show's id as the page's URLs spell it.
func (d WaitlistData) ID() string { return strconv.FormatInt(d.Show.ID, 10) }

// Counts counts the listed entries by state.
func (d WaitlistData) Counts() WaitlistCounts {
	var c WaitlistCounts
	for _, r := range d.Rows {
		switch r.State {
		case core.WaitWaiting:
			c.Waiting++
		case core.WaitOffered:
			c.Offered++
		case core.WaitAccepted:
			c.Accepted++
		case core.WaitExpired:
			c.Expired++
		case core.WaitWithdrawn:
			c.Withdrawn++
		}
		if r.Entry.OrderNo != "" {
			c.Offers++
		}
	}
	return c
}

// Conversion is accepted offers of offers made, in whole percent; "—"
// before any offer.
func (c WaitlistCounts) Conversion() string {
	if c.Offers == 0 {
		return "—"
	}
	return strconv.Itoa(c.Accepted*100/c.Offers) + " %"
}

// Withdrawable says whether staff may still take the entry off the list.
func Withdrawable(v core.WaitEntryView) bool {
	return v.State == core.WaitWaiting || v.State == core.WaitOffered
}

// Who is an entry's holder: the walk-in's name and contact, or the user.
func (p Page) Who(e core.WaitEntry) string {
	if e.UserID == core.BoxOfficeUserID {
		return customerLine(e.Customer)
	}
	return p.Tf("waitlist.user", e.UserID)
}

// waitlistTexts are the catalog entries of the waiting-list page; init
// adds them.
var waitlistTexts = map[string]entry{
	"waitlist.title":              {"Waiting list", "候补名单"},
	"waitlist.link":               {"Waiting list", "候补名单"},
	"waitlist.open":               {"open", "已开启"},
	"waitlist.closed":             {"closed", "未开启"},
	"waitlist.join_when":          {"Takes joins", "接受登记"},
	"waitlist.join_when.sold_out": {"only while sold out", "仅在售罄时"},
	"waitlist.join_when.always":   {"at any time", "任何时候"},
	"waitlist.offer_ttl":          {"Offer hold", "候补订单保留时长"},
	"waitlist.waiting":            {"Waiting", "候补中"},
	"waitlist.offered":            {"Offers in flight", "待支付的候补订单"},
	"waitlist.accepted":           {"Accepted", "已接受"},
	"waitlist.expired":            {"Expired", "已过期"},
	"waitlist.withdrawn":          {"Withdrawn", "已撤销"},
	"waitlist.conversion":         {"Conversion", "转化率"},
	"waitlist.conversion_help":    {"accepted of %d offers made", "共发出 %d 个候补订单中已接受的比例"},
	"waitlist.more":               {"Only the first %d entries are listed and counted.", "仅列出并统计前 %d 条登记。"},
	"waitlist.entries":            {"Entries in list order", "按名单顺序排列的登记"},
	"waitlist.none":               {"No one is on the list.", "名单上还没有人。"},
	"waitlist.position":           {"Position", "位置"},
	"waitlist.who":                {"Who", "登记人"},
	"waitlist.user":               {"user %d", "用户 %d"},
	"waitlist.seats":              {"Seats", "座位数"},
	"waitlist.category":           {"Category", "票价类别"},
	"waitlist.any_category":       {"any", "不限"},
	"waitlist.together":           {"Together", "连座"},
	"waitlist.yes":                {"yes", "是"},
	"waitlist.no":                 {"no", "否"},
	"waitlist.state":              {"State", "状态"},
	"waitlist.state.waiting":      {"waiting", "候补中"},
	"waitlist.state.offered":      {"offered", "已发出订单"},
	"waitlist.state.accepted":     {"accepted", "已接受"},
	"waitlist.state.expired":      {"expired", "已过期"},
	"waitlist.state.withdrawn":    {"withdrawn", "已撤销"},
	"waitlist.joined":             {"Joined", "登记时间"},
	"waitlist.offer":              {"Offer", "候补订单"},
	"waitlist.offer_until":        {"held until %s", "保留至 %s"},
	"waitlist.gap":                {"Seat time between holders", "座位在两位持有人之间的时间"},
	"waitlist.gap_ended":          {"%s: handed over as %s ended", "%s：%s 结束时即转交"},
	"waitlist.gap_expired":        {"%s after %s's hold expired", "%[2]s 的锁座过期后 %[1]s"},
	"waitlist.gap_block":          {"%s: from seats unblocked", "%s：来自取消保留的座位"},
	"waitlist.gap_unknown":        {"unknown: the offer's timeline is pruned", "未知：候补订单的记录已清理"},
	"waitlist.gap_help": {"Freed seats go from the ending hold to the offer in the ending's own transaction, so they are never on sale in between; after a hold that expired, the time is how late its timeout ended it.",
		"释放的座位在结束该锁座的同一事务中转交给候补订单，其间从不重新开售；若原锁座为过期，此时间即其超时处理的延迟。"},
	"waitlist.actions":               {"Actions", "操作"},
	"waitlist.withdraw":              {"Withdraw", "撤销"},
	"waitlist.withdraw_label":        {"Withdraw the entry of %s", "撤销 %s 的登记"},
	"waitlist.confirm_title":         {"Withdraw this entry?", "撤销此登记？"},
	"waitlist.confirm_text":          {"%s loses their place on the list (%d seats).", "%s 将失去名单上的位置（%d 个座位）。"},
	"waitlist.confirm_offer":         {"Their pending offer %s is cancelled and its seats go to the next in line.", "其待支付的候补订单 %s 将被取消，座位转给下一位。"},
	"waitlist.confirm_button":        {"Withdraw the entry", "撤销登记"},
	"waitlist.settings":              {"Settings", "设置"},
	"waitlist.enable":                {"Keep a waiting list for this show", "本场次开启候补名单"},
	"waitlist.offer_minutes":         {"Offer hold (minutes, %d to %d)", "候补订单保留时长（分钟，%d 至 %d）"},
	"waitlist.save":                  {"Save", "保存"},
	"waitlist.managers_only":         {"Only managers change a waiting list's settings.", "只有经理可以更改候补名单设置。"},
	"waitlist.add":                   {"Add a walk-in or phone customer", "登记现场或电话顾客"},
	"waitlist.name":                  {"Name", "姓名"},
	"waitlist.email":                 {"Email (optional)", "电子邮箱（选填）"},
	"waitlist.phone":                 {"Phone (optional)", "电话（选填）"},
	"waitlist.count":                 {"Seats wanted", "所需座位数"},
	"waitlist.together_label":        {"Seats together", "需要连座"},
	"waitlist.add_button":            {"Add to the list", "加入名单"},
	"waitlist.error.join_when":       {"Choose when the list takes joins.", "请选择名单何时接受登记。"},
	"waitlist.error.minutes":         {"The offer hold must be a whole number of minutes from %d to %d.", "候补订单保留时长必须是 %d 至 %d 之间的整数分钟。"},
	"waitlist.error.name":            {"A walk-in needs a name.", "现场顾客需要填写姓名。"},
	"waitlist.error.count":           {"Seats wanted must be a whole number from 1 to %d.", "所需座位数必须是 1 至 %d 之间的整数。"},
	"waitlist.error.category":        {"That is not a category of this show.", "该类别不属于本场次。"},
	"waitlist.error.closed":          {"The show has no waiting list open: a manager opens it below.", "本场次未开启候补名单：请经理在下方开启。"},
	"waitlist.error.not_sold":        {"The show still has seats on sale: sell them at the counter instead.", "本场次仍有座位在售：请直接在柜台售票。"},
	"notice.waitlist_saved":          {"Waiting list settings saved.", "候补名单设置已保存。"},
	"notice.waitlist_added":          {"Added to the waiting list.", "已加入候补名单。"},
	"notice.waitlist_withdrawn":      {"Entry withdrawn.", "登记已撤销。"},
	"ev.waitlist_enabled":            {"waiting list open", "候补名单开启"},
	"ev.join_when":                   {"takes joins", "接受登记"},
	"ev.offer_ttl_seconds":           {"offer hold (s)", "候补订单保留时长（秒）"},
	"ev.category":                    {"category", "票价类别"},
	"ev.together":                    {"together", "连座"},
	"ev.entry_state":                 {"entry now", "登记当前状态"},
	"ev.offer":                       {"offer", "候补订单"},
	"audit.action.waitlist_settings": {"changed a waiting list", "更改候补名单设置"},
	"audit.action.waitlist_add":      {"added someone to a waiting list", "登记候补顾客"},
	"audit.action.waitlist_withdraw": {"withdrew a waiting-list entry", "撤销候补登记"},
}

func init() {
	for k, e := range waitlistTexts {
		if _, dup := catalog[k]; dup {
			panic("web: catalog key " + k + " defined twice")
		}
		catalog[k] = e
	}
}
