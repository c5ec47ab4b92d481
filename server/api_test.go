package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAuth(t *testing.T) {
	a := newTestApp(t)
	routes := []struct{ method, path string }{
		{"GET", "/api/v1/shows"},
		{"GET", "/api/v1/shows/1/seats"},
		{"POST", "/api/v1/orders"},
		{"GET", "/api/v1/orders/SF1"},
		{"POST", "/api/v1/orders/SF1/cancel"},
		// The payment callback takes no key: TestPaymentCallbackSecrets.
	}
	auths := []struct {
		name, header string
	}{
		{"missing", ""},
		{"wrong scheme", "Basic " + testToken},
		{"wrong token", "Bearer " + testToken + "x"},
		{"prefix of token", "Bearer " + testToken[:10]},
		{"no token", "Bearer "},
	}
	for _, r := range routes {
		for _, au := range auths {
			t.Run(r.method+" "+r.path+"/"+au.name, func(t *testing.T) {
				rec := a.do(r.method, r.path, `{}`, "Authorization", au.header)
				if rec.Code != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401; body %s", rec.Code, rec.Body)
				}
				if code := errorCode(t, rec); code != "unauthorized" {
					t.Errorf("code %q, want unauthorized", code)
				}
				if rec.Header().Get("WWW-Authenticate") == "" {
					t.Error("no WWW-Authenticate header")
				}
			})
		}
	}
	if rec := a.do("GET", "/api/v1/shows", "", "Authorization", "bearer "+testToken); rec.Code != http.StatusOK {
		t.Errorf("lower-case scheme: status %d, want 200", rec.Code)
	}
	if n := a.count("order_info"); n != 0 {
		t.Errorf("unauthorized calls wrote %d orders", n)
	}
}

func TestShowsAndSeats(t *testing.T) {
	a := newTestApp(t)
	rec := a.do("GET", "/api/v1/shows", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("shows: status %d: %s", rec.Code, rec.Body)
	}
	var shows struct {
		Shows []showJSON `json:"shows"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &shows); err != nil {
		t.Fatal(err)
	}
	if len(shows.Shows) != 1 || shows.Shows[0].ID != a.show.ID || shows.Shows[0].Name != "Test Show" ||
		shows.Shows[0].Rows != 3 || shows.Shows[0].Cols != 4 {
		t.Fatalf("shows = %+v", shows.Shows)
	}
	if _, err := time.Parse(time.RFC3339, shows.Shows[0].StartsAt); err != nil {
		t.Errorf("starts_at: %v", err)
	}

	rec = a.do("GET", fmt.Sprintf("/api/v1/shows/%d/seats", a.show.ID), "")
	var seats struct {
		Seats []seatJSON `json:"seats"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &seats); err != nil {
		t.Fatal(err)
	}
	if len(seats.Seats) != 12 {
		t.Fatalf("%d seats, want 12", len(seats.Seats))
	}
	if got, want := seats.Seats[0], (seatJSON{SeatID: "A-1", Row: 1, Col: 1, PriceCents: 1500, State: "available",
		RowLabel: "A", Number: 1, X: 1, Y: 1}); got != want {
		t.Errorf("first seat %+v, want %+v", got, want)
	}

	// The state follows the order: locked when placed, sold when paid.
	o := a.place(7, "B-1", "B-2")
	if st := a.seatStates(); st["B-1"] != "locked" || st["B-2"] != "locked" || st["B-3"] != "available" {
		t.Errorf("after place: %v", st)
	}
	a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T1","amount_cents":2500}`, o["order_no"]))
	if st := a.seatStates(); st["B-1"] != "sold" || st["B-2"] != "sold" {
		t.Errorf("after pay: %v", st)
	}

	for _, tc := range []struct {
		path   string
		status int
		code   string
	}{
		{"/api/v1/shows/999/seats", 404, "show_not_found"},
		{"/api/v1/shows/0/seats", 400, "invalid_request"},
		{"/api/v1/shows/-1/seats", 400, "invalid_request"},
		{"/api/v1/shows/abc/seats", 400, "invalid_request"},
		{"/api/v1/shows/99999999999999999999/seats", 400, "invalid_request"},
	} {
		rec := a.do("GET", tc.path, "")
		if rec.Code != tc.status || errorCode(t, rec) != tc.code {
			t.Errorf("GET %s: %d %s, want %d %s", tc.path, rec.Code, rec.Body, tc.status, tc.code)
		}
	}
}

