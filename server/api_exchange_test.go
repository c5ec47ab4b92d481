package server

import (
	"fmt"
	"slices"
	"testing"
)

// An exchange through the API: a dearer seat needs the storefront's
// payment_reference, a cheaper one is refunded at once, refusals write
// nothing; every answer is checked against openapi.json (a.do).
func TestAPIExchangeSeats(t *testing.T) {
	a := newTestApp(t)
	placed := a.place(7, "C-1", "C-2") // 2 × 1000
	no := placed["order_no"].(string)
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-EX1","amount_cents":2000}`, no)); rec.Code != 200 {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	a.place(8, "B-4") // pending: its seat is not free
	tests := []struct {
		name, body string
		status     int
		code       string // error code, or "" for an exchange
		diff       int64
		seats      []string // the order's afterwards
		amount     int64
	}{
		{"dearer, unpaid", `{"from":["C-1"],"to":["A-1"],"reason":"upgrade"}`, 409, "difference_unpaid", 0, nil, 0},
		{"a seat held by another order", `{"from":["C-1"],"to":["B-4"],"reason":"x"}`, 409, "seat_unavailable", 0, nil, 0},
		{"counts differ", `{"from":["C-1"],"to":["A-1","A-2"],"reason":"x"}`, 400, "invalid_request", 0, nil, 0},
		{"no reason", `{"from":["C-1"],"to":["A-1"],"reason":" "}`, 400, "invalid_request", 0, nil, 0},
		{"dearer, vouched for", `{"from":["C-1"],"to":["A-1"],"reason":"upgrade","payment_reference":"ch_1"}`, 200, "", 500,
			[]string{"A-1", "C-2"}, 2500},
		{"cheaper, refunded", `{"from":["A-1"],"to":["C-3"],"reason":"back"}`, 200, "", -500, []string{"C-2", "C-3"}, 2000},
		{"the same request again", `{"from":["A-1"],"to":["C-3"],"reason":"back"}`, 409, "seats_not_in_order", 0, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := a.counts()
			rec := a.do("POST", "/api/v1/orders/"+no+"/exchange", tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.code != "" {
				if code := errorCode(t, rec); code != tc.code {
					t.Errorf("code %q, want %q", code, tc.code)
				}
				if after := a.counts(); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Errorf("a refused exchange wrote rows: %v → %v", before, after)
				}
				return
			}
			got := decode(t, rec)
			order, _ := got["order"].(map[string]any)
			var seats []string
			for _, s := range order["seat_ids"].([]any) {
				seats = append(seats, s.(string))
			}
			if !slices.Equal(seats, tc.seats) || order["amount_cents"] != float64(tc.amount) || got["difference_cents"] != float64(tc.diff) {
				t.Errorf("answer %v, want seats %v for %d, difference %d", got, tc.seats, tc.amount, tc.diff)
			}
			if _, paid := got["payment_txn_id"]; paid != (tc.diff > 0) {
				t.Errorf("payment_txn_id in %v, want it only for a difference paid", got)
			}
			if _, refunded := got["refund"]; refunded != (tc.diff < 0) {
				t.Errorf("refund in %v, want it only for a difference given back", got)
			}
		})
	}
}
