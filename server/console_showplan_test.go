package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
)

// TestConsoleReplacePlan: a manager replaces a show's plan from its edit
// page (a grid with categories by rows, or a CSV file), previews it
// without writing, sees a bad plan's reason with the entries kept, and is
// refused once the show has an order.
func TestConsoleReplacePlan(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	b := env.login(access.RoleManager)
	id := strconv.FormatInt(env.show.ID, 10)
	path := "/console/shows/" + id + "/plan"
	seats := func() []core.Seat {
		t.Helper()
		s, err := env.db.Seats(ctx, env.show.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	page := b.do("GET", "/console/shows/"+id+"/edit", nil, nil).Body.String()
	for _, want := range []string{`id="show-plan-form"`, `id="grid-rows" name="rows" type="number" min="1" max="20000" value="3"`,
		`value="4"`} {
		if !strings.Contains(page, want) {
			t.Errorf("edit page's plan form lacks %q", want)
		}
	}
	grid := map[string]string{"categories": "STD,Standard,20.00\nVIP,Front,45", "source": "grid", "rows": "5",
		"seats_per_row": "6", "grid_category": "VIP:A, STD:B-E"}
	steps := []struct {
		name           string
		fields         map[string]string
		fileName, file string
		status         int
		want           string // in the Location on 303, else in the page
		seats          int    // the plan's seats afterwards
	}{
		{"preview writes nothing", with(grid, "preview", "1"), "", "", 200, `id="show-preview"`, 12},
		{"a row with no category", with(grid, "grid_category", "VIP:A"), "", "", 422, "row 2 (B) has no category", 12},
		{"a category with no rows", with(grid, "grid_category", "STD:A-E"), "", "", 422, "category VIP has no seats", 12},
		{"a category not in the list", with(grid, "grid_category", "GOLD:A-E"), "", "", 422, "GOLD", 12},
		{"the grid", grid, "", "", 303, "/edit?msg=plan_replaced", 30},
		{"a CSV file", with(grid, "source", "upload"), "plan.csv",
			"section,row,number,category,x,y\nStalls,A,1,STD,10,10\nStalls,A,2,VIP,20,10\n", 303, "/edit?msg=plan_replaced", 2},
		{"a CSV file's bad line", with(grid, "source", "upload"), "plan.csv",
			"section,row,number,category,x,y\nStalls,A,1,STD,10,10\nStalls,A,x,VIP,20,10\n", 422, "line 3", 2},
	}
	for _, st := range steps {
		rec := b.postMultipart(path, st.fields, st.fileName, st.file)
		if rec.Code != st.status {
			t.Fatalf("%s: status %d, want %d: %.400s", st.name, rec.Code, st.status, rec.Body)
		}
		if st.status == http.StatusSeeOther {
			if loc := rec.Header().Get("Location"); !strings.HasSuffix(loc, st.want) {
				t.Fatalf("%s: Location %q, want …%s", st.name, loc, st.want)
			}
		} else if body := rec.Body.String(); !strings.Contains(body, st.want) || !strings.Contains(body, st.fields["grid_category"]) {
			t.Fatalf("%s: page lacks %q or the entries as typed: %.300s", st.name, st.want, body[max(strings.Index(body, "show-plan-error"), 0):])
		}
		if n := len(seats()); n != st.seats {
			t.Fatalf("%s: the show has %d seats, want %d", st.name, n, st.seats)
		}
	}
	if s := seats(); s[1].SeatID != "A-2" || s[1].Category != "VIP" || s[1].PriceCents != 4500 {
		t.Errorf("the CSV plan's seat %+v, want A-2 VIP at 4500", s[1])
	}
	if n := env.auditCount(core.AuditShowPlan); n != 2 {
		t.Errorf("show_plan audited %d times, want 2", n)
	}
	env.place(40, "A-1")
	rec := b.postMultipart(path, grid, "", "")
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "This show has orders") || len(seats()) != 2 {
		t.Errorf("a plan replaced under an order: %d, %d seats: %.300s", rec.Code, len(seats()), rec.Body)
	}
	if rec := env.login(access.RoleBoxOffice).postMultipart(path, grid, "", ""); rec.Code != http.StatusForbidden {
		t.Errorf("box office replaced a plan: %d", rec.Code)
	}
}

// with is fields with key set to value, fields itself unchanged.
func with(fields map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(fields)+1)
	for k, v := range fields {
		out[k] = v
	}
	out[key] = value
	return out
}
