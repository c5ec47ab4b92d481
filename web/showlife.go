package web

import (
	"strings"

	"seatflow/core"
)

// ShowEditForm is a show's details as the edit form holds them: times as
// datetime-local values in the console's zone ("" sales end: until the
// start).
type ShowEditForm struct {
	Name, Venue, StartsAt, SalesEnd string
}

// ShowEditData is a show's edit page.
type ShowEditData struct {
	Show core.Show
	Form ShowEditForm
	// Locked is the catalog key of why the show can no longer be edited
	// (orders, cancelled), or "".
	Locked string
	Error  string
	// Prices are the show's categories in the prices form, their prices
	// in the currency's units as typed; PriceError says why they were
	// refused.
	Prices     []PriceField
	PriceError string
	// Plan is the plan form (categories and seats, as the new show form
	// has them); PlanError says why it was refused, PlanPreview what it
	// would make.
	Plan        NewShowData
	PlanError   string
	PlanPreview *ShowPreview
}

// PriceField is one category's price in the prices form.
type PriceField struct {
	Code, Name, Value string
}

// AmountField writes minor units as a form field holds them: the
// currency's units, its decimals, no grouping ("1234.50").
func AmountField(minor int64, currency string) string {
	return sign(minor) + strings.ReplaceAll(decimal(minor, core.MinorUnits(currency)), ",", "")
}

// CancelShowData is a show's cancel page: before, what cancelling would
// do; after, the paid orders to refund.
type CancelShowData struct {
	Plan core.CancelShowPlan
}

// Cancelled says the show is already cancelled.
func (d CancelShowData) Cancelled() bool { return d.Plan.Show.Status == core.ShowCancelled }

// showLifeTexts are the catalog entries of the show edit and cancel
// pages; init adds them.
var showLifeTexts = map[string]entry{
	"showedit.link":             {"Edit or cancel the show", "编辑或取消场次"},
	"showedit.title":            {"Edit the show", "编辑场次"},
	"showedit.back":             {"Back to the seat map", "返回座位图"},
	"showedit.help":             {"Name, venue, start and end of sales can change until the first order; prices and seats are fixed from then on too.", "首个订单之前可修改名称、场馆、开始时间和停售时间；此后与价格、座位一样不可更改。"},
	"showedit.sales_end":        {"Sales end", "停售时间"},
	"showedit.sales_end_hint":   {"Empty: sales run until the show starts.", "留空：售票至开演为止。"},
	"showedit.save":             {"Save the changes", "保存修改"},
	"showedit.locked_orders":    {"This show has orders: it can no longer be edited.", "该场次已有订单，不能再编辑。"},
	"showedit.locked_cancelled": {"This show is cancelled: it can no longer be edited.", "该场次已取消，不能再编辑。"},
	"showedit.err_starts":       {"Starts: not a date and time.", "开始时间：不是有效的日期时间。"},
	"showedit.err_sales_end":    {"Sales end: not a date and time.", "停售时间：不是有效的日期时间。"},
	"showedit.cancel_link":      {"Cancel this show…", "取消此场次…"},
	"notice.show_edited":        {"Show details saved.", "场次信息已保存。"},
	"showedit.prices":           {"Prices (%s)", "票价（%s）"},
	"showedit.prices_help":      {"The price of each category, in the currency's units (25 or 25.50), for its seats too. Prices change only until the first order.", "各票档价格（连同其座位），以货币单位填写（如 25 或 25.50）。仅在第一笔订单之前可修改。"},
	"showedit.prices_save":      {"Save the prices", "保存票价"},
	"notice.prices_edited":      {"Prices saved.", "票价已保存。"},
	"audit.action.show_reprice": {"changed a show's prices", "修改场次票价"},
	"showedit.plan":             {"Seats and categories", "座位与票档"},
	"showedit.plan_help":        {"Replaces the whole plan: its categories with their prices, and its seats, as when the show was set up. Only until the first order; blocks of seats that no longer exist are dropped.", "替换整个座位图：票档及价格、座位，与新建场次时相同。仅在第一笔订单之前可替换；不再存在的座位上的封锁会被移除。"},
	"showedit.plan_save":        {"Replace the plan", "替换座位图"},
	"notice.plan_replaced":      {"Plan replaced.", "座位图已替换。"},
	"audit.action.show_plan":    {"replaced a show's plan", "替换场次座位图"},
	"cancelshow.title":          {"Cancel the show", "取消场次"},
	"cancelshow.what":           {"Cancelling takes the show off sale at once: no order can be placed from then on. The holds below end now and their seats are released; the paid orders below are listed for refund afterwards, one by one.", "取消后场次立即停售，不能再下单。以下锁座立即结束并释放座位；以下已支付订单随后列出，逐一退款。"},
	"cancelshow.pending":        {"Holds that end now (%d)", "将立即结束的锁座（%d）"},
	"cancelshow.paid":           {"Paid orders to refund (%d)", "待退款的已支付订单（%d）"},
	"cancelshow.none_pending":   {"No pending holds.", "没有待支付锁座。"},
	"cancelshow.none_paid":      {"No paid orders.", "没有已支付订单。"},
	"cancelshow.confirm":        {"Cancel the show now", "立即取消场次"},
	"cancelshow.done":           {"This show was cancelled %s.", "该场次已于 %s 取消。"},
	"cancelshow.refund_each":    {"Open each order to refund it.", "打开每个订单进行退款。"},
	"cancelshow.expires":        {"Hold ends", "锁座到期"},
	"notice.show_cancelled":     {"Show cancelled: its holds ended; refund the paid orders below.", "场次已取消：锁座已结束；请为下列已支付订单退款。"},
	"audit.action.show_edit":    {"edited a show", "编辑场次"},
	"audit.action.show_cancel":  {"cancelled a show", "取消场次"},
	"audit.action.show_publish": {"put a draft show on sale", "发布草稿场次"},
	"show_status.draft":         {"draft", "草稿"},
	"newshow.draft":             {"Save as a draft: not on sale until published", "存为草稿：发布前不开售"},
	"showedit.draft":            {"This show is a draft: nobody can buy a seat until it is published.", "该场次为草稿：发布前无法购票。"},
	"showedit.publish":          {"Publish: put it on sale now", "发布：立即开售"},
	"notice.show_published":     {"The show is on sale.", "场次已开售。"},
	"ev.venue":                  {"venue", "场馆"},
	"ev.starts_at":              {"starts", "开始时间"},
	"ev.sales_end":              {"sales end", "停售时间"},
	"ev.cancelled_orders":       {"holds ended", "已结束锁座"},
	"ev.paid_orders":            {"paid orders to refund", "待退款订单"},
}

func init() {
	for k, e := range showLifeTexts {
		if _, dup := catalog[k]; dup {
			panic("web: catalog key " + k + " defined twice")
		}
		catalog[k] = e
	}
}
