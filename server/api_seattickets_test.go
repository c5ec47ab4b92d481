package server

import (
	"fmt"
	"net/http"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
)

// TestAPISeatTickets: a paid order's API answer lists each seat's own
// ticket code (a pending order's none), and at the door a seat's code
// admits that seat only while the order code admits the rest; every
// exchange is checked against openapi.json by a.do.
func TestAPISeatTickets(t *testing.T) {
	a := newTestApp(t)
	paid := a.place(1, "A-1", "A-2")
	no, code := paid["order_no"].(string), paid["code"].(string)
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-S1","amount_cents":%v}`, no, paid["amount_cents"])); rec.Code != http.StatusOK {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	pending := a.place(2, "B-1")["order_no"].(string)
	if b := decode(t, a.do("GET", "/api/v1/orders/"+pending, "")); b["tickets"] != nil {
		t.Errorf("a pending order's answer has tickets: %v", b["tickets"])
	}
	rec := a.do("GET", "/api/v1/orders/"+code, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("get order: %d %s", rec.Code, rec.Body)
	}
	seatCode := map[string]string{}
	for _, tk := range decode(t, rec)["tickets"].([]any) {
		tk := tk.(map[string]any)
		c, _ := tk["code"].(string)
		if n, isSeat, ok := core.NormalizeTicketCode(c); !ok || !isSeat || n != c || c == code {
			t.Errorf("ticket %v: want a seat code of its own", tk)
		}
		seatCode[tk["seat_id"].(string)] = c
	}
	if len(seatCode) != 2 || seatCode["A-1"] == "" || seatCode["A-2"] == "" || seatCode["A-1"] == seatCode["A-2"] {
		t.Fatalf("tickets by seat %v: want A-1 and A-2, each its own code", seatCode)
	}
	_, door := a.addKey("north door", access.ScopeCheckin)
	auth := []string{"Authorization", "Bearer " + door}
	for _, step := range []struct {
		name, code   string
		status       int
		seats, first string
		count        float64
	}{
		{"A-1's code admits A-1 only", seatCode["A-1"], 200, "[A-1]", "", 1},
		{"A-1's code again", seatCode["A-1"], 409, "[A-1]", "north", 0},
		{"the order code admits the rest", code, 200, "[A-2]", "", 2},
		{"A-2's code after the order code", seatCode["A-2"], 409, "[A-2]", "north", 0},
	} {
		rec := a.do("POST", "/api/v1/checkins", fmt.Sprintf(`{"code":%q,"gate":"north"}`, step.code), auth...)
		if rec.Code != step.status {
			t.Fatalf("%s: %d %s", step.name, rec.Code, rec.Body)
		}
		b := decode(t, rec)
		if step.status == http.StatusOK {
			if fmt.Sprint(b["seats"]) != step.seats || b["admitted_count"] != step.count || b["seat_count"] != float64(2) {
				t.Errorf("%s: %v", step.name, b)
			}
			continue
		}
		detail := b["error"].(map[string]any)["detail"].(map[string]any)
		if errorCode(t, rec) != "already_checked_in" || fmt.Sprint(detail["seats"]) != step.seats ||
			detail["first"].(map[string]any)["gate"] != step.first {
			t.Errorf("%s: %v", step.name, b)
		}
	}
}
