package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A partial refund through the API: seat_ids refunds those seats for their
// prices, the order stays paid with the rest; bad seat lists are 4xx and
// write nothing; a repeat refunds nothing; the last seats end the order.
func TestRefundOrderSeats(t *testing.T) {
	a := newTestApp(t)
	placed := a.place(7, "A-1", "A-2", "A-3")
	no := placed["order_no"].(string)
	total := int64(placed["amount_cents"].(float64))
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-RS1","amount_cents":%d}`, no, total)); rec.Code != 200 {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	seat := total / 3 // row A: one price
	many, _ := json.Marshal(slices.Repeat([]string{"A-1"}, 101))
	tests := []struct {
		name, seats string
		status      int
		code        string   // error code, or "" for a refund
		cents       int64    // the refund's amount
		orderStatus string   // the order's afterwards
		kept        []string // the order's seats afterwards
	}{
		{"a seat of no order", `["A-1","J-9"]`, 409, "seats_not_in_order", 0, "", nil},
		{"a seat named twice", `["A-1","A-1"]`, 400, "invalid_request", 0, "", nil},
		{"an empty seat id", `[""]`, 400, "invalid_request", 0, "", nil},
		{"too many seats", string(many), 400, "invalid_request", 0, "", nil},
		{"not a list", `"A-1"`, 400, "invalid_request", 0, "", nil},
		{"one seat", `["A-1"]`, 200, "", seat, "paid", []string{"A-2", "A-3"}},
		{"the same request again", `["A-1"]`, 409, "seats_not_in_order", 0, "", nil},
		{"the rest", `["A-3","A-2"]`, 200, "", total - seat, "refunded", []string{"A-2", "A-3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, rowsBefore := a.counts(), a.count("refund")
			rec := a.do("POST", "/api/v1/orders/"+no+"/refund", `{"reason":"two of us cannot come","seat_ids":`+tc.seats+`}`)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.code != "" {
				if code := errorCode(t, rec); code != tc.code {
					t.Errorf("code %q, want %q", code, tc.code)
				}
				if after := a.counts(); fmt.Sprint(after) != fmt.Sprint(before) || a.count("refund") != rowsBefore {
					t.Errorf("a refused refund wrote rows: %v → %v", before, after)
				}
				return
			}
			got := decode(t, rec)
			order, _ := got["order"].(map[string]any)
			refund, _ := got["refund"].(map[string]any)
			if refund["state"] != "refunded" || refund["amount_cents"] != float64(tc.cents) {
				t.Errorf("refund %v, want %d cents", refund, tc.cents)
			}
			// Audited in the refund's transaction, naming the seats.
			var detail string
			if err := a.app.DB.X().Get(&detail, "SELECT detail FROM audit_log WHERE action = 'refund' AND target = ? ORDER BY id DESC LIMIT 1",
				"order:"+no); err != nil || !strings.Contains(detail, `"seat_ids":`+strings.ReplaceAll(tc.seats, `["A-3","A-2"]`, `["A-2","A-3"]`)) {
				t.Errorf("audit detail %s %v, want seat_ids %s", detail, err, tc.seats)
			}
			if order["status"] != tc.orderStatus || fmt.Sprint(order["seat_ids"]) != fmt.Sprint(tc.kept) {
				t.Errorf("order %s with %v, want %s with %v", order["status"], order["seat_ids"], tc.orderStatus, tc.kept)
			}
		})
	}
	st := a.seatStates()
	for _, s := range []string{"A-1", "A-2", "A-3"} {
		if st[s] != "available" {
			t.Errorf("seat %s is %s after the refunds, want available", s, st[s])
		}
	}
	var refunded int64
	if err := a.app.DB.X().Get(&refunded, "SELECT SUM(amount_cents) FROM refund WHERE order_no = ?", no); err != nil {
		t.Fatal(err)
	}
	if refunded != total {
		t.Errorf("refunded %d cents of %d paid", refunded, total)
	}
}
