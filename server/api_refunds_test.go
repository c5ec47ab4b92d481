package server

import (
	"fmt"
	"strings"
	"testing"
)

// The refund call: every bad input is a 4xx with a code and writes nothing;
// a paid order is refunded once (by order number or short code), its seats
// go back on sale and its purchase limit is given back.
func TestRefundOrder(t *testing.T) {
	a := newTestApp(t)
	paid := a.place(7, "A-1", "A-2")
	paidNo, paidCode := paid["order_no"].(string), paid["code"].(string)
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-R1","amount_cents":3000}`, paidNo)); rec.Code != 200 {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	pending := a.place(8, "B-1")["order_no"].(string)
	cancelled := a.place(9, "C-1")["order_no"].(string)
	if rec := a.do("POST", "/api/v1/orders/"+cancelled+"/cancel", `{"user_id":9}`); rec.Code != 200 {
		t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
	}

	refundRows := func() int { return a.count("refund") }
	tests := []struct {
		name, order, body string
		status            int
		code              string // error code, or "" for the refund
	}{
		{"unknown order", "SF0000", `{"reason":"x"}`, 404, "order_not_found"},
		{"malformed", paidNo, `{"reason":`, 400, "invalid_request"},
		{"unknown field", paidNo, `{"reason":"x","amount_cents":5}`, 400, "invalid_request"},
		{"reason missing", paidNo, `{"reference":"R-1"}`, 400, "invalid_request"},
		{"reason blank", paidNo, `{"reason":"   "}`, 400, "invalid_request"},
		{"reason too long", paidNo, fmt.Sprintf(`{"reason":%q}`, strings.Repeat("é", 501)), 400, "invalid_request"},
		{"reference too long", paidNo, fmt.Sprintf(`{"reason":"x","reference":%q}`, strings.Repeat("r", 129)), 400, "invalid_request"},
		{"pending order", pending, `{"reason":"changed mind"}`, 409, "order_not_paid"},
		{"cancelled order", cancelled, `{"reason":"changed mind"}`, 409, "order_not_paid"},
		{"by short code", paidCode, `{"reason":"show moved","reference":"R-1"}`, 200, ""},
		{"second refund", paidNo, `{"reason":"again"}`, 409, "already_refunded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, rowsBefore := a.counts(), refundRows()
			rec := a.do("POST", "/api/v1/orders/"+tc.order+"/refund", tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.code != "" {
				if code := errorCode(t, rec); code != tc.code {
					t.Errorf("code %q, want %q", code, tc.code)
				}
				if after := a.counts(); fmt.Sprint(after) != fmt.Sprint(before) || refundRows() != rowsBefore {
					t.Errorf("a refused refund wrote rows: %v → %v", before, after)
				}
				return
			}
			got := decode(t, rec)
			order, _ := got["order"].(map[string]any)
			refund, _ := got["refund"].(map[string]any)
			if order["order_no"] != paidNo || order["status"] != "refunded" {
				t.Errorf("order %v, want %s refunded", order, paidNo)
			}
			if refund["state"] != "refunded" || refund["amount_cents"] != 3000.0 || refund["reference"] != "R-1" || refund["actor"] != "api:SEATFLOW_API_TOKEN" {
				t.Errorf("refund %v", refund)
			}
			if refundRows() != rowsBefore+1 {
				t.Errorf("refund rows %d, want %d", refundRows(), rowsBefore+1)
			}
		})
	}

	if st := a.seatStates(); st["A-1"] != "available" || st["A-2"] != "available" || st["B-1"] != "locked" {
		t.Errorf("seats after the refund: %v", st)
	}
	if s := decode(t, a.do("GET", "/api/v1/orders/"+paidNo, ""))["status"]; s != "refunded" {
		t.Errorf("order status %v after refund", s)
	}
	// The limit is 4 seats per user: user 7 had 2 sold; given back, 3 more fit.
	a.place(7, "A-1", "A-2", "A-3")
}