func TestPlaceOrder(t *testing.T) {
	a := newTestApp(t)
	before := time.Now()
	rec := a.do("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":7,"show_id":%d,"seat_ids":["A-2","A-1"]}`, a.show.ID))
	if rec.Code != http.StatusCreated {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var o orderJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &o); err != nil {
		t.Fatal(err)
	}
	if o.OrderNo == "" || o.Status != "pending" || o.UserID != 7 || o.ShowID != a.show.ID ||
		o.AmountCents != 3000 || !slices.Equal(o.SeatIDs, []string{"A-1", "A-2"}) {
		t.Errorf("order = %+v", o)
	}
	exp, err := time.Parse(time.RFC3339, o.ExpireTime)
	if err != nil {
		t.Fatalf("expire_time %q: %v", o.ExpireTime, err)
	}
	// The default hold is 15 minutes.
	if d := exp.Sub(before); d < 15*time.Minute-time.Second || d > 15*time.Minute+5*time.Second {
		t.Errorf("expire_time %v is %v after the request, want about 15m", exp, d)
	}
	if loc := rec.Header().Get("Location"); loc != "/api/v1/orders/"+o.OrderNo {
		t.Errorf("Location %q", loc)
	}
	if got := a.counts(); got["order_info"] != 1 || got["order_seat"] != 2 || got["delay_task"] != 1 {
		t.Errorf("rows after place: %v", got)
	}
}

// Bad input is a 4xx with a clear code, and nothing is written anywhere:
// not in the DB, not in the seat store, not in the delay queue.
func TestPlaceOrderBadInput(t *testing.T) {
	a := newTestApp(t)
	show := a.show.ID
	tests := []struct {
		name    string
		body    string
		status  int
		code    string
		message string // substring of error.message
	}{
		{"empty body", ``, 400, "invalid_request", "empty"},
		{"malformed", `{"user_id":1,`, 400, "invalid_request", "truncated"},
		{"syntax error", `{"user_id":1,,}`, 400, "invalid_request", "malformed JSON"},
		{"not an object", `[1,2]`, 400, "invalid_request", "JSON object"},
		{"null", `null`, 400, "invalid_request", "user_id must be a positive integer"},
		{"two values", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["A-1"]} {}`, show), 400, "invalid_request", "exactly one"},
		{"unknown field", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["A-1"],"vip":true}`, show), 400, "invalid_request", `unknown field "vip"`},
		{"user_id string", fmt.Sprintf(`{"user_id":"1","show_id":%d,"seat_ids":["A-1"]}`, show), 400, "invalid_request", "user_id must be a positive integer"},
		{"user_id fraction", fmt.Sprintf(`{"user_id":1.5,"show_id":%d,"seat_ids":["A-1"]}`, show), 400, "invalid_request", "user_id must be a positive integer"},
		{"user_id overflow", fmt.Sprintf(`{"user_id":1e30,"show_id":%d,"seat_ids":["A-1"]}`, show), 400, "invalid_request", "user_id must be a positive integer"},
		{"user_id zero", fmt.Sprintf(`{"user_id":0,"show_id":%d,"seat_ids":["A-1"]}`, show), 400, "invalid_request", "user_id must be a positive integer"},
		{"user_id negative", fmt.Sprintf(`{"user_id":-3,"show_id":%d,"seat_ids":["A-1"]}`, show), 400, "invalid_request", "user_id must be a positive integer"},
		{"user_id missing", fmt.Sprintf(`{"show_id":%d,"seat_ids":["A-1"]}`, show), 400, "invalid_request", "user_id"},
		{"show_id negative", `{"user_id":1,"show_id":-1,"seat_ids":["A-1"]}`, 400, "invalid_request", "show_id must be a positive integer"},
		{"seat_ids missing", fmt.Sprintf(`{"user_id":1,"show_id":%d}`, show), 400, "invalid_request", "seat_ids"},
		{"seat_ids empty", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":[]}`, show), 400, "invalid_request", "seat_ids"},
		{"seat_ids not array", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":"A-1"}`, show), 400, "invalid_request", "seat_ids must be an array of strings"},
		{"seat id a number", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":[1]}`, show), 400, "invalid_request", "seat_ids must be an array of strings"},
		{"duplicate seats", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["A-1","A-1"]}`, show), 400, "invalid_request", "twice"},
		{"seat id too long", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["%s"]}`, show, strings.Repeat("A", 17)), 400, "invalid_request", "seat id"},
		{"seat id empty", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":[""]}`, show), 400, "invalid_request", "seat id"},
		{"too many seats", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["A-1","A-2","A-3","A-4"]}`, show), 400, "invalid_request", "at most 3"},
		{"unknown seat", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["Z-99"]}`, show), 400, "invalid_request", "Z-99"},
		{"unknown show", `{"user_id":1,"show_id":999,"seat_ids":["A-1"]}`, 404, "show_not_found", "show"},
		{"huge body", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["%s"]}`, show, strings.Repeat("A", 70<<10)), 413, "body_too_large", "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := a.do("POST", "/api/v1/orders", tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d; body %s", rec.Code, tc.status, rec.Body)
			}
			if code := errorCode(t, rec); code != tc.code {
				t.Errorf("code %q, want %q", code, tc.code)
			}
			if msg := decode(t, rec)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, tc.message) {
				t.Errorf("message %q does not mention %q", msg, tc.message)
			}
		})
	}
	for table, n := range a.counts() {
		if n != 0 {
			t.Errorf("bad input wrote %d rows to %s", n, table)
		}
	}
	for seat, st := range a.seatStates() {
		if st != "available" {
			t.Errorf("bad input left seat %s %s", seat, st)
		}
	}
}

func TestPlaceOrderHugeBodyByContentLength(t *testing.T) {
	a := newTestApp(t)
	body := strings.Repeat(" ", 65<<10) + `{}`
	rec := a.do("POST", "/api/v1/orders", body, "Content-Length", strconv.Itoa(len(body)))
	if rec.Code != http.StatusRequestEntityTooLarge || errorCode(t, rec) != "body_too_large" {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
}

func TestPlaceOrderConflicts(t *testing.T) {
	a := newTestApp(t)
	a.place(1, "A-1", "A-2")

	rec := a.do("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":2,"show_id":%d,"seat_ids":["A-2","A-3"]}`, a.show.ID))
	if rec.Code != http.StatusConflict || errorCode(t, rec) != "seat_unavailable" {
		t.Fatalf("taken seat: %d %s, want 409 seat_unavailable", rec.Code, rec.Body)
	}
	var body errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(body.Error.Seats, []string{"A-2"}) {
		t.Errorf("error.seats = %v, want [A-2]", body.Error.Seats)
	}
	if st := a.seatStates(); st["A-3"] != "available" {
		t.Errorf("all or nothing: A-3 is %s", st["A-3"])
	}

	// The purchase limit is 4 seats per user and show: 2 held + 3 more is over.
	rec = a.do("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["C-1","C-2","C-3"]}`, a.show.ID))
	if rec.Code != http.StatusUnprocessableEntity || errorCode(t, rec) != "purchase_limit" {
		t.Fatalf("over limit: %d %s, want 422 purchase_limit", rec.Code, rec.Body)
	}
	if n := a.count("order_info"); n != 1 {
		t.Errorf("%d orders, want only the first", n)
	}
	a.place(1, "C-1", "C-2") // exactly at the limit is fine
}

