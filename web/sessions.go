package web

import "seatflow/core/access"

// SessionsData is the sessions page: the signed-in account's live
// sessions, the most recently used first.
type SessionsData struct {
	Sessions []access.Session
	// Current is the token hash of the session viewing the page; it is
	// compared, never shown.
	Current string
}

// sessionTexts are the sessions page's catalog entries, kept beside the
// page; init adds them to the catalog before anything reads it.
var sessionTexts = map[string]entry{
	"sessions.link":                    {"Sessions", "登录会话"},
	"sessions.title":                   {"Your sessions", "您的登录会话"},
	"sessions.intro":                   {"Where this account is logged in. A session ends after 12 hours, or sooner when it is not used for a while; last use is recorded to the minute.", "本账号当前登录的位置。会话在 12 小时后结束，闲置一段时间后也会提前结束；最近使用时间精确到分钟。"},
	"sessions.created":                 {"Logged in", "登录时间"},
	"sessions.last_used":               {"Last used", "最近使用"},
	"sessions.ip":                      {"From", "来源地址"},
	"sessions.user_agent":              {"Browser", "浏览器"},
	"sessions.this":                    {"this session", "当前会话"},
	"sessions.end_others":              {"Log out everywhere else", "退出其他所有会话"},
	"sessions.end_all":                 {"Log out everywhere", "退出所有会话"},
	"notice.sessions_ended":            {"Your other sessions are logged out.", "您的其他会话已退出。"},
	"staff.end_sessions":               {"End sessions", "结束会话"},
	"notice.staff_sessions_ended":      {"That account is logged out everywhere.", "该账号已在所有位置退出。"},
	"audit.action.sessions_end_others": {"logged out everywhere else", "退出其他会话"},
	"audit.action.sessions_end_all":    {"logged out everywhere", "退出所有会话"},
	"audit.action.staff_sessions_end":  {"ended an account's sessions", "结束账号的会话"},
}

func init() {
	for k, e := range sessionTexts {
		if _, dup := catalog[k]; dup {
			panic("web: catalog key " + k + " defined twice")
		}
		catalog[k] = e
	}
}
