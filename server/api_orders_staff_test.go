package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"seatflow/core"
)

// TestAPITimelineHidesStaff: an API reader sees that staff acted on an
// order, not which member of staff: the names are the console's.
func TestAPITimelineHidesStaff(t *testing.T) {
	a := newTestApp(t)
	o := a.place(7, "A-1")
	no := o["order_no"].(string)
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-1","amount_cents":%v}`, no, o["amount_cents"])); rec.Code != 200 {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	if _, err := a.app.Refunds.Refund(t.Context(), core.RefundRequest{OrderNo: no, Reason: "illness",
		Actor: "staff:alice"}); err != nil {
		t.Fatal(err)
	}
	rec := a.do("GET", "/api/v1/orders/"+no, "")
	if rec.Code != 200 || strings.Contains(rec.Body.String(), "alice") {
		t.Fatalf("timeline names the member of staff: %d %s", rec.Code, rec.Body)
	}
	var got orderDetailJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var refunded map[string]any
	for _, ev := range got.Events {
		if ev.Kind == core.EventRefunded {
			refunded = ev.Detail
		}
	}
	if refunded["actor"] != "staff" || refunded["approved_by"] != "staff" || refunded["reason"] != "illness" {
		t.Errorf("refunded event %v, want its actors as \"staff\" and the rest kept", refunded)
	}
}
