package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestSetBestRulesAPI changes the rules of the 3×4 test show (seat x its
// number, y its row) between best-available placements of one seat: each
// choice follows the rules just set, though the show's plan and seat index
// were cached by the placement before.
func TestSetBestRulesAPI(t *testing.T) {
	a := newTestApp(t)
	path := fmt.Sprintf("/api/v1/shows/%d/best-available", a.show.ID)
	steps := []struct {
		name, rules string // "": no change before the placement
		want        string // the seat chosen next
	}{
		// Stage centre (2.5, 1): would strand.
		{"defaults", "", "A-1"},
		{"focal at the back right", `{"focal":{"x":4,"y":3},"allow_singles":true}`, "C-4"},
		{"focal at the back left", `{"focal":{"x":1,"y":3}}`, "C-1"},
		{"singles allowed", `{"focal":{"x":3,"y":3},"allow_singles":true}`, "C-3"},
		// B-2 strands B-1, B-3 strands B-4: A-2 is as near as they are (1) and strands none.
		{"singles avoided", `{"focal":{"x":2,"y":2}}`, "A-2"},
		{"singles allowed again", `{"focal":{"x":2,"y":2},"allow_singles":true}`, "B-2"},
		{"stage centre again", `{"focal":null,"allow_singles":true}`, "A-3"},
	}
	version := a.show.PlanVersion
	for i, st := range steps {
		if st.rules != "" {
			rec := a.do(http.MethodPut, path, st.rules)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: PUT %d: %s", st.name, rec.Code, rec.Body)
			}
			body := decode(t, rec)
			version++
			if body["show_id"] != float64(a.show.ID) || body["plan_version"] != float64(version) {
				t.Errorf("%s: answer %v, want show %d at plan version %d", st.name, body, a.show.ID, version)
			}
		}
		rec := a.do(http.MethodPost, "/api/v1/orders",
			fmt.Sprintf(`{"user_id":%d,"show_id":%d,"best_available":{"count":1}}`, i+1, a.show.ID))
		if rec.Code != http.StatusCreated {
			t.Fatalf("%s: place %d: %s", st.name, rec.Code, rec.Body)
		}
		if got := decode(t, rec)["seat_ids"].([]any); len(got) != 1 || got[0] != st.want {
			t.Errorf("%s: chose %v, want %s", st.name, got, st.want)
		}
	}
	if rec := a.do(http.MethodPost, fmt.Sprintf("/api/v1/shows/%d/cancel", a.show.ID), ""); rec.Code != http.StatusOK {
		t.Fatalf("cancel: %d %s", rec.Code, rec.Body)
	}
	if rec := a.do(http.MethodPut, path, `{"allow_singles":true}`); rec.Code != http.StatusConflict || errorCode(t, rec) != "show_cancelled" {
		t.Errorf("cancelled show: %d %s, want 409 show_cancelled", rec.Code, rec.Body)
	}
}

// TestSetBestRulesBadInput: each bad request is refused naming the field
// at fault where there is one, and the show's rules and plan version stay.
func TestSetBestRulesBadInput(t *testing.T) {
	a := newTestApp(t)
	tests := []struct {
		name   string
		show   string // the path's id; "" the test show
		body   string
		status int
		code   string
		field  string
	}{
		{"focal x negative", "", `{"focal":{"x":-1,"y":0}}`, 400, "invalid_show", "focal"},
		{"focal y past the bound", "", `{"focal":{"x":0,"y":1000001}}`, 400, "invalid_show", "focal"},
		// The decoder names a field of the wrong type in its message.
		{"focal not an object", "", `{"focal":"front"}`, 400, "invalid_request", "focal"},
		{"allow_singles not a boolean", "", `{"allow_singles":"yes"}`, 400, "invalid_request", "allow_singles"},
		{"unknown field", "", `{"focus":{"x":1,"y":1}}`, 400, "invalid_request", ""},
		{"not JSON", "", `{"focal":`, 400, "invalid_request", ""},
		{"show id not a number", "x", `{}`, 400, "invalid_request", ""},
		{"unknown show", "999999", `{}`, 404, "show_not_found", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.show
			if id == "" {
				id = fmt.Sprint(a.show.ID)
			}
			rec := a.do(http.MethodPut, "/api/v1/shows/"+id+"/best-available", tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			e := decode(t, rec)["error"].(map[string]any)
			named := e["field"] == tc.field || strings.HasPrefix(fmt.Sprint(e["message"]), tc.field+" ")
			if e["code"] != tc.code || (tc.field != "" && !named) {
				t.Errorf("error %v, want code %s field %q", e, tc.code, tc.field)
			}
		})
	}
	show, err := a.app.DB.Show(t.Context(), a.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	if show.PlanVersion != a.show.PlanVersion || show.Best != a.show.Best {
		t.Errorf("bad input changed the show: plan version %d, rules %+v; want %d, %+v", show.PlanVersion, show.Best,
			a.show.PlanVersion, a.show.Best)
	}
}

// TestGetBestRulesAPI reads a show's rules back after each PUT, in the
// PUT's own answer shape, and refuses what does not name a show.
func TestGetBestRulesAPI(t *testing.T) {
	a := newTestApp(t)
	path := fmt.Sprintf("/api/v1/shows/%d/best-available", a.show.ID)
	steps := []struct {
		name, put string // "": read before any change
		want      string
	}{
		{"defaults", "", fmt.Sprintf(`{"show_id":%d,"plan_version":%d,"focal":null,"allow_singles":false}`, a.show.ID, a.show.PlanVersion)},
		{"focal and singles", `{"focal":{"x":4,"y":3},"allow_singles":true}`,
			fmt.Sprintf(`{"show_id":%d,"plan_version":%d,"focal":{"x":4,"y":3},"allow_singles":true}`, a.show.ID, a.show.PlanVersion+1)},
		{"back to the stage centre", `{"focal":null}`,
			fmt.Sprintf(`{"show_id":%d,"plan_version":%d,"focal":null,"allow_singles":false}`, a.show.ID, a.show.PlanVersion+2)},
	}
	for _, st := range steps {
		if st.put != "" {
			rec := a.do(http.MethodPut, path, st.put)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: PUT %d: %s", st.name, rec.Code, rec.Body)
			}
			if got := strings.TrimSpace(rec.Body.String()); got != st.want {
				t.Errorf("%s: PUT answered %s, want %s", st.name, got, st.want)
			}
		}
		rec := a.do(http.MethodGet, path, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: GET %d: %s", st.name, rec.Code, rec.Body)
		}
		if got := strings.TrimSpace(rec.Body.String()); got != st.want {
			t.Errorf("%s: GET answered %s, want %s", st.name, got, st.want)
		}
	}
	bad := []struct {
		name, show string
		status     int
		code       string
	}{
		{"show id not a number", "x", 400, "invalid_request"},
		{"unknown show", "999999", 404, "show_not_found"},
	}
	for _, tc := range bad {
		rec := a.do(http.MethodGet, "/api/v1/shows/"+tc.show+"/best-available", "")
		if rec.Code != tc.status || errorCode(t, rec) != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, rec.Code, rec.Body, tc.status, tc.code)
		}
	}
}
