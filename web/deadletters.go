package web

import "seatflow/core"

// NavDeadLetters is the ops nav entry of the dead-letter page.
const NavDeadLetters = "dead_letters"

// DeadLettersData is the dead-letter page: newest first, at most Limit.
type DeadLettersData struct {
	Letters []core.DeadLetter
	Limit   int
}

// deadLetterTexts are the dead-letter page's catalog entries, kept beside
// the page; init adds them to the catalog before anything reads it.
var deadLetterTexts = map[string]entry{
	"nav.dead_letters":               {"Dead letters", "死信"},
	"dead_letters.title":             {"Dead letters", "死信"},
	"dead_letters.intro":             {"Timeout messages whose handling failed every allowed attempt. Nothing retries them on its own; the reconcile sweep still ends an expired hold. Retry sends the message again, due now.", "处理超时消息的每次尝试都失败后，消息成为死信，不再自动重试；对账巡检仍会结束已过期的锁座。“重试”会立即重新发送该消息。"},
	"dead_letters.order":             {"Order", "订单"},
	"dead_letters.hop":               {"Hop", "跳数"},
	"dead_letters.attempts":          {"Attempts", "尝试次数"},
	"dead_letters.last_error":        {"Last error", "最后错误"},
	"dead_letters.at":                {"When", "时间"},
	"dead_letters.source":            {"Queue", "队列"},
	"dead_letters.retry":             {"Retry", "重试"},
	"dead_letters.none":              {"No dead letters.", "没有死信。"},
	"dead_letters.no_error":          {"(not recorded)", "（未记录）"},
	"dead_letters.limited":           {"Showing the newest %d.", "仅显示最新的 %d 条。"},
	"notice.dead_letter_retried":     {"Sent again; the dead letter is removed.", "已重新发送，死信已移除。"},
	"audit.action.dead_letter_retry": {"retried a dead letter", "重试死信"},
}

func init() {
	for k, e := range deadLetterTexts {
		if _, dup := catalog[k]; dup {
			panic("web: catalog key " + k + " defined twice")
		}
		catalog[k] = e
	}
}
