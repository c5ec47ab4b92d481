package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"seatflow/core/access"
	"seatflow/core/checkin"
)

// TestAPICheckins walks one ticket through the door over HTTP, in order:
// each step names its request and the status, code and fields it must get
// (every exchange is also checked against openapi.json by a.do).
func TestAPICheckins(t *testing.T) {
	a := newTestApp(t)
	paid := a.place(1, "A-1", "A-2")
	no, code := paid["order_no"].(string), paid["code"].(string)
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-C1","amount_cents":%v}`, no, paid["amount_cents"])); rec.Code != http.StatusOK {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	pending := a.place(2, "B-1")["code"].(string)
	_, door := a.addKey("north door", access.ScopeCheckin)
	auth := []string{"Authorization", "Bearer " + door}
	for _, step := range []struct {
		name, path, body string
		status           int
		code             string
		check            func(t *testing.T, body map[string]any)
	}{
		{name: "first scan admits both seats", path: "/api/v1/checkins", body: fmt.Sprintf(`{"code":%q,"gate":"north"}`, code),
			status: 200, check: func(t *testing.T, b map[string]any) {
				if b["result"] != "admitted" || fmt.Sprint(b["seats"]) != "[A-1 A-2]" || b["admitted_count"] != float64(2) {
					t.Errorf("body %v", b)
				}
			}},
		{name: "second scan at another gate", path: "/api/v1/checkins", body: fmt.Sprintf(`{"order_no":%q,"gate":"south"}`, no),
			status: 409, code: "already_checked_in", check: func(t *testing.T, b map[string]any) {
				first := b["error"].(map[string]any)["detail"].(map[string]any)["first"].(map[string]any)
				if first["gate"] != "north" || first["by"] != "api:"+door[:access.APIKeyPrefixLen] {
					t.Errorf("first scan %v, want north by the door key", first)
				}
			}},
		{name: "unpaid", path: "/api/v1/checkins", body: fmt.Sprintf(`{"code":%q,"gate":"north"}`, pending),
			status: 409, code: "not_valid", check: reason("unpaid")},
		{name: "unknown code", path: "/api/v1/checkins", body: `{"code":"ZZZZZZZZ","gate":"north"}`,
			status: 409, code: "not_valid", check: reason("unknown_code")},
		{name: "another show", path: "/api/v1/checkins", body: fmt.Sprintf(`{"code":%q,"gate":"north","show_id":%d}`, code, a.show.ID+1),
			status: 409, code: "not_valid", check: reason("another_show")},
		{name: "no gate", path: "/api/v1/checkins", body: fmt.Sprintf(`{"code":%q,"gate":" "}`, code), status: 400, code: "bad_gate"},
		{name: "code and order number", path: "/api/v1/checkins", body: fmt.Sprintf(`{"code":%q,"order_no":%q,"gate":"n"}`, code, no),
			status: 400, code: "invalid_request"},
		{name: "undo one seat", path: "/api/v1/checkins/undo", body: fmt.Sprintf(`{"code":%q,"seat_ids":["A-2"]}`, code),
			status: 200, check: func(t *testing.T, b map[string]any) {
				undone := b["undone"].([]any)
				if len(undone) != 1 || undone[0].(map[string]any)["gate"] != "north" {
					t.Errorf("undone %v", undone)
				}
			}},
		{name: "undo it again", path: "/api/v1/checkins/undo", body: fmt.Sprintf(`{"code":%q,"seat_ids":["A-2"]}`, code),
			status: 409, code: "not_checked_in"},
		{name: "the undone seat admits again", path: "/api/v1/checkins", body: fmt.Sprintf(`{"code":%q,"gate":"south"}`, code),
			status: 200, check: func(t *testing.T, b map[string]any) {
				if fmt.Sprint(b["seats"]) != "[A-2]" || b["admitted_count"] != float64(2) {
					t.Errorf("body %v", b)
				}
			}},
		{name: "and once only", path: "/api/v1/checkins", body: fmt.Sprintf(`{"code":%q,"gate":"south"}`, code),
			status: 409, code: "already_checked_in"},
	} {
		rec := a.do("POST", step.path, step.body, auth...)
		if rec.Code != step.status || (step.code != "" && errorCode(t, rec) != step.code) {
			t.Fatalf("%s: %d %s, want %d %s", step.name, rec.Code, rec.Body, step.status, step.code)
		}
		if step.check != nil {
			step.check(t, decode(t, rec))
		}
	}
	if n := a.count("audit_log WHERE action = 'checkin_undo'"); n != 1 {
		t.Errorf("%d checkin_undo audit rows, want 1", n)
	}
}