func TestGetOrder(t *testing.T) {
	a := newTestApp(t)
	placed := a.place(3, "C-4")
	no := placed["order_no"].(string)

	rec := a.do("GET", "/api/v1/orders/"+no, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var got orderDetailJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.OrderNo != no || got.Status != "pending" || got.AmountCents != 1000 || got.ExpireTime != placed["expire_time"] {
		t.Errorf("order = %+v, placed %v", got.orderJSON, placed)
	}
	var kinds []string
	for _, ev := range got.Events {
		kinds = append(kinds, ev.Kind)
		if _, err := time.Parse(time.RFC3339, ev.At); err != nil {
			t.Errorf("event %s at %q: %v", ev.Kind, ev.At, err)
		}
	}
	if !slices.Equal(kinds, []string{"placed", "timeout_scheduled"}) {
		t.Errorf("events %v, want placed, timeout_scheduled", kinds)
	}
	// The embedded queue waits exactly (timer mode): level 0, the whole hold.
	if d := got.Events[1].Detail; d["hop"] != 1.0 || d["level"] != 0.0 || d["delay_ms"] != float64(15*time.Minute/time.Millisecond) {
		t.Errorf("timeout_scheduled detail %v", d)
	}

	for _, path := range []string{"/api/v1/orders/SF0000", "/api/v1/orders/" + strings.Repeat("x", 300)} {
		rec := a.do("GET", path, "")
		if rec.Code != http.StatusNotFound || errorCode(t, rec) != "order_not_found" {
			t.Errorf("GET %.40s: %d %s, want 404 order_not_found", path, rec.Code, rec.Body)
		}
	}
}

func TestCancelOrder(t *testing.T) {
	a := newTestApp(t)
	pending := a.place(5, "A-1", "A-2")["order_no"].(string)
	paid := a.place(6, "B-1")["order_no"].(string)
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-paid","amount_cents":1250}`, paid)); rec.Code != 200 {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}

	tests := []struct {
		name, orderNo, body string
		status              int
		code                string // error code, or "" for success
	}{
		{"another user's order", pending, `{"user_id":6}`, 404, "order_not_found"},
		{"unknown order", "SF0000", `{"user_id":5}`, 404, "order_not_found"},
		{"bad user_id", pending, `{"user_id":0}`, 400, "invalid_request"},
		{"user_id missing", pending, `{}`, 400, "invalid_request"},
		{"unknown field", pending, `{"user_id":5,"why":"x"}`, 400, "invalid_request"},
		{"malformed", pending, `{"user_id":`, 400, "invalid_request"},
		{"paid order", paid, `{"user_id":6}`, 409, "order_not_pending"},
		{"owner cancels", pending, `{"user_id":5}`, 200, ""},
		{"owner cancels again", pending, `{"user_id":5}`, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := a.do("POST", "/api/v1/orders/"+tc.orderNo+"/cancel", tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.code != "" {
				if code := errorCode(t, rec); code != tc.code {
					t.Errorf("code %q, want %q", code, tc.code)
				}
				return
			}
			if got := decode(t, rec); got["order_no"] != tc.orderNo || got["status"] != "cancelled" || len(got) != 2 {
				t.Errorf("body %v", got)
			}
		})
	}
	st := a.seatStates()
	if st["A-1"] != "available" || st["A-2"] != "available" || st["B-1"] != "sold" {
		t.Errorf("seats after cancel: %v", st)
	}
	if n := a.count("order_seat"); n != 1 {
		t.Errorf("%d order_seat rows, want only the paid order's", n)
	}
}

// TestOrderNumberAnyCase: an order number typed in another case names the
// order as stored, on SQLite as on MariaDB (issue 28 item 2): the handlers
// normalize it before the engine keys anything by it.
func TestOrderNumberAnyCase(t *testing.T) {
	a := newTestApp(t)
	cancelled := a.place(5, "A-1")["order_no"].(string)
	paid := a.place(6, "B-1")["order_no"].(string)
	for _, tc := range []struct{ name, method, path, body string }{
		{"get", "GET", "/api/v1/orders/" + strings.ToUpper(cancelled), ""},
		{"cancel", "POST", "/api/v1/orders/" + strings.ToUpper(cancelled) + "/cancel", `{"user_id":5}`},
		{"get, lower case", "GET", "/api/v1/orders/" + strings.ToLower(cancelled), ""},
	} {
		rec := a.do(tc.method, tc.path, tc.body)
		if got := decode(t, rec); rec.Code != 200 || got["order_no"] != cancelled {
			t.Errorf("%s: %d %v, want 200 naming %s", tc.name, rec.Code, got, cancelled)
		}
	}
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-UPPER","amount_cents":1250}`, strings.ToUpper(paid))); rec.Code != 200 || decode(t, rec)["result"] != "paid" {
		t.Errorf("payment naming %s in upper case: %d %s, want paid", paid, rec.Code, rec.Body)
	}
	if st := a.seatStates(); st["A-1"] != "available" || st["B-1"] != "sold" {
		t.Errorf("seats: %v, want A-1 available, B-1 sold", st)
	}
}

