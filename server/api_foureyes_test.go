package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
)

// TestAPIRefundThroughKey: a key names itself on what it does — the refund
// row, the timeline and an audit row carry "api:<prefix>" and the key's name
// — and above the approval threshold its refund is a request for staff, as
// a clerk's is: a key is a credential someone minted, never a second person.
func TestAPIRefundThroughKey(t *testing.T) {
	a := newTestApp(t, "SEATFLOW_REFUND_APPROVAL_CENTS", "2500")
	key, secret := a.addKey("back office", access.ScopeRefunds, access.ScopeOrdersRead, access.ScopeOrdersWrite)
	actor := "api:" + key.Prefix
	bearer := []string{"Authorization", "Bearer " + secret}
	paidOrder := func(user int64, seats ...string) string {
		t.Helper()
		o := a.place(user, seats...)
		no := o["order_no"].(string)
		if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-%s","amount_cents":%v}`, no, no, o["amount_cents"])); rec.Code != 200 {
			t.Fatalf("pay: %d %s", rec.Code, rec.Body)
		}
		return no
	}
	audited := func(t *testing.T, action, orderNo string) core.AuditEntry {
		t.Helper()
		rows, err := a.app.DB.AuditLog(t.Context(), store.AuditQuery{Action: action, Target: "order:" + orderNo, Limit: 10})
		if err != nil || len(rows) != 1 {
			t.Fatalf("%s audit rows for %s: %+v %v", action, orderNo, rows, err)
		}
		return rows[0]
	}

	tests := []struct {
		name   string
		seats  []string
		status int
		state  string
		audit  string
	}{
		{"at most the threshold: one step", []string{"A-1"}, http.StatusOK, "refunded", core.AuditRefund},
		{"above the threshold: a request", []string{"A-2", "A-3", "A-4"}, http.StatusAccepted, "requested", core.AuditRefundRequest},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			no := paidOrder(int64(20+i), tc.seats...)
			rec := a.do("POST", "/api/v1/orders/"+no+"/refund", `{"reason":"show moved"}`, bearer...)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			got := decode(t, rec)
			refund, _ := got["refund"].(map[string]any)
			if refund["state"] != tc.state || refund["actor"] != actor {
				t.Errorf("refund %v, want %s by %s", refund, tc.state, actor)
			}
			rows, err := a.app.Refunds.Store().OrderRefunds(t.Context(), no)
			if err != nil || len(rows) != 1 || rows[0].RequestedBy != actor {
				t.Errorf("refund rows %+v %v, want requested by %s", rows, err, actor)
			}
			e := audited(t, tc.audit, no)
			if e.Staff != actor || !strings.Contains(fmt.Sprint(e.Detail), "back office") {
				t.Errorf("audit row %+v, want by %s naming the key", e, actor)
			}
		})
	}

	pending := a.place(30, "C-1")["order_no"].(string)
	if rec := a.do("POST", "/api/v1/orders/"+pending+"/extend", `{"user_id":30,"minutes":5}`, bearer...); rec.Code != 200 {
		t.Fatalf("extend: %d %s", rec.Code, rec.Body)
	}
	_, events, err := a.app.engine.Order(t.Context(), pending)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Kind == core.EventExtended && ev.Detail["actor"] != actor {
			t.Errorf("extension recorded as %v, want %s", ev.Detail["actor"], actor)
		}
	}
}
