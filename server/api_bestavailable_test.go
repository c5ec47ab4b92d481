package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"
)

// TestBestAvailableAPI places orders by best available on the 3×4 test
// show (one category, focal point the front row's middle): the chosen
// seats, then 409 not_enough_seats saying what is left.
func TestBestAvailableAPI(t *testing.T) {
	a := newTestApp(t, "SEATFLOW_MAX_SEATS_PER_ORDER", "10", "SEATFLOW_PURCHASE_LIMIT", "100")
	place := func(user int64, best string) *httpResult {
		rec := a.do("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":%d,"show_id":%d,"best_available":%s}`, user, a.show.ID, best))
		var r httpResult
		r.status = rec.Code
		if err := json.Unmarshal(rec.Body.Bytes(), &r.body); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	steps := []struct {
		best   string
		status int
		seats  []string // chosen
		left   any      // not_enough_seats
	}{
		// score best but strand; the tie of goes to the lower position.
		{`{"count":2}`, 201, []string{"A-1", "A-2"}, nil},
		{`{"count":4,"together":true}`, 201, []string{"B-1", "B-2", "B-3", "B-4"}, nil},
		{`{"count":4}`, 201, []string{"C-1", "C-2", "C-3", "C-4"}, nil},
		{`{"count":3}`, 409, nil, []any{map[string]any{"category": "", "free": 2.0, "together": 2.0}}},
		{`{"count":2,"accessible":true}`, 409, nil, []any{map[string]any{"category": "", "free": 0.0, "together": 0.0}}},
		{`{"count":2,"together":false}`, 201, []string{"A-3", "A-4"}, nil},
	}
	for i, st := range steps {
		r := place(int64(i+1), st.best)
		if r.status != st.status {
			t.Fatalf("step %d %s: status %d, want %d: %v", i, st.best, r.status, st.status, r.body)
		}
		if st.status == http.StatusCreated {
			var got []string
			for _, s := range r.body["seat_ids"].([]any) {
				got = append(got, s.(string))
			}
			if !reflect.DeepEqual(got, st.seats) {
				t.Errorf("step %d %s: seats %v, want %v", i, st.best, got, st.seats)
			}
			continue
		}
		e := r.body["error"].(map[string]any)
		if e["code"] != "not_enough_seats" || !reflect.DeepEqual(e["left"], st.left) {
			t.Errorf("step %d %s: error %v, want not_enough_seats left %v", i, st.best, e, st.left)
		}
	}
}

type httpResult struct {
	status int
	body   map[string]any
}

// TestBestAvailableBadInput: each bad request is 400 naming the field, and
// nothing is written.
func TestBestAvailableBadInput(t *testing.T) {
	a := newTestApp(t, "SEATFLOW_MAX_SEATS_PER_ORDER", "10")
	show := a.show.ID
	tests := []struct {
		name, body, code, field string
	}{
		{"count 0", `{"count":0}`, "invalid_request", "best_available.count"},
		{"count 11", `{"count":11}`, "invalid_request", "best_available.count"},
		{"unknown category", `{"count":1,"category":"VIP"}`, "unknown_category", "best_available.category"},
		{"together past the longest row", `{"count":5,"together":true}`, "invalid_request", "best_available.count"},
		{"both seat_ids and best_available", `{"count":1},"seat_ids":["A-1"]`, "invalid_request", "best_available"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := a.do("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":1,"show_id":%d,"best_available":%s}`, show, tc.body))
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", rec.Code, rec.Body)
			}
			e := decode(t, rec)["error"].(map[string]any)
			if e["code"] != tc.code || e["field"] != tc.field {
				t.Errorf("error %v, want code %s field %s", e, tc.code, tc.field)
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