func TestPaymentCallback(t *testing.T) {
	a := newTestApp(t)
	o1 := a.place(1, "A-1")["order_no"].(string) // 1500
	o2 := a.place(2, "B-1")["order_no"].(string) // 1250, cancelled below
	o3 := a.place(3, "C-1")["order_no"].(string) // 1000
	if rec := a.do("POST", "/api/v1/orders/"+o2+"/cancel", `{"user_id":2}`); rec.Code != 200 {
		t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
	}

	tests := []struct {
		name   string
		body   string
		status int
		result string // "result" on 200, else the error code
	}{
		{"paid", fmt.Sprintf(`{"order_no":%q,"txn_id":"T1","amount_cents":1500,"paid_at":"2026-01-02T15:04:05Z"}`, o1), 200, "paid"},
		{"duplicate", fmt.Sprintf(`{"order_no":%q,"txn_id":"T1","amount_cents":1500,"paid_at":"2026-01-02T15:04:05Z"}`, o1), 200, "duplicate"},
		{"after cancel", fmt.Sprintf(`{"order_no":%q,"txn_id":"T2","amount_cents":1250}`, o2), 200, "discrepancy"},
		{"amount mismatch", fmt.Sprintf(`{"order_no":%q,"txn_id":"T3","amount_cents":999}`, o3), 409, "amount_mismatch"},
		{"unknown order", `{"order_no":"SF0000","txn_id":"T4","amount_cents":100}`, 200, "discrepancy"},
		{"unknown order repeated", `{"order_no":"SF0000","txn_id":"T4","amount_cents":100}`, 200, "duplicate"},
		{"txn id of another order", fmt.Sprintf(`{"order_no":%q,"txn_id":"T2","amount_cents":1000}`, o3), 409, "txn_conflict"},
		{"txn id with another amount", fmt.Sprintf(`{"order_no":%q,"txn_id":"T1","amount_cents":1499}`, o1), 409, "txn_conflict"},
		{"order_no not a reference", `{"order_no":"SF 1","txn_id":"T9","amount_cents":100}`, 400, "invalid_request"},
		{"zero amount", fmt.Sprintf(`{"order_no":%q,"txn_id":"T5","amount_cents":0}`, o3), 400, "invalid_request"},
		{"no txn_id", fmt.Sprintf(`{"order_no":%q,"amount_cents":1000}`, o3), 400, "invalid_request"},
		{"bad paid_at", fmt.Sprintf(`{"order_no":%q,"txn_id":"T6","amount_cents":1000,"paid_at":"yesterday"}`, o3), 400, "invalid_request"},
		{"unknown field", fmt.Sprintf(`{"order_no":%q,"txn_id":"T7","amount_cents":1000,"tip":1}`, o3), 400, "invalid_request"},
		{"amount string", fmt.Sprintf(`{"order_no":%q,"txn_id":"T8","amount_cents":"1000"}`, o3), 400, "invalid_request"},
		{"malformed", `{"order_no":`, 400, "invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := a.pay(tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status != 200 {
				if code := errorCode(t, rec); code != tc.result {
					t.Errorf("code %q, want %q", code, tc.result)
				}
				return
			}
			if got := decode(t, rec); got["result"] != tc.result {
				t.Errorf("body %v, want result %s", got, tc.result)
			}
		})
	}

	status := func(no string) string {
		return decode(t, a.do("GET", "/api/v1/orders/"+no, ""))["status"].(string)
	}
	if s1, s2, s3 := status(o1), status(o2), status(o3); s1 != "paid" || s2 != "cancelled" || s3 != "pending" {
		t.Errorf("statuses %s %s %s, want paid cancelled pending", s1, s2, s3)
	}
	// Every payment that reached the engine is recorded: T1 once, T2 as a
	// discrepancy (paid after cancel), T3 as an amount mismatch, T4 for an
	// unknown order; the two callbacks reusing T1 and T2 as cases.
	if got := a.counts(); got["payment"] != 4 || got["discrepancy"] != 5 {
		t.Errorf("rows: %v, want 4 payments and 5 discrepancies", got)
	}
	if s3 := status(o3); s3 != "pending" {
		t.Errorf("a callback reusing another order's txn id left o3 %s", s3)
	}
}

