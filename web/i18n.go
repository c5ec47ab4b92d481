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

	"nav.dashboard":     {"Dashboard", "总览"},
	"nav.holds":         {"Pending holds", "待支付锁座"},
	"nav.shows":         {"Seat maps", "座位图"},
	"nav.discrepancies": {"Discrepancies", "支付异常"},
	"nav.reconcile":     {"Reconcile", "对账"},
	"nav.audit":         {"Audit log", "审计日志"},
	"nav.staff":         {"Staff", "员工账号"},

	"role.box_office": {"box office", "售票处"},
	"role.ops":        {"ops", "运维"},
	"role.admin":      {"admin", "管理员"},

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

	"notice.logged_out":       {"You are logged out.", "您已退出登录。"},
	"notice.resolved":         {"Discrepancy marked resolved.", "异常已标记为已处理。"},
	"notice.already_resolved": {"That discrepancy was already resolved.", "该异常此前已被处理。"},
	"notice.reconcile_done":   {"Reconcile run finished.", "对账已完成。"},
	"notice.staff_added":      {"Account added.", "账号已添加。"},
	"notice.staff_updated":    {"Account updated.", "账号已更新。"},

	"dashboard.title":              {"Dashboard", "总览"},
	"dashboard.pending_now":        {"Pending holds now", "当前待支付锁座"},
	"dashboard.open_discrepancies": {"Open discrepancies", "未处理支付异常"},
	"dashboard.last_reconcile":     {"Last reconcile run", "最近一次对账"},
	"dashboard.last_hour":          {"Orders in the last hour", "最近一小时订单"},
	"dashboard.placed":             {"placed", "下单"},
	"dashboard.paid":               {"paid", "已支付"},
	"dashboard.cancelled":          {"cancelled", "已取消"},
	"dashboard.expired":            {"expired", "已超时"},

	"holds.title":        {"Pending holds", "待支付锁座"},
	"holds.total":        {"%d in all", "共 %d 条"},
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

	"reason.timeout":   {"timeout", "超时"},
	"reason.customer":  {"customer", "顾客取消"},
	"reason.staff":     {"staff", "员工强制取消"},
	"reason.reconcile": {"reconcile", "对账"},

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

	"shows.title":  {"Seat maps", "座位图"},
	"shows.name":   {"Show", "场次"},
	"shows.venue":  {"Venue", "场馆"},
	"shows.starts": {"Starts", "开始时间"},
	"shows.seats":  {"Seats", "座位数"},
	"shows.none":   {"No shows yet.", "暂无场次。"},

	"seat.available":    {"available", "可售"},
	"seat.locked":       {"locked", "已锁定"},
	"seat.sold":         {"sold", "已售出"},
	"seat.live":         {"live", "实时"},
	"seat.reconnecting": {"reconnecting…", "重新连接中…"},
	"seat.stage":        {"Stage", "舞台"},
	"seat.pick":         {"Pick a seat to see its order.", "点击座位查看其订单。"},
	"seat.seat":         {"Seat", "座位"},
	"seat.state":        {"State", "状态"},
	"seat.price":        {"Price", "价格"},

	"disc.title":            {"Payment discrepancies", "支付异常"},
	"disc.intro":            {"Money that arrived but could not be applied: refund it, then mark it resolved with a note.", "已收到但无法入账的款项：请退款，然后填写备注标记为已处理。"},
	"disc.filter":           {"Filter", "筛选"},
	"disc.open":             {"open", "未处理"},
	"disc.resolved":         {"resolved", "已处理"},
	"disc.all":              {"all", "全部"},
	"disc.kind":             {"Kind", "类型"},
	"disc.state":            {"State", "状态"},
	"disc.resolution":       {"Resolution", "处理"},
	"disc.note":             {"Note", "备注"},
	"disc.note_placeholder": {"e.g. refunded, ticket #123", "例如：已退款，工单 #123"},
	"disc.resolve":          {"Mark resolved", "标记已处理"},
	"disc.none":             {"No discrepancies here.", "没有支付异常。"},
	"notice.note_missing":   {"Give a note on how it was resolved.", "请填写处理备注。"},

	"disc.kind.paid_after_cancel": {"paid after cancel", "取消后支付"},
	"disc.kind.second_payment":    {"second payment", "重复支付"},
	"disc.kind.amount_mismatch":   {"amount mismatch", "金额不符"},

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
	"audit.action.reconcile_run":       {"ran reconcile", "执行对账"},
	"audit.action.staff_add":           {"added account", "添加账号"},
	"audit.action.staff_disable":       {"disabled account", "停用账号"},
	"audit.action.staff_enable":        {"enabled account", "启用账号"},

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

	"error.request_id": {"Request id:", "请求 ID："},
	"error.home":       {"Back to the dashboard", "返回总览"},
	"error.403.role":   {"Your role is %s.", "您的角色是 %s。"},
	"error.400.title":  {"Bad request", "请求无效"},
	"error.400.text":   {"The request could not be understood.", "无法理解该请求。"},
	"error.403.title":  {"Not allowed", "无权访问"},
	"error.403.text":   {"Your role does not allow this page or action.", "您的角色无权访问此页面或执行此操作。"},
	"error.404.title":  {"Not found", "页面不存在"},
	"error.404.text":   {"There is nothing at this address.", "此地址没有内容。"},
	"error.429.title":  {"Too many requests", "请求过多"},
	"error.429.text":   {"Wait a minute and try again.", "请稍等一分钟再试。"},
	"error.500.title":  {"Something went wrong", "出错了"},
	"error.500.text":   {"The console could not do this. It has been logged; try again or ask ops.", "控制台无法完成此操作，错误已记录；请重试或联系运维。"},
	"error.csrf":       {"This form has expired. Reload the page and try again.", "表单已过期，请刷新页面后重试。"},
}
