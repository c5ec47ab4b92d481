package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"seatflow/core/reconcile"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
	"seatflow/core/testenv"
)

// showStacks are the two databases the shows API is tested on: the
// embedded stack (SQLite, in-process seat store) and MariaDB with the real Redis.
var showStacks = []struct {
	name string
	mk   func(testing.TB) *testApp
}{
	{"sqlite", func(t testing.TB) *testApp { return newTestApp(t) }},
	{"mariadb", func(t testing.TB) *testApp {
		return newTestApp(t, "SEATFLOW_DB", stacktest.FreshMySQL(t, testenv.MySQL(t)), "SEATFLOW_REDIS", testenv.Redis(t))
	}},
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// gridShow is a valid create body: rows×perRow seats in category STD.
func gridShow(rows, perRow int) map[string]any {
	return map[string]any{
		"name": "Grid show", "venue": "Main hall", "starts_at": "2027-05-01T19:30:00Z", "currency": "EUR",
		"price_categories": []map[string]any{{"code": "STD", "name": "Standard", "price_cents": 2500},
			{"code": "VIP", "name": "VIP", "price_cents": 9000}},
		"grid": map[string]any{"rows": rows, "seats_per_row": perRow, "category": "STD"},
	}
}

// planSeats builds n seats in two sections with mixed categories and
// scattered coordinates.
func planSeats(n int) []seatSpecJSON {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]seatSpecJSON, n)
	for i := range out {
		section, row, num := "Stalls", fmt.Sprintf("R%d", i/50+1), i%50+1
		if i >= n/2 {
			section = "Circle"
		}
		cat := "STD"
		if i%7 == 0 {
			cat = "VIP"
		}
		out[i] = seatSpecJSON{SeatID: fmt.Sprintf("S%d-%d", i/50+1, num), Section: section, Row: row, Number: num,
			Category: cat, X: r.IntN(5000), Y: r.IntN(5000)}
	}
	return out
}

// createShow posts body and returns the show; it fails the test unless 201.
// Seat state the show leaves in a shared Redis goes at cleanup.
func (a *testApp) createShow(body string) showDetailJSON {
	a.t.Helper()
	rec := a.do("POST", "/api/v1/shows", body)
	if rec.Code != http.StatusCreated {
		a.t.Fatalf("create show: status %d: %.500s", rec.Code, rec.Body)
	}
	var out showDetailJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		a.t.Fatal(err)
	}
	if a.app.redis != nil { // a shared Redis: the in-process seat store goes with the app
		id := out.ID
		a.t.Cleanup(func() {
			a.app.redis.Del(context.Background(), seats.KeySeats(id), seats.KeyLimit(id), seats.KeyBlocked(id))
		})
	}
	return out
}

func (a *testApp) getShow(id int64) showDetailJSON {
	a.t.Helper()
	rec := a.do("GET", fmt.Sprintf("/api/v1/shows/%d", id), "")
	if rec.Code != http.StatusOK {
		a.t.Fatalf("get show %d: status %d: %s", id, rec.Code, rec.Body)
	}
	var out showDetailJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		a.t.Fatal(err)
	}
	return out
}

func (a *testApp) seatsOf(id int64) []seatJSON {
	a.t.Helper()
	rec := a.do("GET", fmt.Sprintf("/api/v1/shows/%d/seats", id), "")
	if rec.Code != http.StatusOK {
		a.t.Fatalf("seats of %d: status %d: %s", id, rec.Code, rec.Body)
	}
	var out struct {
		Seats []seatJSON `json:"seats"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		a.t.Fatal(err)
	}
	return out.Seats
}

func (a *testApp) placeOn(show int64, user int64, seatIDs ...string) *httptest.ResponseRecorder {
	a.t.Helper()
	return a.do("POST", "/api/v1/orders", mustJSON(a.t, map[string]any{"user_id": user, "show_id": show, "seat_ids": seatIDs}))
}

// errorOf returns the error code and field of an error response.
func errorOf(t testing.TB, rec *httptest.ResponseRecorder) (code, field string, seatIDs []string) {
	t.Helper()
	var body struct {
		Error errorDetail `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("status %d: not an error body: %q", rec.Code, rec.Body)
	}
	return body.Error.Code, body.Error.Field, body.Error.Seats
}