// A callback that fails verification changes nothing and is never parsed.
func TestPaymentCallbackBadSignature(t *testing.T) {
	a := newTestApp(t)
	no := a.place(1, "A-1")["order_no"].(string)
	body := fmt.Sprintf(`{"order_no":%q,"txn_id":"T1","amount_cents":1500}`, no)
	now := time.Now().Unix()
	ts := strconv.FormatInt(now, 10)
	tsAt := func(d time.Duration) string { return strconv.FormatInt(now+int64(d/time.Second), 10) }
	tests := []struct {
		name    string
		ts, sig string
		body    string
	}{
		{"no headers", "", "", body},
		{"no signature", ts, "", body},
		{"no timestamp", "", sign(testSecret, ts, body), body},
		{"wrong secret", ts, sign("another-secret-0123456789", ts, body), body},
		{"body changed", ts, sign(testSecret, ts, body), strings.Replace(body, "1500", "1", 1)},
		{"timestamp changed", tsAt(time.Second), sign(testSecret, ts, body), body},
		{"not hex", ts, "zz" + sign(testSecret, ts, body)[2:], body},
		{"truncated", ts, sign(testSecret, ts, body)[:40], body},
		{"upper-case hex of another body", ts, strings.ToUpper(sign(testSecret, ts, body+" ")), body},
		{"stale timestamp", tsAt(-6 * time.Minute), sign(testSecret, tsAt(-6*time.Minute), body), body},
		{"future timestamp", tsAt(6 * time.Minute), sign(testSecret, tsAt(6*time.Minute), body), body},
		{"timestamp not a number", "soon", sign(testSecret, "soon", body), body},
		{"malformed body, bad signature", ts, "00", `{"order_no":`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := a.do("POST", "/api/v1/payments/callback", tc.body,
				"X-SeatFlow-Timestamp", tc.ts, "X-SeatFlow-Signature", tc.sig)
			if rec.Code != http.StatusUnauthorized || errorCode(t, rec) != "bad_signature" {
				t.Fatalf("%d %s, want 401 bad_signature", rec.Code, rec.Body)
			}
		})
	}
	if n := a.count("payment"); n != 0 {
		t.Errorf("%d payments recorded from bad callbacks", n)
	}
	// Within the allowed skew, and in upper-case hex, the same callback is accepted.
	rec := a.do("POST", "/api/v1/payments/callback", body,
		"X-SeatFlow-Timestamp", tsAt(-4*time.Minute), "X-SeatFlow-Signature", strings.ToUpper(sign(testSecret, tsAt(-4*time.Minute), body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("good callback: %d %s", rec.Code, rec.Body)
	}
}

func TestOpsEndpoints(t *testing.T) {
	a := newTestApp(t)
	a.place(1, "A-1")
	tests := []struct {
		path, contains string
	}{
		{"/healthz", `"ok"`},
		{"/readyz", `"ready"`},
		{"/metrics", "seatflow_orders_placed_total 1"},
		{"/metrics", `seatflow_http_requests_total{method="POST",route="/api/v1/orders",status="201"} 1`},
		{"/metrics", "go_goroutines"},
		{"/metrics", "\nseatflow_orders_overdue 0\n"}, // the collector NewApp registers
	}
	for _, tc := range tests {
		// No bearer token: probes and scrapers have none.
		rec := a.do("GET", tc.path, "", "Authorization", "")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), tc.contains) {
			t.Errorf("GET %s: %d, want 200 containing %q; body:\n%.2000s", tc.path, rec.Code, tc.contains, rec.Body)
		}
	}
}

