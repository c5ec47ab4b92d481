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
	"seatflow/core/till"
)

// TestConsoleQuickSale: one button sells the best N seats in the tender it
// names and opens the paid order (htmx follows HX-Redirect); a refusal is
// a message on the counter's form and holds nothing. The show is 3×4.
func TestConsoleQuickSale(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	box := env.login(access.RoleBoxOffice)
	quick := "/console/shows/" + strconv.FormatInt(env.show.ID, 10) + "/counter/quick"
	htmx := http.Header{"Hx-Request": {"true"}}
	for _, tc := range []struct {
		name   string
		form   url.Values
		header http.Header
		status int
		seats  []string // sold, in order
		tender core.Tender
		want   string // in the answer, for a refusal
	}{
		{name: "two together, cash", form: url.Values{"count": {"2"}, "together": {"1"}, "tender": {"cash"}},
			status: http.StatusSeeOther, seats: []string{"A-1", "A-2"}, tender: core.TenderCash},
		{name: "three together by card, through htmx", form: url.Values{"count": {"3"}, "together": {"1"}, "tender": {"card"}}, header: htmx,
			status: http.StatusOK, seats: []string{"B-1", "B-2", "B-3"}, tender: core.TenderCard},
		{name: "more together than a row", form: url.Values{"count": {"5"}, "together": {"1"}, "tender": {"cash"}},
			status: http.StatusUnprocessableEntity, want: "the longest row of show"},
		{name: "no count", form: url.Values{"count": {""}, "tender": {"cash"}}, status: http.StatusUnprocessableEntity, want: "from 1 to 10"},
		{name: "no tender", form: url.Values{"count": {"1"}}, status: http.StatusUnprocessableEntity, want: "tender must be cash or card"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.form.Set("_csrf", box.csrf)
			rec := box.do("POST", quick, tc.form, tc.header)
			if rec.Code != tc.status {
				t.Fatalf("%d, want %d: %.600s", rec.Code, tc.status, rec.Body)
			}
			if tc.seats == nil {
				if body := rec.Body.String(); !strings.Contains(body, `id="best-error"`) || !strings.Contains(body, tc.want) {
					t.Fatalf("the answer lacks the refusal %q: %.2000s", tc.want, body)
				}
				return
			}
			to := rec.Header().Get("Location")
			if tc.header != nil {
				to = rec.Header().Get("HX-Redirect")
			}
			no, ok := strings.CutPrefix(to, "/console/orders/")
			no, _, _ = strings.Cut(no, "?")
			if !ok || !strings.HasSuffix(to, "?outcome=paid") {
				t.Fatalf("sent to %q, want the paid order's page", to)
			}
			o, err := env.stack.DB.Order(ctx, no)
			if err != nil || o.Status != core.StatusPaid || strings.Join(o.SeatIDs, " ") != strings.Join(tc.seats, " ") {
				t.Fatalf("order %+v (%v), want %v paid", o, err, tc.seats)
			}
			pays, err := env.stack.DB.OrderPayments(ctx, no)
			if err != nil || len(pays) != 1 || pays[0].Tender != tc.tender || pays[0].ShiftID == 0 {
				t.Fatalf("payments %+v (%v), want one %s payment in the clerk's shift", pays, err, tc.tender)
			}
		})
	}
	// The clerk's shift closed: refused on the form, nothing held.
	if _, _, err := env.cn.Till.Close(ctx, till.CloseRequest{Clerk: env.staff[access.RoleBoxOffice].Username, CountedCents: 10000 + 2*2500}); err != nil {
		t.Fatal(err)
	}
	holds, err := env.stack.Seats.Holds(ctx, env.show.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec := box.do("POST", quick, url.Values{"_csrf": {box.csrf}, "count": {"1"}, "tender": {"cash"}}, nil)
	if body := rec.Body.String(); rec.Code != http.StatusConflict || !strings.Contains(body, `id="best-error"`) {
		t.Fatalf("with no open shift: %d %.1200s", rec.Code, body)
	}
	if after, err := env.stack.Seats.Holds(ctx, env.show.ID); err != nil || len(after) != len(holds) {
		t.Fatalf("seats held after the refusal: %d, before %d (%v)", len(after), len(holds), err)
	}
}