// planTables are the tables setting up a show writes.
var planTables = []string{"show_info", "seat", "price_category", "seat_block", "order_info"}

func (a *testApp) planCounts() map[string]int {
	m := map[string]int{}
	for _, t := range planTables {
		m[t] = a.count(t)
	}
	return m
}

func TestCreateShowAPI(t *testing.T) {
	for _, st := range showStacks {
		t.Run(st.name, func(t *testing.T) {
			a := st.mk(t)
			body := gridShow(3, 4)
			body["sales_end"] = "2027-05-01T18:00:00+01:00"
			show := a.createShow(mustJSON(t, body))
			if show.Name != "Grid show" || show.Venue != "Main hall" || show.Currency != "EUR" || show.Status != "on_sale" ||
				show.StartsAt != "2027-05-01T19:30:00.000Z" || show.SalesEnd != "2027-05-01T17:00:00.000Z" ||
				show.SeatCount != 12 || show.Rows != 3 || show.Cols != 4 {
				t.Errorf("created show %+v", show)
			}
			if want := (countsJSON{Available: 12}); show.Counts != want {
				t.Errorf("counts %+v, want %+v", show.Counts, want)
			}
			wantCats := []categoryJSON{{"STD", "Standard", 2500}, {"VIP", "VIP", 9000}}
			if !slices.Equal(show.PriceCategories, wantCats) {
				t.Errorf("categories %+v", show.PriceCategories)
			}
			if got := a.getShow(show.ID); got.Name != show.Name || got.Counts != show.Counts {
				t.Errorf("GET show %+v, want %+v", got, show)
			}
			seatList := a.seatsOf(show.ID)
			if len(seatList) != 12 {
				t.Fatalf("%d seats", len(seatList))
			}
			want := seatJSON{SeatID: "B-3", Row: 2, Col: 3, PriceCents: 2500, State: "available", RowLabel: "B", Number: 3,
				Category: "STD", X: 3, Y: 2}
			if seatList[6] != want {
				t.Errorf("seat 6 = %+v, want %+v", seatList[6], want)
			}
			// Row ranges price each row: rows A and C standard, B VIP.
			ranged := gridShow(3, 2)
			ranged["grid"] = map[string]any{"rows": 3, "seats_per_row": 2, "row_categories": []map[string]any{
				{"category": "STD", "from": 1, "to": 1}, {"category": "VIP", "from": 2, "to": 2}, {"category": "STD", "from": 3, "to": 3}}}
			rs := a.createShow(mustJSON(t, ranged))
			var cats []string
			for _, st := range a.seatsOf(rs.ID) {
				cats = append(cats, st.SeatID+":"+st.Category+":"+strconv.FormatInt(st.PriceCents, 10))
			}
			if want := []string{"A-1:STD:2500", "A-2:STD:2500", "B-1:VIP:9000", "B-2:VIP:9000", "C-1:STD:2500", "C-2:STD:2500"}; !slices.Equal(cats, want) {
				t.Errorf("seats by row range %v, want %v", cats, want)
			}
			// The list carries the counts too, from one grouped query.
			o := a.placeOn(show.ID, 7, "A-1", "A-2")
			if o.Code != http.StatusCreated {
				t.Fatalf("place: %d %s", o.Code, o.Body)
			}
			rec := a.do("GET", "/api/v1/shows", "")
			var list struct {
				Shows []showJSON `json:"shows"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(list.Shows, func(s showJSON) bool { return s.ID == show.ID })
			if i < 0 || list.Shows[i].Counts != (countsJSON{Available: 10, Locked: 2}) {
				t.Errorf("list entry %+v", list.Shows)
			}
		})
	}
}

func TestCreateShowBadInput(t *testing.T) {
	with := func(edit func(m map[string]any)) string {
		m := gridShow(3, 4)
		edit(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	seatsBody := func(list ...map[string]any) string {
		return with(func(m map[string]any) { delete(m, "grid"); m["seats"] = list })
	}
	seat := func(id, row string, n int, cat string) map[string]any {
		return map[string]any{"seat_id": id, "section": "Stalls", "row": row, "number": n, "category": cat, "x": n, "y": 1}
	}
	tooMany := make([]map[string]any, 20_001)
	for i := range tooMany {
		tooMany[i] = seat(fmt.Sprintf("A-%d", i+1), "A", i+1, "STD")
	}
	cases := []struct {
		name, body  string
		status      int
		code, field string
	}{
		{"empty body", ``, 400, "invalid_request", ""},
		{"malformed JSON", `{"name":`, 400, "invalid_request", ""},
		{"not an object", `[1,2]`, 400, "invalid_request", ""},
		{"unknown field", with(func(m map[string]any) { m["colour"] = "red" }), 400, "invalid_request", ""},
		{"wrong type", with(func(m map[string]any) { m["price_categories"] = "cheap" }), 400, "invalid_request", ""},
		{"no name", with(func(m map[string]any) { delete(m, "name") }), 400, "invalid_show", "name"},
		{"name too long", with(func(m map[string]any) { m["name"] = strings.Repeat("x", 201) }), 400, "invalid_show", "name"},
		{"no start", with(func(m map[string]any) { delete(m, "starts_at") }), 400, "invalid_show", "starts_at"},
		{"start not RFC 3339", with(func(m map[string]any) { m["starts_at"] = "2027-05-01 19:30" }), 400, "invalid_show", "starts_at"},
		{"sales end not RFC 3339", with(func(m map[string]any) { m["sales_end"] = "tomorrow" }), 400, "invalid_show", "sales_end"},
		{"sales end after start", with(func(m map[string]any) { m["sales_end"] = "2027-05-02T00:00:00Z" }), 400, "invalid_show", "sales_end"},
		{"no currency", with(func(m map[string]any) { delete(m, "currency") }), 400, "invalid_currency", "currency"},
		{"lower-case currency", with(func(m map[string]any) { m["currency"] = "eur" }), 400, "invalid_currency", "currency"},
		{"made-up currency", with(func(m map[string]any) { m["currency"] = "XYZ" }), 400, "invalid_currency", "currency"},
		{"four-letter currency", with(func(m map[string]any) { m["currency"] = "EURO" }), 400, "invalid_currency", "currency"},
		{"no categories", with(func(m map[string]any) { delete(m, "price_categories") }), 400, "invalid_plan", "price_categories"},
		{"negative price", with(func(m map[string]any) {
			m["price_categories"] = []map[string]any{{"code": "STD", "name": "Standard", "price_cents": -1}}
		}), 400, "invalid_price", "price_categories[0].price_cents"},
		{"category twice", with(func(m map[string]any) {
			m["price_categories"] = []map[string]any{{"code": "STD", "name": "A", "price_cents": 1}, {"code": "STD", "name": "B", "price_cents": 2}}
		}), 400, "invalid_plan", "price_categories[1].code"},
		{"bad category code", with(func(m map[string]any) {
			m["price_categories"] = []map[string]any{{"code": "S T D", "name": "A", "price_cents": 1}}
		}), 400, "invalid_plan", "price_categories[0].code"},
		{"category without name", with(func(m map[string]any) {
			m["price_categories"] = []map[string]any{{"code": "STD", "price_cents": 1}}
		}), 400, "invalid_plan", "price_categories[0].name"},
		{"neither seats nor grid", with(func(m map[string]any) { delete(m, "grid") }), 400, "invalid_plan", "seats"},
		{"seats and grid", with(func(m map[string]any) { m["seats"] = []map[string]any{seat("A-1", "A", 1, "STD")} }), 400, "invalid_plan", "seats"},
		{"grid of unknown category", with(func(m map[string]any) {
			m["grid"] = map[string]any{"rows": 2, "seats_per_row": 2, "category": "GOLD"}
		}), 400, "unknown_category", "grid.category"},
		{"row categories and a category", with(func(m map[string]any) {
			m["grid"] = map[string]any{"rows": 2, "seats_per_row": 2, "category": "STD",
				"row_categories": []map[string]any{{"category": "STD", "from": 1, "to": 2}}}
		}), 400, "invalid_plan", "grid.category"},
		{"row categories of an unknown category", with(func(m map[string]any) {
			m["grid"] = map[string]any{"rows": 2, "seats_per_row": 2, "row_categories": []map[string]any{{"category": "GOLD", "from": 1, "to": 2}}}
		}), 400, "unknown_category", "grid.row_categories[0].category"},
		{"row categories past the last row", with(func(m map[string]any) {
			m["grid"] = map[string]any{"rows": 2, "seats_per_row": 2, "row_categories": []map[string]any{{"category": "STD", "from": 1, "to": 3}}}
		}), 400, "invalid_plan", "grid.row_categories[0]"},
		{"row categories overlapping", with(func(m map[string]any) {
			m["grid"] = map[string]any{"rows": 3, "seats_per_row": 2, "row_categories": []map[string]any{
				{"category": "STD", "from": 1, "to": 2}, {"category": "STD", "from": 2, "to": 3}}}
		}), 400, "invalid_plan", "grid.row_categories[1]"},
		{"row categories leaving a row out", with(func(m map[string]any) {
			m["grid"] = map[string]any{"rows": 3, "seats_per_row": 2, "row_categories": []map[string]any{{"category": "STD", "from": 1, "to": 2}}}
		}), 400, "invalid_plan", "grid.row_categories"},
		{"grid without rows", with(func(m map[string]any) {
			m["grid"] = map[string]any{"rows": 0, "seats_per_row": 2, "category": "STD"}
		}), 400, "invalid_plan", "grid.rows"},
		{"grid over 20,000 seats", with(func(m map[string]any) {
			m["grid"] = map[string]any{"rows": 200, "seats_per_row": 101, "category": "STD"}
		}), 400, "too_many_seats", "grid"},
		{"duplicate seat id", seatsBody(seat("A-1", "A", 1, "STD"), seat("A-2", "A", 2, "STD"), seat("A-1", "A", 3, "STD")),
			400, "duplicate_seat", "seats[2].seat_id"},
		{"unknown category", seatsBody(seat("A-1", "A", 1, "STD"), seat("A-2", "A", 2, "GOLD")), 400, "unknown_category", "seats[1].category"},
		{"bad seat id", seatsBody(seat("A 1", "A", 1, "STD")), 400, "invalid_plan", "seats[0].seat_id"},
		{"seat id too long", seatsBody(seat(strings.Repeat("A", 17), "A", 1, "STD")), 400, "invalid_plan", "seats[0].seat_id"},
		{"seat without row", seatsBody(seat("A-1", "", 1, "STD")), 400, "invalid_plan", "seats[0].row"},
		{"seat number 0", seatsBody(seat("A-1", "A", 0, "STD")), 400, "invalid_plan", "seats[0].number"},
		{"negative coordinate", seatsBody(map[string]any{"seat_id": "A-1", "row": "A", "number": 1, "category": "STD", "x": -5}),
			400, "invalid_plan", "seats[0].x"},
		{"20,001 seats", seatsBody(tooMany...), 400, "too_many_seats", "seats"},
		{"body over 8 MB", seatsBody(map[string]any{"seat_id": "A-1", "row": "A", "number": 1, "category": "STD",
			"section": strings.Repeat("x", 9<<20)}), 413, "body_too_large", ""},
	}
	for _, st := range showStacks {
		t.Run(st.name, func(t *testing.T) {
			a := st.mk(t)
			before := a.planCounts()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					rec := a.do("POST", "/api/v1/shows", c.body)
					if rec.Code != c.status {
						t.Fatalf("status %d, want %d: %.300s", rec.Code, c.status, rec.Body)
					}
					code, field, _ := errorOf(t, rec)
					if code != c.code || field != c.field {
						t.Errorf("code %q field %q, want %q %q (%.300s)", code, field, c.code, c.field, rec.Body)
					}
					if after := a.planCounts(); !maps.Equal(after, before) {
						t.Errorf("rows written: %v, before %v", after, before)
					}
				})
			}
		})
	}
}

func TestReplacePlanAPI(t *testing.T) {
	for _, st := range showStacks {
		t.Run(st.name, func(t *testing.T) {
			a := st.mk(t)
			show := a.createShow(mustJSON(t, gridShow(2, 2)))
			path := fmt.Sprintf("/api/v1/shows/%d/plan", show.ID)
			block := a.do("POST", fmt.Sprintf("/api/v1/shows/%d/blocks", show.ID), `{"seat_ids":["A-1","B-2"],"reason":"house"}`)
			if block.Code != http.StatusOK {
				t.Fatalf("block: %d %s", block.Code, block.Body)
			}
			plan := `{"price_categories":[{"code":"STD","name":"Standard","price_cents":3100}],
				"seats":[{"seat_id":"A-1","row":"A","number":1,"category":"STD","x":10,"y":10},
				         {"seat_id":"A-3","row":"A","number":3,"category":"STD","x":30,"y":10}]}`
			rec := a.do("PUT", path, plan)
			if rec.Code != http.StatusOK {
				t.Fatalf("replace plan: %d %s", rec.Code, rec.Body)
			}
			got := a.getShow(show.ID)
			if got.SeatCount != 2 || got.Counts != (countsJSON{Available: 1, Blocked: 1}) || len(got.PriceCategories) != 1 {
				t.Errorf("after plan change: %+v", got)
			}
			seatList := a.seatsOf(show.ID)
			if len(seatList) != 2 || seatList[0].SeatID != "A-1" || seatList[0].State != "blocked" ||
				seatList[1].SeatID != "A-3" || seatList[1].PriceCents != 3100 {
				t.Errorf("seats after plan change: %+v", seatList)
			}
			before := a.planCounts()
			for _, bad := range []string{`{"price_categories":[{"code":"STD","name":"S","price_cents":-3}],"grid":{"rows":1,"seats_per_row":1,"category":"STD"}}`,
				`{"price_categories":[{"code":"STD","name":"S","price_cents":3}]}`, `{"grid":`} {
				if rec := a.do("PUT", path, bad); rec.Code != http.StatusBadRequest {
					t.Errorf("bad plan %s: %d", bad, rec.Code)
				}
			}
			if after := a.planCounts(); !maps.Equal(after, before) || len(a.seatsOf(show.ID)) != 2 {
				t.Errorf("a bad plan changed rows: %v, before %v", after, before)
			}
			if rec := a.do("PUT", "/api/v1/shows/999999999/plan", plan); rec.Code != http.StatusNotFound {
				t.Errorf("unknown show: %d", rec.Code)
			}

			// The first order fixes the plan, even once it is cancelled.
			o := a.placeOn(show.ID, 1, "A-3")
			if o.Code != http.StatusCreated {
				t.Fatalf("place: %d %s", o.Code, o.Body)
			}
			if o := decode(t, o); o["amount_cents"] != 3100.0 {
				t.Errorf("order priced %v, want 3100", o["amount_cents"])
			}
			before = a.planCounts()
			rec = a.do("PUT", path, mustJSON(t, planRequest{PriceCategories: []categoryJSON{{"STD", "Standard", 1}},
				Grid: &gridJSON{Rows: 1, SeatsPerRow: 1, Category: "STD"}}))
			if code, _, _ := errorOf(t, rec); rec.Code != http.StatusConflict || code != "show_on_sale" {
				t.Errorf("plan change after the first order: %d %s", rec.Code, code)
			}
			if after := a.planCounts(); !maps.Equal(after, before) || a.seatsOf(show.ID)[1].PriceCents != 3100 {
				t.Errorf("refused plan change wrote: %v, before %v", after, before)
			}

			cancelled := a.createShow(mustJSON(t, gridShow(1, 1)))
			if rec := a.do("POST", fmt.Sprintf("/api/v1/shows/%d/cancel", cancelled.ID), ""); rec.Code != http.StatusOK {
				t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
			}
			rec = a.do("PUT", fmt.Sprintf("/api/v1/shows/%d/plan", cancelled.ID), plan)
			if code, _, _ := errorOf(t, rec); rec.Code != http.StatusConflict || code != "show_cancelled" {
				t.Errorf("plan change of a cancelled show: %d %s", rec.Code, code)
			}
		})
	}
}

func TestBlocksAPI(t *testing.T) {
	for _, st := range showStacks {
		t.Run(st.name, func(t *testing.T) {
			a := st.mk(t)
			show := a.createShow(mustJSON(t, gridShow(2, 3)))
			path := fmt.Sprintf("/api/v1/shows/%d/blocks", show.ID)
			if rec := a.do("POST", path, `{"seat_ids":["A-1","A-2"],"reason":"wheelchair"}`); rec.Code != http.StatusOK {
				t.Fatalf("block: %d %s", rec.Code, rec.Body)
			}
			if got := a.getShow(show.ID).Counts; got != (countsJSON{Available: 4, Blocked: 2}) {
				t.Errorf("counts %+v", got)
			}
			rec := a.placeOn(show.ID, 1, "A-1")
			if code, _, seatIDs := errorOf(t, rec); rec.Code != http.StatusConflict || code != "seat_unavailable" || !slices.Equal(seatIDs, []string{"A-1"}) {
				t.Errorf("order for a blocked seat: %d %s %v", rec.Code, code, seatIDs)
			}
			if rec := a.placeOn(show.ID, 2, "B-1"); rec.Code != http.StatusCreated {
				t.Fatalf("place B-1: %d %s", rec.Code, rec.Body)
			}
			rec = a.do("POST", path, `{"seat_ids":["B-2","B-1"],"reason":"house"}`)
			if code, _, seatIDs := errorOf(t, rec); rec.Code != http.StatusConflict || code != "seat_unavailable" || !slices.Equal(seatIDs, []string{"B-1"}) {
				t.Errorf("blocking a held seat: %d %s %v", rec.Code, code, seatIDs)
			}
			before := a.planCounts()
			for _, c := range []struct{ method, body, code, field string }{
				{"POST", `{"seat_ids":["B-3"],"reason":"vip"}`, "invalid_plan", "reason"},
				{"POST", `{"seat_ids":["B-3"]}`, "invalid_plan", "reason"},
				{"POST", `{"seat_ids":[],"reason":"house"}`, "invalid_plan", "seat_ids"},
				{"POST", `{"seat_ids":["B-3","Z-9"],"reason":"house"}`, "invalid_plan", "seat_ids[1]"},
				{"POST", `{"seat_ids":["B-3","B-3"],"reason":"house"}`, "invalid_plan", "seat_ids[1]"},
				{"POST", `{"seat_ids":"B-3","reason":"house"}`, "invalid_request", ""},
				{"POST", `{"seat_ids":["B-3"],"reason":"house","until":"never"}`, "invalid_request", ""},
				{"DELETE", `{"seat_ids":["Z-9"]}`, "invalid_plan", "seat_ids[0]"},
				{"DELETE", `{"seat_ids":["A-1"],"reason":"vip"}`, "invalid_request", ""},
				{"DELETE", `{`, "invalid_request", ""},
			} {
				rec := a.do(c.method, path, c.body)
				code, field, _ := errorOf(t, rec)
				if rec.Code != http.StatusBadRequest || code != c.code || field != c.field {
					t.Errorf("%s %s: %d %q %q, want 400 %q %q", c.method, c.body, rec.Code, code, field, c.code, c.field)
				}
			}
			if after := a.planCounts(); !maps.Equal(after, before) {
				t.Errorf("bad block requests wrote: %v, before %v", after, before)
			}
			if got := a.seatsOf(show.ID)[5]; got.SeatID != "B-3" || got.State != "available" {
				t.Errorf("B-3 after refused blocks: %+v", got)
			}
			if rec := a.do("POST", "/api/v1/shows/999999999/blocks", `{"seat_ids":["A-1"],"reason":"house"}`); rec.Code != http.StatusNotFound {
				t.Errorf("unknown show: %d", rec.Code)
			}
			if rec := a.do("DELETE", path, `{"seat_ids":["A-1"]}`); rec.Code != http.StatusOK {
				t.Fatalf("unblock: %d %s", rec.Code, rec.Body)
			}
			if rec := a.placeOn(show.ID, 3, "A-1"); rec.Code != http.StatusCreated {
				t.Errorf("order for an unblocked seat: %d %s", rec.Code, rec.Body)
			}
			states := map[string]string{}
			for _, s := range a.seatsOf(show.ID) {
				states[s.SeatID] = s.State
			}
			want := map[string]string{"A-1": "locked", "A-2": "blocked", "A-3": "available", "B-1": "locked", "B-2": "available", "B-3": "available"}
			if !maps.Equal(states, want) {
				t.Errorf("states %v, want %v", states, want)
			}
		})
	}
}

func TestCancelShowAPI(t *testing.T) {
	for _, st := range showStacks {
		t.Run(st.name, func(t *testing.T) {
			a := st.mk(t)
			show := a.createShow(mustJSON(t, gridShow(2, 3)))
			pending := a.placeOn(show.ID, 1, "A-1", "A-2")
			paidRec := a.placeOn(show.ID, 2, "B-1")
			if pending.Code != http.StatusCreated || paidRec.Code != http.StatusCreated {
				t.Fatalf("place: %d %d", pending.Code, paidRec.Code)
			}
			pendingNo, paidNo := decode(t, pending)["order_no"].(string), decode(t, paidRec)["order_no"].(string)
			if rec := a.pay(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-%s","amount_cents":2500}`, paidNo, paidNo)); rec.Code != http.StatusOK {
				t.Fatalf("pay: %d %s", rec.Code, rec.Body)
			}
			if rec := a.do("POST", fmt.Sprintf("/api/v1/shows/%d/blocks", show.ID), `{"seat_ids":["B-3"],"reason":"technical"}`); rec.Code != http.StatusOK {
				t.Fatalf("block: %d", rec.Code)
			}
			rec := a.do("POST", fmt.Sprintf("/api/v1/shows/%d/cancel", show.ID), "")
			if rec.Code != http.StatusOK {
				t.Fatalf("cancel show: %d %s", rec.Code, rec.Body)
			}
			var res cancelShowJSON
			if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			if res.Show.Status != "cancelled" || !slices.Equal(res.CancelledOrders, []string{pendingNo}) ||
				len(res.PaidOrders) != 1 || res.PaidOrders[0].OrderNo != paidNo || res.PaidOrders[0].AmountCents != 2500 {
				t.Errorf("cancel result %+v", res)
			}
			if res.Show.Counts != (countsJSON{Available: 4, Sold: 1, Blocked: 1}) {
				t.Errorf("counts after cancel %+v", res.Show.Counts)
			}
			o := decode(t, a.do("GET", "/api/v1/orders/"+pendingNo, ""))
			if o["status"] != "cancelled" || o["cancel_reason"] != "show_cancelled" {
				t.Errorf("pending order after show cancel: %v %v", o["status"], o["cancel_reason"])
			}
			before := a.planCounts()
			rec = a.placeOn(show.ID, 3, "A-3")
			if code, _, _ := errorOf(t, rec); rec.Code != http.StatusConflict || code != "show_cancelled" {
				t.Errorf("order on a cancelled show: %d %s", rec.Code, code)
			}
			if after := a.planCounts(); !maps.Equal(after, before) {
				t.Errorf("refused order wrote: %v", after)
			}
			if rec := a.do("POST", "/api/v1/shows/999999999/cancel", ""); rec.Code != http.StatusNotFound {
				t.Errorf("cancel unknown show: %d", rec.Code)
			}
			if err := reconcile.CheckInvariants(t.Context(), a.app.DB, a.app.seats, time.Now()); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestLargeShowsAPI creates a 20,000-seat show through the API (printing
// how long it took) and round-trips a 5,000-seat plan exactly.
func TestLargeShowsAPI(t *testing.T) {
	for _, st := range showStacks {
		t.Run(st.name, func(t *testing.T) {
			a := st.mk(t)
			big := gridShow(1, 1)
			delete(big, "grid")
			big["seats"] = planSeats(20_000)
			body := mustJSON(t, big)
			start := time.Now()
			show := a.createShow(body)
			took := time.Since(start)
			t.Logf("%s: created a 20,000-seat show through the API (%d KB body) in %v", st.name, len(body)>>10, took)
			if show.SeatCount != 20_000 || show.Counts.Available != 20_000 {
				t.Errorf("20k show: %+v", show)
			}

			plan := planSeats(5_000)
			mid := gridShow(1, 1)
			delete(mid, "grid")
			mid["seats"] = plan
			show = a.createShow(mustJSON(t, mid))
			got := a.seatsOf(show.ID)
			if len(got) != len(plan) {
				t.Fatalf("%d seats back, want %d", len(got), len(plan))
			}
			byID := make(map[string]seatSpecJSON, len(plan))
			for _, s := range plan {
				byID[s.SeatID] = s
			}
			for _, s := range got {
				back := seatSpecJSON{SeatID: s.SeatID, Section: s.Section, Row: s.RowLabel, Number: s.Number,
					Category: s.Category, X: s.X, Y: s.Y}
				price := int64(2500)
				if s.Category == "VIP" {
					price = 9000
				}
				if back != byID[s.SeatID] || s.PriceCents != price || s.State != "available" {
					t.Fatalf("seat %s came back as %+v, sent %+v", s.SeatID, s, byID[s.SeatID])
				}
				delete(byID, s.SeatID)
			}
			if len(byID) != 0 {
				t.Errorf("%d seats did not come back", len(byID))
			}
		})
	}
}
