package server

import (
	"fmt"
	"net/http"
	"testing"
)

// The waiting list through the API: a manager opens a sold-out show's
// list, buyers join and poll, a cancelled hold's seats reach the first
// entry as its offer (paid like any order), and every refusal has its
// code; every answer is checked against openapi.json (a.do).
func TestAPIWaitlist(t *testing.T) {
	a := newTestApp(t)
	show := a.newShow() // 3 × 4 seats
	list := fmt.Sprintf("/api/v1/shows/%d/waitlist", show)
	if rec := a.do("GET", list, ""); rec.Code != 200 || decode(t, rec)["enabled"] != false {
		t.Fatalf("a list never set: %d %s", rec.Code, rec.Body)
	}
	join := func(user int64, body string) (int, map[string]any) {
		t.Helper()
		rec := a.do("POST", list, fmt.Sprintf(`{"user_id":%d,%s}`, user, body))
		if rec.Code >= 300 {
			return rec.Code, map[string]any{"code": errorCode(t, rec)}
		}
		return rec.Code, decode(t, rec)
	}
	if code, got := join(1, `"count":1`); code != http.StatusConflict || got["code"] != "waitlist_closed" {
		t.Errorf("joining a closed list: %d %v", code, got)
	}
	if rec := a.do("PUT", list, `{"enabled":true,"join_when":"sold_out","offer_ttl_seconds":600}`); rec.Code != 200 {
		t.Fatalf("open the list: %d %s", rec.Code, rec.Body)
	}
	if code, got := join(1, `"count":1`); code != http.StatusConflict || got["code"] != "waitlist_not_sold_out" {
		t.Errorf("joining while seats are on sale: %d %v", code, got)
	}
	holds := map[string]string{} // first seat → order number
	for i, pair := range [][]string{{"A-1", "A-2"}, {"A-3", "A-4"}, {"B-1", "B-2"}, {"B-3", "B-4"}, {"C-1", "C-2"}, {"C-3", "C-4"}} {
		rec := a.placeOn(show, int64(10+i), pair...)
		if rec.Code != http.StatusCreated {
			t.Fatalf("sell out: %d %s", rec.Code, rec.Body)
		}
		holds[pair[0]] = decode(t, rec)["order_no"].(string)
	}
	refusals := []struct {
		name, body string
		status     int
		code       string
	}{
		{"no seats", `"count":0`, 400, "invalid_request"},
		{"more than one order may hold", `"count":11`, 400, "invalid_request"},
		{"an unknown category", `"count":1,"category":"VIP"`, 400, "unknown_category"},
		{"an unknown key", `"count":1,"seats":2`, 400, "invalid_request"},
		{"a control character in the name", `"count":1,"customer":{"name":"Ann\u0018Lee"}`, 400, "invalid_customer_name"},
		{"a bad email", `"count":1,"customer":{"name":"Ann","email":"ann"}`, 400, "invalid_customer_email"},
		{"a bad phone", `"count":1,"customer":{"name":"Ann","phone":"call me"}`, 400, "invalid_customer_phone"},
	}
	for _, r := range refusals {
		if code, got := join(2, r.body); code != r.status || got["code"] != r.code {
			t.Errorf("%s: %d %v, want %d %s", r.name, code, got, r.status, r.code)
		}
	}
	code, first := join(2, `"count":2,"together":true,"customer":{"name":"Ann Lee"}`)
	if code != http.StatusCreated || first["state"] != "waiting" || first["position"] != float64(1) {
		t.Fatalf("join: %d %v", code, first)
	}
	if code, again := join(2, `"count":4`); code != http.StatusOK || again["entry"] != first["entry"] || again["count"] != float64(2) {
		t.Errorf("joining again: %d %v, want the first entry", code, again)
	}
	_, second := join(3, `"count":1`)
	if second["position"] != float64(2) {
		t.Errorf("second in line at %v", second["position"])
	}
	entry := "/api/v1/waitlist/" + first["entry"].(string)
	if rec := a.do("POST", "/api/v1/orders/"+holds["B-1"]+"/cancel", `{"user_id":12}`); rec.Code != 200 {
		t.Fatalf("cancel a hold: %d %s", rec.Code, rec.Body)
	}
	got := decode(t, a.do("GET", entry, ""))
	offer, _ := got["offer"].(map[string]any)
	if got["state"] != "offered" || offer == nil || fmt.Sprint(offer["seat_ids"]) != "[B-1 B-2]" {
		t.Fatalf("after the cancel: %v", got)
	}
	order := decode(t, a.do("GET", "/api/v1/orders/"+offer["order_no"].(string), ""))
	if order["source"] != "waitlist" || order["user_id"] != float64(2) || order["status"] != "pending" {
		t.Errorf("the offer's order: %v", order)
	}
	if got := decode(t, a.do("GET", "/api/v1/waitlist/"+second["entry"].(string), "")); got["state"] != "waiting" || got["position"] != float64(1) {
		t.Errorf("the next entry, nothing left for it: %v", got)
	}
	if rec := a.placeOn(show, 99, "B-1"); rec.Code != http.StatusConflict {
		t.Errorf("a public placement on a handed seat: %d %s", rec.Code, rec.Body)
	}
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-WL1","amount_cents":%v}`, offer["order_no"], offer["amount_cents"])); rec.Code != 200 {
		t.Fatalf("pay the offer: %d %s", rec.Code, rec.Body)
	}
	if got := decode(t, a.do("GET", entry, "")); got["state"] != "accepted" {
		t.Errorf("after the payment: %v", got["state"])
	}
	if got := decode(t, a.do("DELETE", entry, "")); got["state"] != "accepted" {
		t.Errorf("withdrawing a paid offer: %v", got["state"])
	}
	if rec := a.do("GET", "/api/v1/waitlist/wl_nope", ""); rec.Code != 404 || errorCode(t, rec) != "waitlist_entry_not_found" {
		t.Errorf("an unknown entry: %d %s", rec.Code, rec.Body)
	}
}
