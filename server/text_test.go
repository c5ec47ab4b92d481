package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"seatflow/core/access"
)

// showBody is a create-show body with one seat; edit changes it before it
// is sent.
func showBody(t *testing.T, edit func(req *createShowRequest)) string {
	req := createShowRequest{Name: "Gala", Venue: "Hall", StartsAt: "2030-01-02T19:30:00Z", Currency: "EUR",
		planRequest: planRequest{PriceCategories: []categoryJSON{{Code: "STD", Name: "Standard", PriceCents: 1000}},
			Seats: []seatSpecJSON{{SeatID: "A-1", Section: "Stalls", Row: "A", Number: 1, Category: "STD"}}}}
	edit(&req)
	return mustJSON(t, req)
}

// Every free-text field of the API refuses control, bidi and invisible
// format characters with 400 invalid_text naming the field, and writes
// nothing; a row label with "\r" (which would end the seat map's
// event-stream line) can no longer be stored. Multi-line reasons keep
// their line breaks.
func TestAPIFreeTextRefused(t *testing.T) {
	a := newTestApp(t)
	pendingNo := a.place(7, "B-1")["order_no"].(string)
	paidNo := a.place(8, "C-1")["order_no"].(string)
	if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-TXT","amount_cents":1000}`, paidNo)); rec.Code != 200 {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	fresh := a.createShow(showBody(t, func(*createShowRequest) {})) // no orders: its plan can change
	planPath := fmt.Sprintf("/api/v1/shows/%d/plan", fresh.ID)
	onePlan := func(edit func(*planRequest)) string {
		p := planRequest{PriceCategories: []categoryJSON{{Code: "STD", Name: "Standard", PriceCents: 1000}},
			Seats: []seatSpecJSON{{SeatID: "A-1", Section: "Stalls", Row: "A", Number: 1, Category: "STD"}}}
		edit(&p)
		return mustJSON(t, p)
	}
	for _, tc := range []struct {
		name, method, path, body, field string
	}{
		{"show name with CR", "POST", "/api/v1/shows", showBody(t, func(r *createShowRequest) { r.Name = "Gala\rnight" }), "name"},
		{"venue with an override", "POST", "/api/v1/shows", showBody(t, func(r *createShowRequest) { r.Venue = "Hall \u202eA" }), "venue"},
		{"category name with a zero-width space", "POST", "/api/v1/shows", showBody(t, func(r *createShowRequest) {
			r.PriceCategories[0].Name = "Stan\u200bdard"
		}), "price_categories[0].name"},
		{"section with an escape", "POST", "/api/v1/shows", showBody(t, func(r *createShowRequest) { r.Seats[0].Section = "Stalls\x1b[2J" }), "seats[0].section"},
		{"row label with CR", "POST", "/api/v1/shows", showBody(t, func(r *createShowRequest) { r.Seats[0].Row = "A\r" }), "seats[0].row"},
		{"row label with an isolate", "POST", "/api/v1/shows", showBody(t, func(r *createShowRequest) { r.Seats[0].Row = "\u2067A" }), "seats[0].row"},
		{"new plan: row label with CR", "PUT", planPath, onePlan(func(p *planRequest) { p.Seats[0].Row = "A\r" }), "seats[0].row"},
		{"new plan: section with a newline", "PUT", planPath, onePlan(func(p *planRequest) { p.Seats[0].Section = "Stalls\ndata: x" }), "seats[0].section"},
		{"extend reason with an escape", "POST", "/api/v1/orders/" + pendingNo + "/extend", `{"user_id":7,"minutes":5,"reason":"at the ATM\u001b[2K"}`, "reason"},
		{"extend reason with an override", "POST", "/api/v1/orders/" + pendingNo + "/extend", `{"user_id":7,"minutes":5,"reason":"\u202eMTA"}`, "reason"},
		{"refund reason with an override", "POST", "/api/v1/orders/" + paidNo + "/refund", `{"reason":"refund \u202e001"}`, "reason"},
		{"refund reason with C1", "POST", "/api/v1/orders/" + paidNo + "/refund", `{"reason":"ill\u0085ness"}`, "reason"},
		{"refund reference with a newline", "POST", "/api/v1/orders/" + paidNo + "/refund", `{"reason":"illness","reference":"R-1\nR-2"}`, "reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fmt.Sprint(a.counts(), a.count("show_info"), a.count("refund"), a.count("order_event"))
			rec := a.do(tc.method, tc.path, tc.body)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", rec.Code, rec.Body)
			}
			if code, field, _ := errorOf(t, rec); code != "invalid_text" || field != tc.field {
				t.Errorf("code %q field %q, want invalid_text naming %q: %s", code, field, tc.field, rec.Body)
			}
			if after := fmt.Sprint(a.counts(), a.count("show_info"), a.count("refund"), a.count("order_event")); after != before {
				t.Errorf("a refused request wrote rows: %s → %s", before, after)
			}
		})
	}
	if seats := a.seatsOf(fresh.ID); len(seats) != 1 || seats[0].RowLabel != "A" || seats[0].Section != "Stalls" {
		t.Errorf("refused plans changed the show's seats: %+v", seats)
	}

	// A reason from a text area keeps its lines, as LF.
	rec := a.do("POST", "/api/v1/orders/"+paidNo+"/refund", `{"reason":"show moved\r\nto Friday\tsee mail"}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("multi-line refund reason: %d %s", rec.Code, rec.Body)
	}
	rs, err := a.app.DB.OrderRefunds(t.Context(), paidNo)
	if err != nil || len(rs) != 1 || rs[0].Reason != "show moved\nto Friday\tsee mail" {
		t.Errorf("stored refunds %+v (%v), want the reason with LF and tab", rs, err)
	}
}

// The console's forms refuse the same characters through the same check:
// the page says so (a 4xx, never a stored value).
func TestConsoleFreeTextRefused(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	admin := env.login(access.RoleAdmin)

	pending := env.place(31, "A-1")
	paid := env.place(32, "A-2")
	env.pay(paid)
	requested := env.place(33, "A-3", "A-4") // above the approval threshold: a request
	env.pay(requested)
	box := env.login(access.RoleBoxOffice)
	if rec := box.post("/console/orders/"+requested.OrderNo+"/refund", url.Values{"reason": {"illness"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("refund request: %d %.300s", rec.Code, rec.Body)
	}
	rs, err := env.db.OrderRefunds(ctx, requested.OrderNo)
	if err != nil || len(rs) != 1 {
		t.Fatalf("refund request rows %+v (%v)", rs, err)
	}
	late := env.place(34, "B-2")
	if _, err := env.engine.Cancel(ctx, late.OrderNo, late.UserID); err != nil {
		t.Fatal(err)
	}
	env.pay(late) // a payment after the cancel: a discrepancy case
	var caseID int64
	if err := env.db.X().Get(&caseID, `SELECT id FROM discrepancy WHERE order_no = ?`, late.OrderNo); err != nil {
		t.Fatal(err)
	}
	counterRec := box.post("/console/shows/"+strconv.FormatInt(env.show.ID, 10)+"/counter", url.Values{"seat_ids": {"C-2"}})
	counterNo := strings.TrimSuffix(strings.TrimPrefix(counterRec.Header().Get("Location"), "/console/orders/"), "?outcome=held")
	if counterRec.Code != http.StatusSeeOther || counterNo == "" {
		t.Fatalf("counter hold: %d %.300s", counterRec.Code, counterRec.Body)
	}
	rows := func() string {
		var out []string
		for _, table := range []string{"show_info", "seat", "order_info", "order_event", "payment", "refund",
			"discrepancy_event", "api_key", "audit_log"} {
			var n int
			if err := env.db.X().Get(&n, "SELECT COUNT(*) FROM "+table); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(table, "=", n))
		}
		return strings.Join(out, " ")
	}
	casePath := "/console/discrepancies/" + strconv.FormatInt(caseID, 10)
	showForm := func(edit func(url.Values)) url.Values {
		f := url.Values{"name": {"Gala"}, "venue": {"Hall"}, "starts_at": {"2030-01-02T19:30"}, "currency": {"EUR"},
			"categories": {"STD,Standard,2500"}, "source": {"grid"}, "rows": {"2"}, "seats_per_row": {"2"}, "grid_category": {"STD"}}
		edit(f)
		return f
	}
	csvPlan := func(row string) url.Values {
		return showForm(func(f url.Values) {
			f.Set("source", "upload")
			f.Set("plan_text", "section,row,number,category,x,y\nStalls,\""+row+"\",1,STD,0,0\n")
		})
	}
	for _, tc := range []struct {
		name, path string
		form       url.Values
		want       string // in the page, lower-cased; "" for "invisible"
	}{
		{"show name with CR", "/console/shows", showForm(func(f url.Values) { f.Set("name", "Gala\rnight") }), ""},
		{"venue with an override", "/console/shows", showForm(func(f url.Values) { f.Set("venue", "Hall \u202eA") }), ""},
		{"category name with a BOM", "/console/shows", showForm(func(f url.Values) { f.Set("categories", "STD,\ufeffStandard,2500") }), ""},
		{"uploaded plan: row label with CR", "/console/shows", csvPlan("A\rB"), ""},
		{"uploaded plan: row label with an override", "/console/shows", csvPlan("A\u202e"), ""},
		{"case note with an escape", casePath + "/note", url.Values{"note": {"called the bank\x1b[2K"}}, ""},
		{"case take note with an override", casePath + "/take", url.Values{"note": {"\u202emine"}}, ""},
		{"write-off reason with an isolate", casePath + "/move", url.Values{"to": {"write_off_requested"}, "note": {"too small \u2066to chase"}}, ""},
		{"cancel note with C1", "/console/orders/" + pending.OrderNo + "/cancel", url.Values{"reason": {"double\u0085booking"}, "confirm": {"1"}}, ""},
		{"extend reason with an override", "/console/orders/" + pending.OrderNo + "/extend", url.Values{"minutes": {"10"}, "reason": {"at the \u202eATM"}}, ""},
		{"refund reason with a zero-width space", "/console/orders/" + paid.OrderNo + "/refund", url.Values{"reason": {"ill\u200bness"}}, ""},
		{"refund reference with a newline", "/console/orders/" + paid.OrderNo + "/refund", url.Values{"reason": {"illness"}, "reference": {"R-1\nR-2"}}, ""},
		{"refund rejection note with an escape", "/console/refunds/" + strconv.FormatInt(rs[0].ID, 10) + "/reject", url.Values{"note": {"no\x1b"}}, ""},
		{"counter customer name with an override", "/console/shows/" + strconv.FormatInt(env.show.ID, 10) + "/counter", url.Values{"seat_ids": {"C-3"}, "name": {"Ada \u202eLovelace"}}, "printable characters"},
		{"counter payment reference with a tab", "/console/orders/" + counterNo + "/pay", url.Values{"tender": {"card"}, "reference": {"SLIP\t77"}}, ""},
		{"API key name with an override", "/console/apikeys", url.Values{"name": {"front \u202eend"}, "scope": {"orders:read"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := rows()
			rec := admin.post(tc.path, tc.form)
			body := strings.ToLower(rec.Body.String())
			want := tc.want
			if want == "" {
				want = "invisible"
			}
			if rec.Code < 400 || rec.Code >= 500 || !strings.Contains(body, want) {
				t.Fatalf("status %d, want a 4xx page saying what is wrong: %.800s", rec.Code, rec.Body)
			}
			if after := rows(); after != before {
				t.Errorf("a refused form wrote: %s → %s", before, after)
			}
		})
	}
}
