package server

import (
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/reconcile"
	"seatflow/web"
)

// TestReconcileItemsSayNotes: the console shows an item's detail from its
// notes, in the reader's language, not the English kept for logs.
func TestReconcileItemsSayNotes(t *testing.T) {
	it := reconcile.Item{OrderNo: "SF1", Action: reconcile.ActionCancel, Detail: "pending 1m30s past its expiry",
		Notes: []core.Phrase{core.Say("reconcile.note.expired", core.ArgDuration(90*time.Second))}}
	run := webRun(reconcile.Run{Checks: []reconcile.CheckResult{{Name: "expired_pending", Found: 1, Items: []reconcile.Item{it}}}})
	got := run.Checks[0].Items[0]
	p := web.Page{Lang: web.LangZH}
	if say := p.Say(got.Notes, got.Detail); !strings.Contains(say, "1 分 30 秒") {
		t.Errorf("the console says %q, want the notes in Chinese", say)
	}
}
