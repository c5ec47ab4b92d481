package server

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
)

// TestConsoleCounterBest: best N at the counter previews the seats (the
// htmx answer is the counter's forms alone, the seats in the sale's field)
// and locks nothing; refusals are messages on the form; a hold of the
// previewed seats that finds one taken meanwhile says which and comes back
// with a fresh preview, which then holds. The show is 3×4 (A-1 … C-4), so
// any 3 of a row strand its fourth seat.
func TestConsoleCounterBest(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	box := env.login(access.RoleBoxOffice)
	showPath := "/console/shows/" + strconv.FormatInt(env.show.ID, 10)
	htmx := http.Header{"Hx-Request": {"true"}}
	preview := func(form url.Values) (int, string) {
		t.Helper()
		form.Set("_csrf", box.csrf)
		rec := box.do("POST", showPath+"/counter/best", form, htmx)
		return rec.Code, rec.Body.String()
	}
	cases := []struct {
		name string
		form url.Values
		want []string // in the answer
	}{
		{"3 together", url.Values{"count": {"3"}, "together": {"1"}, "name": {"Ada"}},
			[]string{`id="counter-seats" name="seat_ids" required autocomplete="off" value="A-1, A-2, A-3"`, "Best seats: A-1, A-2, A-3.",
				"single seat is left stranded", `name="best_seats" value="A-1, A-2, A-3"`, `value="Ada"`, "autofocus"}},
		{"2 apart", url.Values{"count": {"2"}}, []string{`value="A-1, A-2"`, `name="best_apart" value="1"`}}, // A-2 first would strand A-1
		{"no count", url.Values{"count": {""}}, []string{`id="best-error"`, "from 1 to 10"}},
		{"count 11", url.Values{"count": {"11"}, "together": {"1"}}, []string{"from 1 to 10"}},
		{"more together than a row", url.Values{"count": {"5"}, "together": {"1"}}, []string{"the longest row of show"}},
		{"unknown category", url.Values{"count": {"1"}, "category": {"Z"}}, []string{"is not a category of show"}},
	}
	for _, tc := range cases {
		code, body := preview(tc.form)
		if code != http.StatusOK || !strings.Contains(body, `id="counter-side"`) || strings.Contains(body, `id="seat-grid"`) {
			t.Errorf("%s: %d, want the counter's forms alone: %.300s", tc.name, code, body)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the answer lacks %q: %.2000s", tc.name, w, body)
			}
		}
	}
	if holds, err := env.stack.Seats.Holds(ctx, env.show.ID); err != nil || len(holds) != 0 {
		t.Fatalf("previews locked %+v (%v)", holds, err)
	}
	// A-2 goes to a buyer between the preview and the hold.
	_, body := preview(url.Values{"count": {"3"}, "together": {"1"}})
	if !strings.Contains(body, `name="best_seats" value="A-1, A-2, A-3"`) {
		t.Fatalf("preview before the race: %.600s", body)
	}
	env.place(73, "A-2")
	hold := url.Values{"seat_ids": {"A-1, A-2, A-3"}, "best_count": {"3"}, "best_seats": {"A-1, A-2, A-3"}, "name": {"Ada"}}
	rec := box.post(showPath+"/counter", hold)
	body = rec.Body.String()
	if rec.Code != http.StatusConflict || !strings.Contains(body, "Taken meanwhile: A-2. A fresh choice is marked on the map") ||
		!strings.Contains(body, `value="B-1, B-2, B-3"`) || !strings.Contains(body, `value="Ada"`) {
		t.Fatalf("hold of a seat taken meanwhile: %d: %.3000s", rec.Code, body)
	}
	// Seats picked by hand are not previewed again.
	if body := box.post(showPath+"/counter", url.Values{"seat_ids": {"A-2"}, "best_count": {"3"}, "best_seats": {"A-1, A-2, A-3"}}).Body.String(); strings.Contains(body, "Taken meanwhile") {
		t.Errorf("a hand-picked hold was previewed again")
	}
	rec = box.post(showPath+"/counter", url.Values{"seat_ids": {"B-1, B-2, B-3"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("hold of the fresh preview: %d: %.300s", rec.Code, rec.Body)
	}
	// Nothing fits: what is left is said.
	if _, body := preview(url.Values{"count": {"4"}, "together": {"1"}}); !strings.Contains(body, `value="C-1, C-2, C-3, C-4"`) {
		t.Errorf("4 together with row C free: %.600s", body)
	}
	env.place(72, "C-3")
	if code, body := preview(url.Values{"count": {"4"}, "together": {"1"}}); code != 200 || !strings.Contains(body, "No seats fit. Left: –: 7 free, at most 2 together") {
		t.Errorf("4 together with no row free: %.2000s", body)
	}
	// Without htmx the whole page, with the map.
	if rec := box.post(showPath+"/counter/best", url.Values{"count": {"2"}, "together": {"1"}}); rec.Code != 200 ||
		!strings.Contains(rec.Body.String(), `id="seat-grid"`) || !strings.Contains(rec.Body.String(), `value="A-3, A-4"`) {
		t.Errorf("plain post: %d: %.300s", rec.Code, rec.Body)
	}
	if got := env.auditCount(core.AuditCounterHold); got != 1 {
		t.Errorf("counter holds audited: %d, want 1", got)
	}
}
