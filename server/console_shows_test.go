package server

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
)

// postMultipart sends the new-show form with a plan file (none when file
// is "").
func (b *browser) postMultipart(path string, fields map[string]string, fileName, file string) *httptest.ResponseRecorder {
	b.env.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("_csrf", b.csrf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if fileName != "" {
		fw, err := w.CreateFormFile("plan", fileName)
		if err != nil {
			b.env.t.Fatal(err)
		}
		_, _ = fw.Write([]byte(file))
	}
	_ = w.Close()
	req := httptest.NewRequestWithContext(context.Background(), "POST", path, &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.RemoteAddr = b.ip + ":40000"
	for _, c := range b.cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	b.env.e.ServeHTTP(rec, req)
	return rec
}

func newShowFields(source string) map[string]string {
	return map[string]string{"name": "Console show", "venue": "Hall 2", "starts_at": "2027-06-01T20:00", "currency": "EUR",
		"categories": "STD,Standard,25.00\nVIP,Front rows,60", "source": source, "rows": "3", "seats_per_row": "4",
		"grid_category": "STD:A-B, VIP:C"}
}

// TestConsoleCreateShow: a manager sets shows up from a grid, a CSV plan
// and a JSON plan; a bad form or plan comes back with its reason (a CSV
// plan's line) and writes nothing.
func TestConsoleCreateShow(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleManager)
	showCount := func() int { return env.showCount() }
	created := func(rec *httptest.ResponseRecorder) core.Show {
		t.Helper()
		loc := rec.Header().Get("Location")
		var id int64
		if rec.Code != http.StatusSeeOther || !strings.HasSuffix(loc, "?msg=show_created") {
			body := rec.Body.String()
			t.Fatalf("create: status %d, Location %q: %.300s", rec.Code, loc, body[max(strings.Index(body, "<main"), 0):])
		}
		if _, err := fmt.Sscanf(loc, "/console/shows/%d", &id); err != nil {
			t.Fatal(err)
		}
		show, err := env.db.Show(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return show
	}

	if rec := b.do("GET", "/console/shows", nil, nil); !strings.Contains(rec.Body.String(), `id="new-show"`) {
		t.Errorf("the shows list has no set-up link for a manager")
	}
	if rec := env.login(access.RoleBoxOffice).do("GET", "/console/shows", nil, nil); strings.Contains(rec.Body.String(), `id="new-show"`) {
		t.Errorf("box office sees the set-up link")
	}
	if rec := b.do("GET", "/console/shows/new", nil, nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `id="newshow-form"`) {
		t.Fatalf("new show form: %d", rec.Code)
	}

	grid := created(b.postMultipart("/console/shows", newShowFields("grid"), "", ""))
	if grid.SeatCount != 12 || grid.Currency != "EUR" || grid.Name != "Console show" {
		t.Errorf("grid show %+v", grid)
	}
	gridSeats, err := env.db.Seats(context.Background(), grid.ID)
	if err != nil || len(gridSeats) != 12 || gridSeats[7].Category != "STD" || gridSeats[7].PriceCents != 2500 ||
		gridSeats[8].SeatID != "C-1" || gridSeats[8].Category != "VIP" || gridSeats[8].PriceCents != 6000 {
		t.Errorf("grid seats by row range: %+v, %v", gridSeats, err)
	}
	csvPlan := "section,row,number,category,x,y\nStalls,A,1,STD,10,10\nStalls,A,2,VIP,20,10\nCircle,CA,1,STD,10,50\n"
	csvShow := created(b.postMultipart("/console/shows", newShowFields("upload"), "plan.csv", csvPlan))
	seats, err := env.db.Seats(context.Background(), csvShow.ID)
	if err != nil || len(seats) != 3 || seats[1].Category != "VIP" || seats[1].PriceCents != 6000 || seats[2].Section != "Circle" {
		t.Errorf("CSV show seats %+v, %v", seats, err)
	}
	jsonPlan := `{"seats":[{"seat_id":"BOX-1","section":"Boxes","row":"1","number":1,"category":"VIP","x":1,"y":1},` +
		`{"seat_id":"BOX-2","section":"Boxes","row":"1","number":2,"category":"STD","x":2,"y":1}]}`
	if js := created(b.postMultipart("/console/shows", newShowFields("upload"), "plan.json", jsonPlan)); js.SeatCount != 2 {
		t.Errorf("JSON show %+v", js)
	}

	before := showCount()
	gridWith := func(edit func(map[string]string)) map[string]string {
		m := newShowFields("grid")
		edit(m)
		return m
	}
	upload := newShowFields("upload")
	for _, c := range []struct {
		name           string
		fields         map[string]string
		fileName, file string
		want           string
	}{
		{"bad number", upload, "plan.csv", "section,row,number,category,x,y\nStalls,A,1,STD,1,1\nStalls,A,two,STD,2,1\n", "plan line 3: number &#34;two&#34; is not a whole number"},
		{"missing field", upload, "plan.csv", "section,row,number,category,x,y\nStalls,A,1,STD,1\n", "plan: line 2: wrong number of fields"},
		{"bad quote", upload, "plan.csv", "section,row,number,category,x,y\nStalls,\"A,1,STD,1,1\n", "plan: line 2"},
		{"wrong header", upload, "plan.csv", "row,number\nA,1\n", "plan line 1: the header must be section,row,number,category,x,y"},
		{"unknown category", upload, "plan.csv", "section,row,number,category,x,y\nStalls,A,1,STD,1,1\nStalls,A,2,STD,2,1\nStalls,A,3,GOLD,3,1\n", "plan line 4: &#34;GOLD&#34; is not a price category"},
		{"duplicate seat", upload, "plan.csv", "section,row,number,category,x,y\nStalls,A,1,STD,1,1\nStalls,A,1,STD,2,1\n", "plan line 3: &#34;A-1&#34; is also line 2"},
		{"empty file", upload, "plan.csv", "", "the plan file is empty"},
		{"malformed JSON", upload, "plan.json", `{"seats":[`, "request body is truncated JSON"},
		{"no file", upload, "", "", "choose a plan file to upload"},
		{"bad currency", gridWith(func(m map[string]string) { m["currency"] = "EURO" }), "", "", "currency: &#34;EURO&#34; is not an ISO 4217 currency code"},
		{"negative price", gridWith(func(m map[string]string) { m["categories"] = "STD,Standard,-5" }), "", "", "price categories line 1: price &#34;-5&#34; is not an amount of EUR with at most 2 decimals"},
		{"bad price", gridWith(func(m map[string]string) { m["categories"] = "STD,Standard,cheap" }), "", "", "price categories line 1: price &#34;cheap&#34; is not an amount of EUR"},
		{"price in cents", gridWith(func(m map[string]string) { m["categories"] = "STD,Standard,25.005" }), "", "", "&#34;25.005&#34; is not an amount of EUR with at most 2 decimals"},
		{"decimals of yen", gridWith(func(m map[string]string) {
			m["currency"], m["categories"], m["grid_category"] = "JPY", "STD,Standard,2500.5", "STD"
		}), "", "", "&#34;2500.5&#34; is not a whole amount of JPY"},
		{"a category with no seats", gridWith(func(m map[string]string) { m["grid_category"] = "STD" }), "", "", "category VIP has no seats"},
		{"a category by rows of no letter", gridWith(func(m map[string]string) { m["grid_category"] = "STD:1-2" }), "", "", "&#34;STD:1-2&#34; is not CODE:ROW or CODE:FIRST-LAST"},
		{"rows past the grid", gridWith(func(m map[string]string) { m["grid_category"] = "STD:A-B VIP:C-D" }), "", "", "grid.row_categories[1]: rows 3-4"},
		{"a row left out", gridWith(func(m map[string]string) { m["grid_category"] = "STD:A VIP:C" }), "", "", "row 2 (B) has no category"},
		{"bad start", gridWith(func(m map[string]string) { m["starts_at"] = "soon" }), "", "", "starts: &#34;soon&#34; is not a date and time"},
		{"grid too big", gridWith(func(m map[string]string) { m["rows"], m["seats_per_row"] = "200", "101" }), "", "", "grid: 200×101 seats, at most 20000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := b.postMultipart("/console/shows", c.fields, c.fileName, c.file)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %.300s", rec.Code, rec.Body)
			}
			if body := rec.Body.String(); !strings.Contains(body, `id="newshow-error"`) || !strings.Contains(body, c.want) {
				i := strings.Index(body, `id="newshow-error"`)
				t.Errorf("page does not say %q: %.300s", c.want, body[max(i, 0):])
			}
			if n := showCount(); n != before {
				t.Errorf("%d shows after a refused form, want %d", n, before)
			}
		})
	}
	if rec := env.login(access.RoleOps).postMultipart("/console/shows", newShowFields("grid"), "", ""); rec.Code != http.StatusForbidden {
		t.Errorf("ops may set up a show: %d", rec.Code)
	}
}