func TestStoreOutage(t *testing.T) {
	redis, env := goneSeatStore(t)
	a := newTestApp(t, "SEATFLOW_REDIS", env["SEATFLOW_REDIS"], "SEATFLOW_REDIS_ALLOW_EVICTION", env["SEATFLOW_REDIS_ALLOW_EVICTION"])
	redis.Close() // the seat store goes away
	awaitStoreDown(t, a.app.health, storeSeats)

	rec := a.do("GET", "/readyz", "")
	if rec.Code != http.StatusServiceUnavailable || errorCode(t, rec) != "store_unavailable" {
		t.Fatalf("readyz: %d %s, want 503 store_unavailable", rec.Code, rec.Body)
	}
	if !strings.Contains(rec.Body.String(), "seat store") {
		t.Errorf("readyz does not name the seat store: %s", rec.Body)
	}
	if rec := a.do("GET", "/healthz", ""); rec.Code != http.StatusOK {
		t.Errorf("healthz: %d, want 200 while the process runs", rec.Code)
	}
	rec = a.do("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["A-1"]}`, a.show.ID))
	if rec.Code != http.StatusServiceUnavailable || errorCode(t, rec) != "store_unavailable" {
		t.Fatalf("place: %d %s, want 503 store_unavailable", rec.Code, rec.Body)
	}
	if n := a.count("order_info"); n != 0 {
		t.Errorf("%d orders written during the outage", n)
	}
	// The 503 made the health watcher look at once: the console says what is down.
	deadline := time.Now().Add(5 * time.Second)
	for {
		rec = a.do("GET", "/console/login", "", "Authorization", "")
		if strings.Contains(rec.Body.String(), `role="alert"`) && strings.Contains(rec.Body.String(), "seat store") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("console shows no store-down banner: %d %.1500s", rec.Code, rec.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A store that does not answer within the request timeout is a 503, and
// the request leaves nothing behind.
func TestRequestTimeout(t *testing.T) {
	a := newTestApp(t, "SEATFLOW_REQUEST_TIMEOUT", "1ns")
	rec := a.do("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["A-1"]}`, a.show.ID))
	if rec.Code != http.StatusServiceUnavailable || errorCode(t, rec) != "store_unavailable" {
		t.Fatalf("%d %s, want 503 store_unavailable", rec.Code, rec.Body)
	}
	for table, n := range a.counts() {
		if n != 0 {
			t.Errorf("timed-out request wrote %d rows to %s", n, table)
		}
	}
}

func TestUnknownRoutes(t *testing.T) {
	a := newTestApp(t)
	tests := []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/api/v1/nope", 404, "not_found"},
		{"GET", "/api/v2/shows", 404, "not_found"},
		{"GET", "/api", 404, "not_found"},
		{"DELETE", "/api/v1/orders", 405, "method_not_allowed"},
		{"PUT", "/api/v1/shows", 405, "method_not_allowed"},
	}
	for _, tc := range tests {
		rec := a.do(tc.method, tc.path, "")
		if rec.Code != tc.status || errorCode(t, rec) != tc.code {
			t.Errorf("%s %s: %d %s, want %d %s", tc.method, tc.path, rec.Code, rec.Body, tc.status, tc.code)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: Content-Type %q", tc.method, tc.path, ct)
		}
	}
}

// The console is mounted beside the API, with its own (HTML) pages.
func TestConsoleIsMounted(t *testing.T) {
	a := newTestApp(t)
	rec := a.do("GET", "/", "", "Authorization", "")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/console/" {
		t.Errorf("GET /: %d Location %q, want 303 to /console/", rec.Code, rec.Header().Get("Location"))
	}
	rec = a.do("GET", "/console/login", "", "Authorization", "")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Errorf("GET /console/login: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

func TestRequestID(t *testing.T) {
	a := newTestApp(t)
	tests := []struct {
		name, sent string
		kept       bool
	}{
		{"none", "", false},
		{"valid", "req-123.abc", true},
		{"too long", strings.Repeat("a", 65), false},
		{"log injection", "x\"}\n{\"level\":\"ERROR", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := a.do("GET", "/healthz", "", "X-Request-ID", tc.sent)
			got := rec.Header().Get("X-Request-ID")
			if got == "" || (got == tc.sent) != tc.kept {
				t.Errorf("X-Request-ID %q for %q, kept=%v", got, tc.sent, tc.kept)
			}
		})
	}
}

// TestAPIBodyLimitEveryRoute: every API route that takes a body refuses
// one beyond the largest limit (planBodyLimit) with 413 body_too_large, as
// the contract documents; a route added without a limit fails here.
func TestAPIBodyLimitEveryRoute(t *testing.T) {
	a := newTestApp(t)
	body := strings.Repeat(" ", 9<<20) + `{}`
	n := 0
	for _, r := range a.app.Handler.echo.Routes() {
		if !strings.HasPrefix(r.Path, "/api/v1/") || r.Method == http.MethodGet || !countedMethod(r.Method) {
			continue
		}
		path := regexp.MustCompile(`:[a-z_]+`).ReplaceAllString(r.Path, "1")
		t.Run(r.Method+" "+r.Path, func(t *testing.T) {
			rec := a.do(r.Method, path, body)
			if rec.Code != http.StatusRequestEntityTooLarge || errorCode(t, rec) != "body_too_large" {
				t.Errorf("status %d: %.300s", rec.Code, rec.Body)
			}
		})
		n++
	}
	if n < 10 {
		t.Fatalf("only %d API routes with a body", n)
	}
}
