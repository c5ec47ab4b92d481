package server

import (
	"fmt"
	"maps"
	"net/http"
	"testing"
)

// TestEditShowAPI: PATCH /shows/{id} changes what it is given and keeps the
// rest; bad input is 400 naming the field with nothing written; after the
// first order it is 409 show_on_sale, on a cancelled show 409
// show_cancelled, and an unknown show 404.
func TestEditShowAPI(t *testing.T) {
	for _, st := range showStacks {
		t.Run(st.name, func(t *testing.T) {
			a := st.mk(t)
			show := a.createShow(mustJSON(t, gridShow(2, 3)))
			path := fmt.Sprintf("/api/v1/shows/%d", show.ID)
			for _, c := range []struct {
				name, body string
				status     int
				code       string
				field      string
				want       func(showDetailJSON) bool
			}{
				{"rename", `{"name":"Hamlet (matinee)"}`, 200, "", "", func(s showDetailJSON) bool {
					return s.Name == "Hamlet (matinee)" && s.Venue == "Main hall" && s.StartsAt == "2027-05-01T19:30:00.000Z"
				}},
				{"times and venue", `{"venue":"Small hall","starts_at":"2027-05-01T14:30:00Z","sales_end":"2027-05-01T12:00:00Z"}`, 200, "", "",
					func(s showDetailJSON) bool {
						return s.Name == "Hamlet (matinee)" && s.Venue == "Small hall" && s.StartsAt == "2027-05-01T14:30:00.000Z" &&
							s.SalesEnd == "2027-05-01T12:00:00.000Z"
					}},
				{"clear the sales end", `{"sales_end":""}`, 200, "", "", func(s showDetailJSON) bool { return s.SalesEnd == "" }},
				{"empty name", `{"name":""}`, 400, "invalid_show", "name", nil},
				{"a control character", `{"venue":"Hall\u0007"}`, 400, "invalid_text", "venue", nil},
				{"not a time", `{"starts_at":"tomorrow"}`, 400, "invalid_show", "starts_at", nil},
				{"sales end after the start", `{"sales_end":"2027-05-02T00:00:00Z"}`, 400, "invalid_show", "sales_end", nil},
				{"an unknown field", `{"currency":"USD"}`, 400, "invalid_request", "", nil},
			} {
				t.Run(c.name, func(t *testing.T) {
					before := a.planCounts()
					was := a.getShow(show.ID)
					rec := a.do("PATCH", path, c.body)
					if rec.Code != c.status {
						t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
					}
					if c.want != nil {
						if got := a.getShow(show.ID); !c.want(got) {
							t.Errorf("after the edit: %+v", got.showJSON)
						}
						return
					}
					if code, field, _ := errorOf(t, rec); code != c.code || field != c.field {
						t.Errorf("error %s (field %q), want %s (%q)", code, field, c.code, c.field)
					}
					if after := a.planCounts(); !maps.Equal(after, before) || a.getShow(show.ID).showJSON != was.showJSON {
						t.Errorf("a refused edit wrote")
					}
				})
			}
			if rec := a.placeOn(show.ID, 1, "A-1"); rec.Code != http.StatusCreated {
				t.Fatalf("place: %d %s", rec.Code, rec.Body)
			}
			if rec := a.do("PATCH", path, `{"name":"Too late"}`); rec.Code != http.StatusConflict || errorCode(t, rec) != "show_on_sale" {
				t.Errorf("edit after an order: %d %s", rec.Code, rec.Body)
			}
			other := a.createShow(mustJSON(t, gridShow(1, 2)))
			if rec := a.do("POST", fmt.Sprintf("/api/v1/shows/%d/cancel", other.ID), ""); rec.Code != http.StatusOK {
				t.Fatalf("cancel: %d", rec.Code)
			}
			if rec := a.do("PATCH", fmt.Sprintf("/api/v1/shows/%d", other.ID), `{"name":"Back"}`); rec.Code != http.StatusConflict || errorCode(t, rec) != "show_cancelled" {
				t.Errorf("edit a cancelled show: %d %s", rec.Code, rec.Body)
			}
			if rec := a.do("PATCH", "/api/v1/shows/999999999", `{"name":"X"}`); rec.Code != http.StatusNotFound {
				t.Errorf("edit an unknown show: %d", rec.Code)
			}
		})
	}
}

// TestDraftShowAPI: a show created with "draft": true refuses orders
// (409 show_not_on_sale, nothing written) until POST /shows/{id}/publish;
// publishing again is harmless, a cancelled show is not published.
func TestDraftShowAPI(t *testing.T) {
	for _, st := range showStacks {
		t.Run(st.name, func(t *testing.T) {
			a := st.mk(t)
			body := gridShow(1, 3)
			body["draft"] = true
			show := a.createShow(mustJSON(t, body))
			if show.Status != "draft" {
				t.Fatalf("created show is %s", show.Status)
			}
			before := a.planCounts()
			if rec := a.placeOn(show.ID, 1, "A-1"); rec.Code != http.StatusConflict || errorCode(t, rec) != "show_not_on_sale" {
				t.Fatalf("order on a draft: %d %s", rec.Code, rec.Body)
			}
			if after := a.planCounts(); !maps.Equal(after, before) {
				t.Errorf("a refused order wrote: %v", after)
			}
			publish := fmt.Sprintf("/api/v1/shows/%d/publish", show.ID)
			for range 2 {
				if rec := a.do("POST", publish, ""); rec.Code != http.StatusOK || decode(t, rec)["status"] != "on_sale" {
					t.Fatalf("publish: %d %s", rec.Code, rec.Body)
				}
			}
			if rec := a.placeOn(show.ID, 1, "A-1"); rec.Code != http.StatusCreated {
				t.Errorf("order after publishing: %d %s", rec.Code, rec.Body)
			}
			if rec := a.do("POST", fmt.Sprintf("/api/v1/shows/%d/cancel", show.ID), ""); rec.Code != http.StatusOK {
				t.Fatalf("cancel: %d", rec.Code)
			}
			if rec := a.do("POST", publish, ""); rec.Code != http.StatusConflict || errorCode(t, rec) != "show_cancelled" {
				t.Errorf("publish a cancelled show: %d %s", rec.Code, rec.Body)
			}
			if rec := a.do("POST", "/api/v1/shows/999999999/publish", ""); rec.Code != http.StatusNotFound {
				t.Errorf("publish an unknown show: %d", rec.Code)
			}
		})
	}
}
