package server

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

// TestConsoleDeadLetterRetryAuditInsertFault: a timeout message that failed
// every attempt is listed for ops (order, attempts, last error, in English
// and Chinese); Retry with the audit insert failing changes nothing; Retry
// then sends it through the queue again, removes the dead letter and writes
// one audit row, on the embedded and the real stack.
func TestConsoleDeadLetterRetryAuditInsertFault(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ctx := context.Background()
		delivered := make(chan core.TimeoutMsg, 8)
		if err := st.Queue.Consume(ctx, core.PerTimeout(func(_ context.Context, msg core.TimeoutMsg) error {
			delivered <- msg
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		o := env.place(9, "B-2")
		msg := core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 7, DueAt: o.ExpireAt.UTC().Truncate(time.Millisecond), TraceID: "trace-dl"}
		d := core.NewDeadLetter(core.DeadLetterDBQueue, msg, 3, "injected fault: handler always fails for "+o.OrderNo, time.Now())
		if added, err := env.db.AddDeadLetter(ctx, d); err != nil || !added {
			t.Fatalf("add dead letter: %v %v", added, err)
		}
		letters, err := env.db.DeadLetters(ctx, 10)
		if err != nil || len(letters) != 1 {
			t.Fatalf("dead letters %+v, %v", letters, err)
		}
		id := letters[0].ID
		if letters[0].Msg != msg {
			t.Errorf("stored message %+v, want %+v", letters[0].Msg, msg)
		}

		ops := env.login(access.RoleOps)
		page := ops.do("GET", "/console/dead-letters", nil, nil)
		if page.Code != http.StatusOK {
			t.Fatalf("dead-letter page: %d", page.Code)
		}
		for _, want := range []string{o.OrderNo, "injected fault", "<td>3</td>", "/dead-letters/", `href="/console/dead-letters"`} {
			if !strings.Contains(page.Body.String(), want) {
				t.Errorf("dead-letter page lacks %q", want)
			}
		}
		ops.cookies[langCookie] = &http.Cookie{Name: langCookie, Value: "zh-CN"}
		if zh := ops.do("GET", "/console/dead-letters", nil, nil).Body.String(); !strings.Contains(zh, "死信") || !strings.Contains(zh, "重试") {
			t.Errorf("Chinese dead-letter page lacks its texts: %.300s", zh)
		}

		retry := "/console/dead-letters/" + strconv.FormatInt(id, 10) + "/retry"
		restore := failAuditInserts(t, env.db)
		rec := ops.post(retry, url.Values{})
		restore()
		if rec.Code < 500 {
			t.Errorf("audit insert failing: status %d, want an error page", rec.Code)
		}
		if _, err := env.db.DeadLetter(ctx, id); err != nil {
			t.Errorf("audit insert failing: the dead letter is gone: %v", err)
		}
		if n := env.auditCount(core.AuditRetryDeadLetter); n != 0 {
			t.Errorf("audit insert failing: %d audit rows", n)
		}

		rec = ops.post(retry, url.Values{})
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/console/dead-letters?msg=dead_letter_retried" {
			t.Fatalf("retry: %d to %q", rec.Code, rec.Header().Get("Location"))
		}
		if _, err := env.db.DeadLetter(ctx, id); err == nil {
			t.Error("dead letter still listed after its retry")
		}
		entries, err := env.db.AuditLog(ctx, store.AuditQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var audited []core.AuditEntry
		for _, a := range entries {
			if a.Action == core.AuditRetryDeadLetter {
				audited = append(audited, a)
			}
		}
		if len(audited) != 1 || audited[0].Target != "order:"+o.OrderNo || audited[0].Staff != env.staff[access.RoleOps].Username {
			t.Errorf("audit rows %+v, want one by ops for order:%s", audited, o.OrderNo)
		}
		// Both the failed and the successful retry sent the message: the
		// handler is idempotent, so a duplicate is the price of never losing it.
		select {
		case got := <-delivered:
			if got.OrderNo != msg.OrderNo || got.Hop != msg.Hop || got.TraceID != msg.TraceID {
				t.Errorf("redelivered %+v, want %+v", got, msg)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("retried message never delivered")
		}
		if rec := ops.post(retry, url.Values{}); rec.Code != http.StatusNotFound {
			t.Errorf("second retry: %d, want 404", rec.Code)
		}
		if err := reconcile.CheckInvariants(ctx, st.DB, st.Seats, time.Now()); err != nil {
			t.Error(err)
		}
	})
}
