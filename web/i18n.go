package web

import (
	"net/url"
	"strconv"
	"strings"
)

// Lang is a console language.
type Lang string

const (
	LangEN Lang = "en"
	LangZH Lang = "zh-CN"
)

// ParseLang accepts the language names the lang cookie and switch use.
func ParseLang(s string) (Lang, bool) {
	switch Lang(s) {
	case LangEN, LangZH:
		return Lang(s), true
	}
	return "", false
}

// PickLang chooses the language: the lang cookie when it names one, else the
// browser's Accept-Language (highest q first), else English.
func PickLang(cookie, acceptLanguage string) Lang {
	if l, ok := ParseLang(cookie); ok {
		return l
	}
	best, bestQ := LangEN, 0.0
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		primary, _, _ := strings.Cut(strings.ToLower(tag), "-")
		var l Lang
		switch primary {
		case "zh":
			l = LangZH
		case "en":
			l = LangEN
		default:
			continue
		}
		if q > bestQ {
			best, bestQ = l, q
		}
	}
	return best
}

// LangURL is the language switch's link: it sets the cookie and returns to next.
func LangURL(l Lang, next string) string {
	return URL("/lang?" + url.Values{"to": {string(l)}, "next": {next}}.Encode())
}

// Translate returns key's text in l; an unknown key comes back as itself,
// so a missing entry is visible on the page (and TestCatalogCoversTemplates
// fails).
func Translate(l Lang, key string) string { return TranslateOr(l, key, key) }

// Known reports whether the catalog has key.
func Known(key string) bool {
	_, ok := catalog[key]
	return ok
}

// TranslateOr is Translate with a fallback for keys built from data (event
// kinds, reasons), which may name something the catalog does not know yet.
func TranslateOr(l Lang, key, fallback string) string {
	e, ok := catalog[key]
	if !ok {
		return fallback
	}
	if l == LangZH {
		return e.zh
	}
	return e.en
}

// entry is one text in both languages; keeping them side by side makes a
// text without its translation impossible to write.
type entry struct{ en, zh string }

