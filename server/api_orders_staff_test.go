package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
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

// TestAPIEventsNameTheKey: what a key does to an order on a customer's
// behalf (place, cancel) names the key on the order's events, beside the
// customer.
func TestAPIEventsNameTheKey(t *testing.T) {
	a := newTestApp(t)
	key, secret := a.addKey("storefront", access.ScopeOrdersWrite, access.ScopeOrdersRead)
	bearer := []string{"Authorization", "Bearer " + secret}
	rec := a.do("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":7,"show_id":%d,"seat_ids":["A-1"]}`, a.show.ID), bearer...)
	if rec.Code != 201 {
		t.Fatalf("place: %d %s", rec.Code, rec.Body)
	}
	no := decode(t, rec)["order_no"].(string)
	if rec := a.do("POST", "/api/v1/orders/"+no+"/cancel", `{"user_id":7}`, bearer...); rec.Code != 200 {
		t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
	}
	events, err := a.app.DB.Events(t.Context(), no)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{core.EventPlaced: false, core.EventCancelled: false}
	for _, ev := range events {
		if _, ok := want[ev.Kind]; ok {
			want[ev.Kind] = ev.Detail["via"] == "api:"+key.Prefix
		}
	}
	for kind, named := range want {
		if !named {
			t.Errorf("%s event does not name the key api:%s: %v", kind, key.Prefix, events)
		}
	}
}
