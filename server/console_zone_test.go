package server

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
	"seatflow/core/store"
	"seatflow/web"
)

// TestConsoleTimeZone: each member of staff picks the zone of their own
// times on the zone page; a name the zone database does not know comes
// back on the form, with nothing stored; the pages then show times in the
// zone and name it; the empty name goes back to the server's zone; every
// change is one audit row with the zone before and after. On both stacks.
func TestConsoleTimeZone(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ctx := context.Background()
		ann := env.staff[access.RoleBoxOffice]
		b := env.login(access.RoleBoxOffice)
		other := env.login(access.RoleOps)
		stored := func(id int64) string {
			t.Helper()
			s, err := env.db.StaffByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return s.TimeZone
		}
		o := env.place(7, "A-1")
		orderPage := func(b *browser) string {
			t.Helper()
			rec := b.do("GET", "/console/orders/"+o.OrderNo, nil, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("order page: status %d", rec.Code)
			}
			return rec.Body.String()
		}
		created := func(zone string) string {
			z, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			return o.CreatedAt.In(z).Format("2006-01-02 15:04:05")
		}

		if rec := b.do("GET", "/console/account/zone", nil, nil); rec.Code != http.StatusOK ||
			!strings.Contains(rec.Body.String(), `id="time-zone"`) || !strings.Contains(rec.Body.String(), `<option value="Asia/Tokyo">`) {
			t.Fatalf("zone page: status %d: %.300s", rec.Code, rec.Body)
		}

		for _, bad := range []string{"Mars/Olympus_Mons", "Local", "../../etc/passwd", strings.Repeat("A", 65)} {
			rec := b.post("/console/account/zone", url.Values{"time_zone": {bad}})
			body := rec.Body.String()
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, `role="alert" id="zone-error"`) ||
				!strings.Contains(body, html.EscapeString(`"`+bad+`" is not a time zone name`)) {
				t.Errorf("zone %.20q: status %d, want 422 and the message: %.400s", bad, rec.Code, body)
			}
			if z := stored(ann.ID); z != "" {
				t.Errorf("zone %.20q refused, but %q stored", bad, z)
			}
		}

		if rec := b.post("/console/account/zone", url.Values{"time_zone": {" Asia/Tokyo "}}); rec.Code != http.StatusSeeOther ||
			rec.Header().Get("Location") != web.URL("/account/zone?msg=zone_changed") {
			t.Fatalf("set Asia/Tokyo: status %d, location %q", rec.Code, rec.Header().Get("Location"))
		}
		if z := stored(ann.ID); z != "Asia/Tokyo" {
			t.Fatalf("stored zone %q, want Asia/Tokyo", z)
		}
		page := orderPage(b)
		for _, want := range []string{created("Asia/Tokyo"), "Times are shown in Asia/Tokyo (JST +09:00).", `data-zone="Asia/Tokyo"`} {
			if !strings.Contains(page, want) {
				t.Errorf("order page in Asia/Tokyo lacks %q", want)
			}
		}
		// Another account keeps the server's zone.
		if page := orderPage(other); !strings.Contains(page, created("Local")) || strings.Contains(page, "Asia/Tokyo") {
			t.Errorf("the other account's order page is not in the server's zone")
		}

		// New York is never Tokyo's offset: the time must move with the zone.
		if rec := b.post("/console/account/zone", url.Values{"time_zone": {"America/New_York"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("set America/New_York: status %d", rec.Code)
		}
		if page := orderPage(b); !strings.Contains(page, created("America/New_York")) || strings.Contains(page, created("Asia/Tokyo")) {
			t.Errorf("order page not moved to America/New_York")
		}
		if rec := b.post("/console/account/zone", url.Values{"time_zone": {""}}); rec.Code != http.StatusSeeOther || stored(ann.ID) != "" {
			t.Fatalf("back to the server's zone: status %d, stored %q", rec.Code, stored(ann.ID))
		}

		entries, err := env.db.AuditLog(ctx, store.AuditQuery{Action: core.AuditTimeZone, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		want := [][2]string{{"America/New_York", ""}, {"Asia/Tokyo", "America/New_York"}, {"", "Asia/Tokyo"}} // newest first
		if len(entries) != len(want) {
			t.Fatalf("%d time zone audit rows, want %d: %+v", len(entries), len(want), entries)
		}
		for i, e := range entries {
			if e.Staff != ann.Username || e.Target != "staff:"+ann.Username ||
				e.Detail["previous_time_zone"] != want[i][0] || e.Detail["time_zone"] != want[i][1] {
				t.Errorf("audit row %d: %+v, want %v", i, e, want[i])
			}
		}
	})
}