// catalog is every console text. It is never written after initialisation.
var catalog = map[string]entry{
	"brand.console": {"console", "控制台"},
	"nav.label":     {"Console sections", "控制台导航"},
	"footer.times":  {"Times are shown in %s.", "时间按 %s 显示。"},

	"nav.dashboard":          {"Dashboard", "总览"},
	"dashboard.clock_offset": {"This instance's clock vs the database", "本实例时钟与数据库的偏差"},
	"nav.holds":              {"Pending holds", "待支付锁座"},
	"nav.orders":             {"Orders", "订单"},
	"nav.shows":              {"Seat maps", "座位图"},
	"nav.discrepancies":      {"Discrepancies", "支付异常"},
	"nav.reconcile":          {"Reconcile", "对账"},
	"nav.audit":              {"Audit log", "审计日志"},
	"nav.staff":              {"Staff", "员工账号"},

	"role.box_office": {"box office", "售票处"},
	"role.ops":        {"ops", "运维"},
	"role.admin":      {"admin", "管理员"},
	"role.manager":    {"manager", "演出经理"},

	"action.logout": {"Log out", "退出登录"},
	"action.search": {"Search", "搜索"},
	"action.back":   {"Back", "返回"},

	"login.title":     {"Sign in to the SeatFlow console", "登录 SeatFlow 控制台"},
	"login.username":  {"Username", "用户名"},
	"login.password":  {"Password", "密码"},
	"login.submit":    {"Sign in", "登录"},
	"login.failed":    {"Wrong username or password.", "用户名或密码错误。"},
	"login.throttled": {"Too many attempts. Wait a minute and try again.", "尝试次数过多，请一分钟后再试。"},
	"login.expired":   {"The sign-in form expired. Please try again.", "登录表单已过期，请重试。"},

	"notice.logged_out":      {"You are logged out.", "您已退出登录。"},
	"banner.store_down":      {"Not answering right now: %s. Orders and changes may fail until it is back; nothing is lost.", "暂时无法访问：%s。恢复之前下单和操作可能失败，数据不会丢失。"},
	"notice.case_taken":      {"You own this case now.", "您已接手此案例。"},
	"notice.case_moved":      {"Case updated.", "案例已更新。"},
	"notice.case_noted":      {"Note added.", "备注已添加。"},
	"notice.reconcile_done":  {"Reconcile run finished.", "对账已完成。"},
	"notice.reconcile_busy":  {"Another reconcile run is in progress; try again in a moment.", "另一个对账正在进行，请稍后再试。"},
	"notice.staff_added":     {"Account added.", "账号已添加。"},
	"notice.staff_updated":   {"Account updated.", "账号已更新。"},
	"notice.show_created":    {"Show created.", "场次已创建。"},
	"notice.seats_blocked":   {"Seats blocked.", "座位已保留。"},
	"notice.seats_unblocked": {"Seats unblocked.", "座位已取消保留。"},

	"dashboard.title":              {"Dashboard", "总览"},
	"dashboard.pending_now":        {"Pending holds now", "当前待支付锁座"},
	"dashboard.open_discrepancies": {"Open discrepancies", "未处理支付异常"},
	"dashboard.last_reconcile":     {"Last reconcile run", "最近一次对账"},
	"dashboard.last_hour":          {"Orders in the last hour", "最近一小时订单"},
	"dashboard.placed":             {"placed", "下单"},
	"dashboard.paid":               {"paid", "已支付"},
	"dashboard.cancelled":          {"cancelled", "已取消"},
	"dashboard.expired":            {"expired", "已超时"},
	"dashboard.lag":                {"Expiry lag, last hour", "超时取消延迟（最近一小时）"},
	"dashboard.lag_intro":          {"How long after its expire_time each expired hold was cancelled, by the path that cancelled it.", "每个超时锁座在到期后多久被取消，按取消途径区分。"},
	"dashboard.overdue":            {"Overdue holds, last hour", "逾期未取消的锁座（最近一小时）"},
	"dashboard.overdue_intro":      {"Holds still pending past their expire_time, every 5 minutes; now: %d.", "每 5 分钟统计已过期仍待支付的锁座；当前：%d。"},

	"holds.title":        {"Pending holds", "待支付锁座"},
	"holds.total":        {"%d in all", "共 %d 条"},
	"orders.title":       {"Orders", "订单"},
	"orders.q":           {"Find an order", "查找订单"},
	"orders.q_hint":      {"code, order no, seat, user, name, email, phone, txn", "取票码、订单号、座位、用户、姓名、邮箱、电话、交易号"},
	"orders.status":      {"Status", "状态"},
	"orders.any_status":  {"Any status", "全部状态"},
	"orders.code":        {"Code", "取票码"},
	"orders.customer":    {"Customer", "顾客"},
	"orders.none":        {"No order matches.", "没有匹配的订单。"},
	"orders.csv":         {"Export CSV", "导出 CSV"},
	"holds.search":       {"Order no", "订单号"},
	"holds.user":         {"User ID", "用户 ID"},
	"holds.show":         {"Show", "场次"},
	"holds.any_show":     {"Any show", "全部场次"},
	"holds.sort":         {"Sort", "排序"},
	"holds.sort_expire":  {"Expiring first", "最先超时"},
	"holds.sort_created": {"Newest first", "最新下单"},
	"holds.expires_in":   {"Expires in", "剩余时间"},
	"holds.expired":      {"expired", "已超时"},
	"holds.hops":         {"Timeout hops", "超时消息跳数"},
	"holds.next_due":     {"Next timeout due", "下次超时检查"},
	"holds.none":         {"No pending holds match.", "没有符合条件的待支付锁座。"},

	"pager.label":   {"Pages", "分页"},
	"pager.prev":    {"← Previous", "← 上一页"},
	"pager.next":    {"Next →", "下一页 →"},
	"pager.older":   {"Older →", "更早 →"},
	"pager.page":    {"Page %d", "第 %d 页"},
	"pager.page_of": {"Page %d of %d", "第 %d 页，共 %d 页"},

	"order.title":         {"Order", "订单"},
	"order.no":            {"Order no", "订单号"},
	"order.show":          {"Show", "场次"},
	"order.user":          {"User", "用户"},
	"order.seats":         {"Seats", "座位"},
	"order.amount":        {"Amount", "金额"},
	"order.created":       {"Created", "创建时间"},
	"order.expires":       {"Hold expires", "锁座到期"},
	"order.closed":        {"Closed", "结束时间"},
	"order.status":        {"Status", "状态"},
	"order.cancel_reason": {"Cancel reason", "取消原因"},
	"order.cancelled_by":  {"Cancelled by", "取消者"},
	"order.paid_txn":      {"Payment", "支付交易号"},
	"order.summary":       {"Summary", "概要"},
	"order.timeline":      {"Timeline", "时间线"},

	"status.pending":   {"pending", "待支付"},
	"status.paid":      {"paid", "已支付"},
	"status.cancelled": {"cancelled", "已取消"},
	"status.refunded":  {"refunded", "已退款"},

	"reason.timeout":        {"timeout", "超时"},
	"reason.customer":       {"customer", "顾客取消"},
	"reason.staff":          {"staff", "员工强制取消"},
	"reason.reconcile":      {"reconcile", "对账"},
	"reason.show_cancelled": {"show cancelled", "演出取消"},

	"cancel.title":             {"Force-cancel", "强制取消"},
	"cancel.reason":            {"Reason", "原因"},
	"cancel.button":            {"Force-cancel…", "强制取消…"},
	"cancel.reason_missing":    {"Give a reason for the cancel.", "请填写取消原因。"},
	"cancel.confirm_title":     {"Confirm force-cancel", "确认强制取消"},
	"cancel.confirm_text":      {"Cancel order %s and release seats %s? This cannot be undone.", "确定取消订单 %s 并释放座位 %s 吗？此操作无法撤销。"},
	"cancel.confirm_button":    {"Yes, force-cancel", "确认强制取消"},
	"cancel.done":              {"Order cancelled; its seats are released.", "订单已取消，座位已释放。"},
	"cancel.already_paid":      {"Already paid: the payment arrived first. Nothing was changed.", "已支付：付款先到达，未做任何更改。"},
	"cancel.already_cancelled": {"Already cancelled: the order had ended before your cancel. Nothing was changed.", "已取消：订单在您操作前已结束，未做任何更改。"},

	"ev.kind.placed":              {"Placed", "下单"},
	"ev.kind.timeout_scheduled":   {"Timeout hop scheduled", "超时消息已发送"},
	"ev.kind.timeout_send_failed": {"Timeout hop not sent", "超时消息发送失败"},
	"ev.kind.timeout_fired":       {"Timeout hop fired", "超时消息到达"},
	"ev.kind.cancelled":           {"Cancelled", "已取消"},
	"ev.kind.paid":                {"Paid", "已支付"},
	"ev.kind.payment_duplicate":   {"Duplicate payment callback", "重复支付回调"},
	"ev.kind.discrepancy":         {"Payment discrepancy", "支付异常"},
	"ev.kind.amount_mismatch":     {"Payment amount mismatch", "支付金额不符"},
	"ev.kind.seats_released":      {"Seats released", "座位已释放"},
	"ev.kind.seat_release_failed": {"Seat release failed", "座位释放失败"},
	"ev.kind.seats_sold":          {"Seats sold", "座位已售出"},
	"ev.kind.seat_sell_failed":    {"Marking seats sold failed", "座位标记售出失败"},
	"ev.kind.repaired":            {"Repaired by reconcile", "对账修复"},
	"ev.kind.extended":            {"Hold extended", "锁座已延长"},
	"ev.kind.refunded":            {"Refunded", "已退款"},
	"ev.kind.refund_requested":    {"Refund requested", "退款申请"},
	"ev.kind.refund_rejected":     {"Refund request rejected", "退款申请已驳回"},
	"ev.kind.end_attempt":         {"Attempt to end the order lost", "结束订单的尝试未成功"},
	"ev.by":                       {"by", "延长"},
	"ev.new_expire_at":            {"new expiry", "新到期时间"},
	"ev.winner_status":            {"order was", "订单状态"},
	"ev.outcome.lost":             {"lost", "落败"},
	"ev.outcome.not_expired":      {"not expired (extended)", "未到期（已延长）"},

	"race.title":           {"Who tried to end this order", "谁尝试结束了这个订单"},
	"race.intro":           {"Several actors tried to end the order; one conditional update won, the others found it ended.", "多个参与方尝试结束订单；只有一个条件更新成功，其他的发现订单已结束。"},
	"race.arrived":         {"Arrived", "到达时间"},
	"race.path":            {"Path", "途径"},
	"race.who":             {"Actor", "执行者"},
	"race.result":          {"Result", "结果"},
	"race.won":             {"won: ended the order", "成功：结束了订单"},
	"race.lost":            {"lost", "落败"},
	"race.repeats":         {"(and %d more times)", "（另有 %d 次）"},
	"race.path.timeout":    {"timeout", "超时消息"},
	"race.path.customer":   {"customer cancel", "顾客取消"},
	"race.path.staff":      {"staff force-cancel", "员工强制取消"},
	"race.path.reconcile":  {"reconcile", "对账"},
	"race.path.payment":    {"payment", "支付"},
	"race.did.timeout":     {"the timeout message was ignored", "超时消息被忽略"},
	"race.did.customer":    {"the customer was told the order had already ended", "已告知顾客订单已结束"},
	"race.did.staff":       {"staff were shown the real outcome; nothing changed", "已向员工显示实际结果，未做更改"},
	"race.did.reconcile":   {"reconcile left the order alone", "对账未处理该订单"},
	"race.did.payment":     {"the money was recorded as a discrepancy case for ops", "款项已记录为支付异常案例，交由运维处理"},
	"race.did.not_expired": {"the hold had been extended: no cancel", "锁座已被延长，未取消"},

	"counter.title":        {"Counter sale", "柜台售票"},
	"counter.pick":         {"Click seats on the map to add or remove them; shift-click adds a range in a row; arrow keys move between seats.", "点击座位图上的座位加入或移除；按住 Shift 点击可选同一排的一段；方向键在座位间移动。"},
	"counter.seats":        {"Seats", "座位"},
	"counter.count_one":    {"1 seat picked", "已选 1 个座位"},
	"counter.count_many":   {"%d seats picked", "已选 %d 个座位"},
	"counter.customer":     {"Customer (optional)", "顾客（可选）"},
	"customer.name":        {"Name", "姓名"},
	"customer.email":       {"Email", "邮箱"},
	"customer.phone":       {"Phone", "电话"},
	"counter.hold":         {"Hold seats", "锁定座位"},
	"counter.held":         {"Seats held. Take the payment before the hold runs out.", "座位已锁定。请在锁座到期前收款。"},
	"counter.paid":         {"Paid. Print the ticket below.", "已收款。请在下方打印票。"},
	"counter.paid_late":    {"The hold ended before the payment was recorded: the money is recorded as a discrepancy. Give it back or sell the seats again.", "收款记录前锁座已结束：该笔款项已记为支付异常。请退还或重新售座。"},
	"counter.pay_title":    {"Take payment: %s %s", "收款：%s %s"},
	"counter.tender":       {"Paid with", "支付方式"},
	"counter.reference":    {"Reference (card slip, note)", "凭证号（刷卡单号、备注）"},
	"counter.take_payment": {"Take payment", "收款"},
	"counter.err_no_seats": {"Pick at least one seat on the map.", "请在座位图上至少选择一个座位。"},
	"counter.err_taken":    {"No longer available: %s. Pick other seats.", "已不可售：%s。请选择其他座位。"},
	"counter.err_ended":    {"The hold has ended: this order can no longer be paid. Hold the seats again.", "锁座已结束，此订单不能再付款。请重新锁座。"},
	"tender.cash":          {"cash", "现金"},
	"tender.card":          {"card", "银行卡"},
	"order.box_office":     {"box office (no account)", "售票处（无账号）"},
	"order.customer":       {"Customer", "顾客"},

	"payments.title":                  {"Payments", "支付记录"},
	"payments.method.callback":        {"payment provider", "支付渠道"},
	"payments.method.counter":         {"at the counter", "柜台"},
	"payments.result.paid":            {"applied", "已入账"},
	"payments.result.discrepancy":     {"discrepancy", "异常"},
	"payments.result.amount_mismatch": {"wrong amount", "金额不符"},

	"ticket.title":    {"Ticket", "票"},
	"ticket.print":    {"Print ticket", "打印票"},
	"ticket.a6":       {"A6 card", "A6 卡片"},
	"ticket.receipt":  {"80 mm receipt", "80 毫米小票"},
	"ticket.back":     {"Back to the order", "返回订单"},
	"ticket.qr_label": {"QR code of order code %s", "订单码 %s 的二维码"},
	"ticket.row":      {"Row", "排"},
	"ticket.seat":     {"Seat", "座"},
	"ticket.total":    {"Total", "合计"},
	"ticket.order":    {"Order", "订单"},
	"ticket.paid":     {"Paid", "付款于"},

	"refund.title":                {"Refund", "退款"},
	"refund.reason":               {"Reason", "原因"},
	"refund.reference":            {"Payment provider reference (optional)", "支付渠道退款单号（可选）"},
	"refund.button":               {"Refund this order", "退款此订单"},
	"refund.needs_approval":       {"Above %s a refund needs ops' approval: this records a request.", "超过 %s 的退款需运维审批：提交后为退款申请。"},
	"refund.done":                 {"Order refunded; its seats are back on sale.", "订单已退款，座位已重新开放。"},
	"refund.requested":            {"Refund requested; it waits for ops' approval.", "已提交退款申请，等待运维审批。"},
	"refund.rejected":             {"Refund request rejected; the order stays paid.", "退款申请已驳回，订单仍为已支付。"},
	"refund.list":                 {"Refunds", "退款记录"},
	"refund.approve_text":         {"%s asks to refund %s.", "%s 申请退款 %s。"},
	"refund.approve":              {"Approve and refund", "批准并退款"},
	"refund.reject":               {"Reject", "驳回"},
	"refund.reject_note":          {"Why not", "驳回原因"},
	"refund.err_reason":           {"Give a reason for the refund.", "请填写退款原因。"},
	"refund.err_note":             {"Say why the request is rejected.", "请填写驳回原因。"},
	"refund.err_reason_long":      {"The reason may have at most %d characters; it has %d.", "退款原因最多 %d 个字符，当前 %d 个。"},
	"refund.err_reference_long":   {"The payment reference may have at most %d characters; it has %d.", "支付参考号最多 %d 个字符，当前 %d 个。"},
	"refund.err_note_long":        {"The note may have at most %d characters; it has %d.", "驳回说明最多 %d 个字符，当前 %d 个。"},
	"refund.err_already_refunded": {"This order has already been refunded.", "此订单已退款。"},
	"refund.err_order_not_paid":   {"Only a paid order can be refunded.", "只有已支付的订单可以退款。"},
	"refund.err_refund_pending":   {"A refund request for this order already waits for approval.", "此订单已有待审批的退款申请。"},
	"refund.err_refund_decided":   {"That refund request has already been decided.", "该退款申请已处理。"},
	"refund.state.requested":      {"requested", "待审批"},
	"refund.state.refunded":       {"refunded", "已退款"},
	"refund.state.rejected":       {"rejected", "已驳回"},
	"refund.state.superseded":     {"superseded", "已被取代"},
	"extend.title":                {"Extend the hold", "延长锁座"},
	"extend.minutes":              {"Minutes", "分钟"},
	"extend.reason":               {"Reason", "原因"},
	"extend.button":               {"Extend", "延长"},
	"extend.limit":                {"A hold may last %s in all; at most %s more for this one.", "锁座总时长最多 %s；此订单最多还可延长 %s。"},
	"extend.done":                 {"Hold extended: it now expires at %s.", "锁座已延长，新的到期时间为 %s。"},
	"extend.err_minutes":          {"Give a whole number of minutes from 1 to 120.", "请填写 1 到 120 之间的整数分钟。"},
	"extend.err_reason":           {"Give a reason for the extension.", "请填写延长原因。"},
	"extend.err_limit":            {"That would make the hold longer than allowed.", "延长后将超过锁座允许的最长时间。"},
	"extend.err_expired":          {"The hold has already expired; its seats are being released.", "锁座已到期，座位正在释放。"},
	"extend.err_not_pending":      {"The order has already ended: nothing was changed.", "订单已结束，未做任何更改。"},

	"ev.hop":               {"hop", "跳数"},
	"ev.level":             {"delay level", "延迟级别"},
	"ev.level_timer":       {"exact timer", "精确定时"},
	"ev.delay":             {"delay", "延迟"},
	"ev.due_at":            {"due", "到期"},
	"ev.outcome":           {"outcome", "结果"},
	"ev.outcome.ignored":   {"ignored", "忽略"},
	"ev.outcome.rearmed":   {"re-armed", "重新投递"},
	"ev.outcome.cancelled": {"cancelled", "已取消"},
	"ev.remaining":         {"time left", "剩余时间"},
	"ev.next_level":        {"next level", "下一级别"},
	"ev.late":              {"late by", "延迟了"},
	"ev.current_hop":       {"current hop", "当前跳数"},
	"ev.reason":            {"reason", "原因"},
	"ev.actor":             {"by", "操作者"},
	"ev.note":              {"note", "备注"},
	"ev.seats":             {"seats", "座位"},
	"ev.released":          {"released", "已释放"},
	"ev.txn":               {"transaction", "交易号"},
	"ev.method":            {"method", "渠道"},
	"ev.tender":            {"paid with", "支付方式"},
	"ev.reference":         {"reference", "凭证号"},
	"ev.amount":            {"amount", "金额"},
	"ev.order_amount":      {"order amount", "订单金额"},
	"ev.order_status":      {"order status", "订单状态"},
	"ev.status":            {"status", "状态"},
	"ev.discrepancy_kind":  {"kind", "类型"},
	"ev.check":             {"check", "检查项"},
	"ev.expire_at":         {"hold expires", "锁座到期"},
	"ev.user":              {"user", "用户"},
	"ev.show":              {"show", "场次"},
	"ev.error":             {"error", "错误"},
	"ev.trace":             {"trace id", "追踪 ID"},

	"shows.title":            {"Seat maps", "座位图"},
	"shows.name":             {"Show", "场次"},
	"shows.venue":            {"Venue", "场馆"},
	"shows.starts":           {"Starts", "开始时间"},
	"shows.seats":            {"Seats", "座位数"},
	"shows.none":             {"No shows yet.", "暂无场次。"},
	"shows.new":              {"Set up a show…", "新建场次…"},
	"shows.status":           {"Status", "状态"},
	"shows.occupancy":        {"Occupancy", "上座率"},
	"shows.occupancy_detail": {"%d sold, %d held, %d blocked, %d available", "已售 %d，锁定 %d，保留 %d，可售 %d"},
	"shows.revenue":          {"Revenue", "收入"},
	"show_status.on_sale":    {"on sale", "在售"},
	"show_status.cancelled":  {"cancelled", "已取消"},

	"newshow.title":         {"Set up a show", "新建场次"},
	"newshow.name":          {"Name", "名称"},
	"newshow.venue":         {"Venue", "场馆"},
	"newshow.starts":        {"Starts", "开始时间"},
	"newshow.currency":      {"Currency (ISO 4217)", "币种（ISO 4217）"},
	"newshow.categories":    {"Price categories, one per line: code,name,price in cents", "价格类别，每行一个：代码,名称,价格（分）"},
	"newshow.plan":          {"Seat plan", "座位图"},
	"newshow.grid":          {"A grid of rows A, B, …", "按行（A、B…）生成的网格"},
	"newshow.rows":          {"Rows", "行数"},
	"newshow.per_row":       {"Seats per row", "每行座位数"},
	"newshow.category":      {"Category", "类别"},
	"newshow.upload":        {"An uploaded plan", "上传座位图"},
	"newshow.upload_help":   {"CSV with the header section,row,number,category,x,y, or JSON {\"seats\":[{\"seat_id\",\"section\",\"row\",\"number\",\"category\",\"x\",\"y\"}]}; up to 20,000 seats.", "CSV 表头为 section,row,number,category,x,y，或 JSON {\"seats\":[…]}；最多 20,000 个座位。"},
	"newshow.create":        {"Create the show", "创建场次"},
	"newshow.preview":       {"Preview the map", "预览座位图"},
	"newshow.preview_title": {"Preview: nothing is saved until you create the show", "预览：创建场次前不会保存"},
	"newshow.preview_total": {"Sold out", "售罄合计"},
	"newshow.plan_kept":     {"The plan file of the preview is kept: choose another file only to replace it.", "已保留预览时上传的座位文件；只有需要替换时才重新选择文件。"},

	"block.title":             {"Block seats", "保留座位"},
	"block.unblock_title":     {"Unblock seats", "取消保留"},
	"block.seats":             {"Seats (separated by spaces or commas)", "座位（以空格或逗号分隔）"},
	"block.reason":            {"Reason", "原因"},
	"block.block":             {"Block", "保留"},
	"block.unblock":           {"Unblock", "取消保留"},
	"block.reason.house":      {"house", "主办保留"},
	"block.reason.wheelchair": {"wheelchair", "轮椅位"},
	"block.reason.technical":  {"technical", "技术保留"},
	"block.reason.other":      {"other", "其他"},

	"seat.available":    {"available", "可售"},
	"seat.locked":       {"locked", "已锁定"},
	"seat.sold":         {"sold", "已售出"},
	"seat.blocked":      {"blocked", "已保留"},
	"seat.live":         {"live", "实时"},
	"seat.reconnecting": {"reconnecting…", "重新连接中…"},
	"seat.stage":        {"Stage", "舞台"},
	"seat.pick":         {"Pick a seat to see its order.", "点击座位查看其订单。"},
	"seat.seat":         {"Seat", "座位"},
	"seat.state":        {"State", "状态"},
	"seat.price":        {"Price", "价格"},

	"disc.title":                {"Payment discrepancies", "支付异常"},
	"disc.intro":                {"Money that arrived but could not be applied. Take a case, refund it (or write it off) and record what was done; the oldest come first.", "已收到但无法入账的款项。接手案例，退款（或核销）并记录处理过程；最早的排在最前。"},
	"disc.filter":               {"Filter", "筛选"},
	"disc.kind":                 {"Kind", "类型"},
	"disc.any_kind":             {"Any kind", "全部类型"},
	"disc.state":                {"State", "状态"},
	"disc.owner":                {"Owner", "负责人"},
	"disc.unowned":              {"nobody has taken it", "无人接手"},
	"disc.nobody":               {"nobody", "无人"},
	"disc.age":                  {"Waiting", "等待时间"},
	"disc.last_note":            {"Latest note", "最新备注"},
	"disc.none":                 {"No discrepancies here.", "没有支付异常。"},
	"disc.tab.active":           {"to do", "待处理"},
	"disc.tab.all":              {"all", "全部"},
	"disc.tab.open":             {"open", "新建"},
	"disc.tab.refund_requested": {"refund requested", "已申请退款"},
	"disc.tab.refund_failed":    {"refund failed", "退款失败"},
	"disc.tab.refunded":         {"refunded", "已退款"},
	"disc.tab.written_off":      {"written off", "已核销"},

	"case.title":                  {"Discrepancy case", "支付异常案例"},
	"case.state.open":             {"open", "新建"},
	"case.state.refund_requested": {"refund requested", "已申请退款"},
	"case.state.refund_failed":    {"refund failed", "退款失败"},
	"case.state.refunded":         {"refunded", "已退款"},
	"case.state.written_off":      {"written off", "已核销"},
	"case.waiting":                {"(%s ago)", "（%s 前）"},
	"case.closed":                 {"Closed", "结案"},
	"case.take":                   {"Take this case", "接手此案例"},
	"case.move":                   {"Move the case", "变更案例状态"},
	"case.to":                     {"To", "变更为"},
	"case.note":                   {"Note", "备注"},
	"case.note_placeholder":       {"e.g. refund ref 12345 at the bank", "例如：银行退款流水号 12345"},
	"case.move_button":            {"Move", "变更"},
	"case.add_note":               {"Add a note", "添加备注"},
	"case.note_button":            {"Add note", "添加"},
	"case.refund_hook":            {"Refunds are made outside SeatFlow today: record the result here.", "目前退款在 SeatFlow 之外完成，请在此记录结果。"},
	"case.history":                {"History", "处理记录"},
	"case.system":                 {"SeatFlow", "SeatFlow"},
	"case.opened":                 {"opened (payment could not be applied)", "创建（款项无法入账）"},
	"case.action.take":            {"took the case", "接手案例"},
	"case.action.note":            {"added a note", "添加备注"},
	"case.err_transition":         {"The case cannot move to that state from where it is.", "案例无法从当前状态变更为该状态。"},
	"case.err_closed":             {"The case is closed.", "案例已结案。"},
	"case.err_note":               {"Give a note on what was done.", "请填写处理备注。"},
	"case.err_busy":               {"Someone else is changing this case right now; try again.", "其他人正在修改此案例，请重试。"},

	"disc.kind.paid_after_cancel": {"paid after cancel", "取消后支付"},
	"disc.kind.second_payment":    {"second payment", "重复支付"},
	"disc.kind.amount_mismatch":   {"amount mismatch", "金额不符"},
	"disc.kind.unknown_order":     {"unknown order", "未知订单"},
	"disc.kind.txn_conflict":      {"txn id reused", "交易号冲突"},
	"disc.kind.paid_after_refund": {"paid after refund", "退款后支付"},

	"reconcile.title":             {"Reconcile", "对账"},
	"reconcile.run_now":           {"Run now", "立即对账"},
	"reconcile.started":           {"Started", "开始"},
	"reconcile.finished":          {"Finished", "结束"},
	"reconcile.trigger":           {"Trigger", "触发方式"},
	"reconcile.trigger.schedule":  {"schedule", "定时"},
	"reconcile.trigger.manual":    {"manual", "手动"},
	"reconcile.trigger.cli":       {"command line", "命令行"},
	"reconcile.trigger.sweep":     {"expiry sweep", "超时清扫"},
	"reconcile.status":            {"Status", "状态"},
	"reconcile.status.running":    {"running", "运行中"},
	"reconcile.status.ok":         {"ok", "正常"},
	"reconcile.status.errors":     {"errors", "有错误"},
	"reconcile.status.aborted":    {"aborted", "已中止"},
	"reconcile.status.abandoned":  {"abandoned", "已放弃"},
	"reconcile.checks":            {"Checks", "检查项"},
	"reconcile.check":             {"check", "检查项"},
	"reconcile.found":             {"found", "发现"},
	"reconcile.fixed":             {"fixed", "修复"},
	"reconcile.errors":            {"errors", "错误"},
	"reconcile.error":             {"Error", "错误"},
	"reconcile.none":              {"No runs yet.", "暂无对账记录。"},
	"reconcile.summary":           {"found %d, fixed %d, errors %d", "发现 %d，修复 %d，错误 %d"},
	"reconcile.unavailable":       {"Reconcile is not available on this server yet.", "此服务器尚未启用对账。"},
	"reconcile.unavailable_short": {"not available", "不可用"},
	"reconcile.dry_run":           {"Dry run", "试运行"},
	"reconcile.dry_run_intro":     {"A dry run runs every check but repairs nothing: it lists what each would repair, item by item; apply it from its page.", "试运行会执行所有检查但不做任何修复，逐项列出每项检查将要修复的内容；可在其页面上应用。"},
	"reconcile.dry":               {"dry run", "试运行"},
	"reconcile.run":               {"Reconcile run", "对账记录"},
	"reconcile.dry_run_note":      {"Nothing was changed: this is what each check would repair.", "未做任何更改：以下是各项检查将要修复的内容。"},
	"reconcile.apply_all":         {"Apply: repair these %d items", "应用：修复这 %d 项"},
	"reconcile.apply_note":        {"Runs every check again and repairs what is still wrong; items that righted themselves are left alone.", "再次执行所有检查并修复仍存在的问题；已自行恢复的项目不会被处理。"},
	"reconcile.applied_title":     {"What became of the items of dry run #%d", "试运行 #%d 各项的处理结果"},
	"reconcile.extra_items":       {"%d items were not in the dry run: they arose after it.", "%d 项不在试运行中：它们是之后出现的。"},
	"reconcile.no_items":          {"Nothing found.", "未发现问题。"},
	"reconcile.sample":            {"Showing the first %d of %d.", "显示前 %d 项，共 %d 项。"},
	"reconcile.action":            {"Repair", "修复动作"},
	"reconcile.result":            {"Result", "结果"},
	"reconcile.action.cancel":     {"cancel the expired order", "取消过期订单"},
	"reconcile.action.mark_sold":  {"mark the seats sold", "标记座位已售"},
	"reconcile.action.delete_row": {"delete the orphan seat row", "删除孤立座位记录"},
	"reconcile.action.release":    {"release the stale lock", "释放过期锁"},
	"reconcile.action.relock":     {"lock the seats again", "重新锁定座位"},
	"reconcile.action.set_limit":  {"fix the purchase counter", "修正限购计数"},
	"reconcile.action.report":     {"report to ops", "报告给运维"},
	"reconcile.result.would":      {"would repair", "将修复"},
	"reconcile.result.report":     {"report only", "仅报告"},
	"reconcile.result.fixed":      {"repaired", "已修复"},
	"reconcile.result.failed":     {"repair failed:", "修复失败："},
	"reconcile.result.skipped":    {"left alone", "未处理"},
	"reconcile.result.gone":       {"no longer there", "已不存在"},

	"reconcile.action.release_sold": {"free the refunded seats", "释放已退款座位"},
	"reconcile.action.block":        {"block the seats again", "重新封锁座位"},
	"reconcile.action.unblock":      {"unblock the seats", "解除座位封锁"},

	"audit.title":  {"Audit log", "审计日志"},
	"audit.at":     {"When", "时间"},
	"audit.staff":  {"Who", "操作者"},
	"audit.action": {"Action", "操作"},
	"audit.target": {"Target", "对象"},
	"audit.detail": {"Detail", "详情"},
	"audit.ip":     {"From", "来源地址"},
	"audit.none":   {"Nothing recorded yet.", "暂无记录。"},

	"audit.action.login":               {"logged in", "登录"},
	"audit.action.login_failed":        {"failed login", "登录失败"},
	"audit.action.logout":              {"logged out", "退出登录"},
	"audit.action.force_cancel":        {"force-cancel", "强制取消"},
	"audit.action.resolve_discrepancy": {"resolved discrepancy", "处理支付异常"},
	"audit.action.extend_hold":         {"extended a hold", "延长锁座"},
	"audit.action.discrepancy_take":    {"took a discrepancy case", "接手支付异常案例"},
	"audit.action.discrepancy_move":    {"moved a discrepancy case", "变更支付异常案例"},
	"audit.action.discrepancy_note":    {"noted a discrepancy case", "备注支付异常案例"},
	"audit.action.reconcile_run":       {"ran reconcile", "执行对账"},
	"audit.action.reconcile_dry_run":   {"ran a reconcile dry run", "执行对账试运行"},
	"audit.action.reconcile_apply":     {"applied a reconcile dry run", "应用对账试运行"},
	"audit.action.staff_add":           {"added account", "添加账号"},
	"audit.action.staff_disable":       {"disabled account", "停用账号"},
	"audit.action.staff_enable":        {"enabled account", "启用账号"},
	"audit.action.show_create":         {"set up a show", "新建场次"},
	"audit.action.seats_block":         {"blocked seats", "保留座位"},
	"audit.action.seats_unblock":       {"unblocked seats", "取消保留座位"},

	"staff.title":        {"Staff accounts", "员工账号"},
	"staff.username":     {"Username", "用户名"},
	"staff.password":     {"Password", "密码"},
	"staff.role":         {"Role", "角色"},
	"staff.created":      {"Created", "创建时间"},
	"staff.state":        {"State", "状态"},
	"staff.active":       {"active", "启用"},
	"staff.disabled":     {"disabled", "已停用"},
	"staff.disable":      {"Disable", "停用"},
	"staff.enable":       {"Enable", "启用"},
	"staff.add":          {"Add an account", "添加账号"},
	"staff.add_button":   {"Add account", "添加"},
	"staff.err_exists":   {"That username is taken.", "该用户名已存在。"},
	"staff.err_username": {"Usernames are 2-64 lower-case letters, digits, '.', '_' or '-'.", "用户名须为 2-64 位小写字母、数字、'.'、'_' 或 '-'。"},
	"staff.err_password": {"Passwords need 10 to 72 characters.", "密码须为 10 到 72 个字符。"},
	"staff.err_role":     {"Pick a role.", "请选择角色。"},

	"error.request_id":      {"Request id:", "请求 ID："},
	"error.home":            {"Back to the dashboard", "返回总览"},
	"error.403.role":        {"Your role is %s.", "您的角色是 %s。"},
	"error.400.title":       {"Bad request", "请求无效"},
	"error.400.text":        {"The request could not be understood.", "无法理解该请求。"},
	"error.403.title":       {"Not allowed", "无权访问"},
	"error.403.text":        {"Your role does not allow this page or action.", "您的角色无权访问此页面或执行此操作。"},
	"error.404.title":       {"Not found", "页面不存在"},
	"error.404.text":        {"There is nothing at this address.", "此地址没有内容。"},
	"error.429.title":       {"Too many requests", "请求过多"},
	"error.429.text":        {"Wait a minute and try again.", "请稍等一分钟再试。"},
	"error.500.title":       {"Something went wrong", "出错了"},
	"error.500.text":        {"The console could not do this. It has been logged; try again or ask ops.", "控制台无法完成此操作，错误已记录；请重试或联系运维。"},
	"error.csrf":            {"This form has expired. Reload the page and try again.", "表单已过期，请刷新页面后重试。"},
	"apikeys.title":         {"API keys", "API 密钥"},
	"apikeys.shown_once":    {"The new key, shown this once only: copy it now. Only its hash is stored.", "新密钥仅显示这一次，请立即复制。系统只保存其哈希值。"},
	"apikeys.prefix":        {"Key", "密钥"},
	"apikeys.name":          {"Name", "名称"},
	"apikeys.scopes":        {"Scopes", "权限范围"},
	"apikeys.created_by":    {"Created by", "创建者"},
	"apikeys.created":       {"Created", "创建时间"},
	"apikeys.last_used":     {"Last used", "最近使用"},
	"apikeys.state":         {"State", "状态"},
	"apikeys.active":        {"active", "有效"},
	"apikeys.revoked":       {"revoked", "已吊销"},
	"apikeys.revoke":        {"Revoke", "吊销"},
	"apikeys.add":           {"Add a key", "添加密钥"},
	"apikeys.add_button":    {"Create key", "创建密钥"},
	"staff.apikeys_link":    {"API keys for the front end and other systems", "前端及其他系统的 API 密钥"},
	"notice.apikey_revoked": {"API key revoked.", "API 密钥已吊销。"},
}