// reason checks a not_valid body's reason.
func reason(want string) func(t *testing.T, b map[string]any) {
	return func(t *testing.T, b map[string]any) {
		t.Helper()
		if got := b["error"].(map[string]any)["detail"].(map[string]any)["reason"]; got != want {
			t.Errorf("reason %v, want %s", got, want)
		}
	}
}

// TestAPIOfflineGate: a gate downloads its show's list (codes only as
// salted hashes), then sends what it admitted offline; a second gate's
// scan of the same ticket is a double_entry with its case.
func TestAPIOfflineGate(t *testing.T) {
	a := newTestApp(t)
	paid := a.place(1, "A-1")
	no, code := paid["order_no"].(string), paid["code"].(string)
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-O1","amount_cents":%v}`, no, paid["amount_cents"])); rec.Code != http.StatusOK {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	_, door := a.addKey("offline door", access.ScopeCheckin)
	_, sales := a.addKey("storefront", access.ScopeOrdersRead)
	auth := []string{"Authorization", "Bearer " + door}
	rec := a.do("GET", fmt.Sprintf("/api/v1/shows/%d/tickets", a.show.ID), "", auth...)
	if rec.Code != http.StatusOK {
		t.Fatalf("ticket list: %d %s", rec.Code, rec.Body)
	}
	l := decode(t, rec)
	tickets := l["tickets"].([]any)
	if len(tickets) != 1 || strings.Contains(rec.Body.String(), code) {
		t.Fatalf("list %s: want one ticket, its code not in it", rec.Body)
	}
	if tk := tickets[0].(map[string]any); tk["hash"] != checkin.CodeHash(l["salt"].(string), code) || tk["state"] != "valid" {
		t.Fatalf("ticket %v: want the hash of code %s under salt %v, valid", tk, code, l["salt"])
	}
	at := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	for _, step := range []struct {
		name, method, path, body string
		header                   []string
		status                   int
		code, result             string
	}{
		{"east admitted offline", "POST", "/api/v1/checkins/sync",
			fmt.Sprintf(`{"gate":"east","scans":[{"id":"00000000000000e1","code":%q,"at":%q}]}`, code, at), auth, 200, "", "admitted"},
		{"west let it in too", "POST", "/api/v1/checkins/sync",
			fmt.Sprintf(`{"gate":"west","scans":[{"id":"00000000000000f1","code":%q,"at":%q}]}`, code, at), auth, 200, "", "double_entry"},
		{"one scan twice", "POST", "/api/v1/checkins/sync",
			fmt.Sprintf(`{"gate":"west","scans":[{"id":"00000000000000f2","code":%q,"at":%q},{"id":"00000000000000f2","code":%q,"at":%q}]}`,
				code, at, code, at), auth, 400, "invalid_request", ""},
		{"a full batch, past the other routes' body limit", "POST", "/api/v1/checkins/sync",
			syncBatch(checkin.MaxSyncScans, "ZZZZZZZZ"), auth, 200, "", "not_valid"},
		{"no such show", "GET", "/api/v1/shows/999999/tickets", "", auth, 404, "show_not_found", ""},
		{"a key without the checkin scope", "GET", fmt.Sprintf("/api/v1/shows/%d/tickets", a.show.ID), "",
			[]string{"Authorization", "Bearer " + sales}, 403, "insufficient_scope", ""},
	} {
		rec := a.do(step.method, step.path, step.body, step.header...)
		if rec.Code != step.status || (step.code != "" && errorCode(t, rec) != step.code) {
			t.Fatalf("%s: %d %s, want %d %s", step.name, rec.Code, rec.Body, step.status, step.code)
		}
		if step.result == "" {
			continue
		}
		r := decode(t, rec)["results"].([]any)[0].(map[string]any)
		if r["result"] != step.result || (step.result == "double_entry") != (r["case_id"] != nil) {
			t.Fatalf("%s: %v, want %s (a case only for a double entry)", step.name, r, step.result)
		}
	}
	if n := a.count("discrepancy WHERE kind = 'double_entry'"); n != 1 {
		t.Errorf("%d double_entry cases, want 1", n)
	}
}