// TestConsoleBlockSeats: a manager blocks seats from the seat panel and
// unblocks them; the public path is refused meanwhile; both are audited.
func TestConsoleBlockSeats(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleManager)
	show := fmt.Sprint(env.show.ID)
	panel := b.do("GET", "/console/shows/"+show+"/seats/A-1", nil, nil).Body.String()
	if !strings.Contains(panel, `id="block-form"`) {
		t.Fatalf("no block form on an available seat's panel: %s", panel)
	}
	if p := env.login(access.RoleBoxOffice).do("GET", "/console/shows/"+show+"/seats/A-1", nil, nil).Body.String(); strings.Contains(p, `id="block-form"`) {
		t.Errorf("box office sees the block form")
	}
	rec := b.post("/console/shows/"+show+"/block", url.Values{"seat_ids": {"A-1, A-2 A-3"}, "reason": {"wheelchair"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/console/shows/"+show+"?msg=seats_blocked" {
		t.Fatalf("block: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if _, err := env.engine.Place(context.Background(), core.PlaceRequest{UserID: 1, ShowID: env.show.ID, SeatIDs: []string{"A-2"}}); err == nil {
		t.Error("a blocked seat was sold to the public")
	}
	page := b.do("GET", "/console/shows/"+show, nil, nil).Body.String()
	if !strings.Contains(page, `["A-2","blocked"]`) {
		t.Errorf("the map does not show A-2 blocked")
	}
	if p := b.do("GET", "/console/shows/"+show+"/seats/A-2", nil, nil).Body.String(); !strings.Contains(p, `id="unblock-form"`) {
		t.Errorf("no unblock form on a blocked seat's panel")
	}
	held := env.place(2, "B-1")
	if rec := b.post("/console/shows/"+show+"/block", url.Values{"seat_ids": {"B-1"}, "reason": {"house"}}); rec.Code != http.StatusConflict {
		t.Errorf("blocking a held seat: %d, want 409", rec.Code)
	}
	if rec := b.post("/console/shows/"+show+"/block", url.Values{"seat_ids": {"B-2"}, "reason": {"vip"}}); rec.Code != http.StatusBadRequest {
		t.Errorf("bad reason: %d, want 400", rec.Code)
	}
	if rec := b.post("/console/shows/"+show+"/unblock", url.Values{"seat_ids": {"A-2"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("unblock: %d", rec.Code)
	}
	if o, err := env.engine.Place(context.Background(), core.PlaceRequest{UserID: 1, ShowID: env.show.ID, SeatIDs: []string{"A-2"}}); err != nil {
		t.Errorf("unblocked seat: %v", err)
	} else if o.OrderNo == held.OrderNo {
		t.Error("same order")
	}
	if env.auditCount(core.AuditSeatsBlock) != 1 || env.auditCount(core.AuditSeatsUnblock) != 1 {
		t.Errorf("audit: %d blocks, %d unblocks", env.auditCount(core.AuditSeatsBlock), env.auditCount(core.AuditSeatsUnblock))
	}
}

// TestConsoleShowPreview: "Preview the map" draws the plan without writing
// it, a bad plan is refused the same way as on create, and an uploaded
// plan is kept, so the show is created afterwards without a second upload.
func TestConsoleShowPreview(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleManager)
	showCount := func() int { return env.showCount() }
	before := showCount()
	preview := func(fields map[string]string, fileName, file string) string {
		t.Helper()
		f := map[string]string{"preview": "1"}
		for k, v := range fields {
			f[k] = v
		}
		rec := b.postMultipart("/console/shows", f, fileName, file)
		if rec.Code != http.StatusOK {
			t.Fatalf("preview: status %d: %.300s", rec.Code, rec.Body)
		}
		return rec.Body.String()
	}

	grid := preview(newShowFields("grid"), "", "")
	for _, want := range []string{`id="show-preview"`, `id="preview-seats">12<`, `id="preview-capacity">€440.00<`,
		`title="A-4 · STD · €25.00"`, `title="C-4 · VIP · €60.00"`} {
		if !strings.Contains(grid, want) {
			t.Errorf("grid preview lacks %s", want)
		}
	}
	// Prices are typed in the show's currency: 2500 yen (no minor unit),
	// 2.5 dinars (three decimals), shown as such.
	for currency, c := range map[string]struct {
		categories string
		want       []string
	}{
		"JPY": {"STD,Standard,2500\nVIP,Front rows,6000", []string{`id="preview-capacity">¥44,000<`, `title="A-4 · STD · ¥2,500"`}},
		"KWD": {"STD,Standard,2.5\nVIP,Front rows,6", []string{"id=\"preview-capacity\">KWD\u00a044.000<", "title=\"A-4 · STD · KWD\u00a02.500\""}},
	} {
		f := newShowFields("grid")
		f["currency"], f["categories"] = currency, c.categories
		body := preview(f, "", "")
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s preview lacks %s", currency, w)
			}
		}
	}
	csvPlan := "section,row,number,category,x,y\nStalls,A,1,STD,10,10\nStalls,A,2,VIP,20,10\n"
	up := preview(newShowFields("upload"), "plan.csv", csvPlan)
	if !strings.Contains(up, `id="preview-seats">2<`) || !strings.Contains(up, `id="plan-kept"`) ||
		!strings.Contains(up, `name="plan_text" value="section,row,number,category,x,y`) {
		t.Errorf("upload preview: seats, or the kept plan, missing")
	}
	if n := showCount(); n != before {
		t.Fatalf("previews wrote %d shows", n-before)
	}
	if rec := b.postMultipart("/console/shows", map[string]string{"preview": "1", "name": "x", "starts_at": "2027-06-01T20:00",
		"currency": "EUR", "categories": "STD,Standard,2500", "source": "upload"}, "plan.csv",
		"section,row,number,category,x,y\nStalls,A,1,GOLD,1,1\n"); rec.Code != http.StatusUnprocessableEntity ||
		!strings.Contains(rec.Body.String(), "plan line 2: &#34;GOLD&#34; is not a price category") || strings.Contains(rec.Body.String(), `id="show-preview"`) {
		t.Errorf("bad plan preview: %d: %.300s", rec.Code, rec.Body)
	}

	// Create with the kept plan and no file.
	fields := newShowFields("upload")
	fields["plan_text"] = csvPlan
	rec := b.postMultipart("/console/shows", fields, "", "")
	var id int64
	if _, err := fmt.Sscanf(rec.Header().Get("Location"), "/console/shows/%d", &id); rec.Code != http.StatusSeeOther || err != nil {
		t.Fatalf("create from the kept plan: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	seats, err := env.db.Seats(context.Background(), id)
	if err != nil || len(seats) != 2 || seats[1].Category != "VIP" {
		t.Errorf("seats of the show created from the kept plan: %+v %v", seats, err)
	}
}

// showCount is how many shows the store has.
func (env *consoleEnv) showCount() int {
	env.t.Helper()
	shows, err := env.db.Shows(context.Background())
	if err != nil {
		env.t.Fatal(err)
	}
	return len(shows)
}
