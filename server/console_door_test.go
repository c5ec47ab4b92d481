package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"seatflow/core/access"
	"seatflow/core/checkin"

	"github.com/labstack/echo/v4"
)

// TestDoorRoleRoutes walks every console route as the door role: the scan
// page, signing out and the door's own account (password, second factor,
// zone, sessions: its pages are walked, its changes are not) are the only
// ones past the role check; every other route that needs a session is the
// 403 page. A route added later is covered without editing this test.
func TestDoorRoleRoutes(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleDoor)
	if b.csrf == "" {
		b.csrf = hiddenCSRF.FindStringSubmatch(b.do("GET", "/console/door", nil, nil).Body.String())[1]
	}
	public := map[string]bool{ // no session needed: served to anyone
		"GET /console/login": true, "POST /console/login": true, "GET /console/lang": true,
		"GET /console/static/*": true, "GET /console": true,
		"GET /console/reset/:token": true, "POST /console/reset/:token": true,
	}
	// The door's routes and what they answer here (counts and the ticket
	// list without a show named, and a sync that is not JSON, are bad input).
	allowed := map[string]int{"GET /console/door": http.StatusOK, "POST /console/door": http.StatusOK,
		"POST /console/door/undo": http.StatusOK, "GET /console/door/counts": http.StatusBadRequest,
		"GET /console/door/list": http.StatusBadRequest, "POST /console/door/sync": http.StatusBadRequest,
		"GET /console/door/ping": http.StatusNoContent}
	ownAccount := func(r *echo.Route) bool {
		return strings.HasPrefix(r.Path, "/console/account/") || strings.HasPrefix(r.Path, "/console/sessions")
	}
	params := strings.NewReplacer(":id", "1", ":no", "SF1", ":seat", "A-1", ":token", "x")
	reached := 0
	for _, r := range env.e.Routes() {
		key := r.Method + " " + r.Path
		if !strings.HasPrefix(r.Path, "/console") || public[key] || key == "POST /console/logout" ||
			(r.Method != http.MethodGet && r.Method != http.MethodPost) || ownAccount(r) && r.Method == http.MethodPost {
			continue
		}
		var form url.Values
		if r.Method == http.MethodPost {
			form = url.Values{"_csrf": {b.csrf}, "gate": {"north"}, "code": {"ZZZZZZZZ"}}
		}
		// A stream a broken check lets through runs until the browser
		// leaves: leave soon, as TestConsoleRoutesByRole does.
		ctx, cancel := context.WithCancel(t.Context())
		if strings.HasSuffix(r.Path, "/events") || r.Path == "/console/live" {
			ctx, cancel = context.WithTimeout(t.Context(), 100*time.Millisecond)
		}
		rec := b.doCtx(ctx, r.Method, params.Replace(r.Path), form, nil)
		cancel()
		if ownAccount(r) {
			if r.Method == http.MethodGet && rec.Code != http.StatusOK {
				t.Errorf("%s: %d, want 200: the door keeps its own account", key, rec.Code)
			}
			continue
		}
		if want, ok := allowed[key]; ok {
			reached++
			if rec.Code != want {
				t.Errorf("%s: %d, want %d for the door", key, rec.Code, want)
			}
			continue
		}
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403 for the door", key, rec.Code)
		}
	}
	if reached != len(allowed) {
		t.Fatalf("reached %d scan routes, want %d", reached, len(allowed))
	}
	if rec := b.do("POST", "/console/logout", url.Values{"_csrf": {b.csrf}}, nil); rec.Code != http.StatusSeeOther {
		t.Errorf("sign out: %d, want 303", rec.Code)
	}
}

// TestDoorScanPage scans a paid ticket twice from the page: green, then red
// naming the first scan; an unknown code is red with its reason; a
// box-office clerk may scan too.
func TestDoorScanPage(t *testing.T) {
	env := newConsoleEnv(t)
	o := env.place(1, "A-1")
	env.pay(o)
	b := env.login(access.RoleDoor)
	page := b.do("GET", "/console/door", nil, nil)
	csrf := hiddenCSRF.FindStringSubmatch(page.Body.String())[1]
	for _, step := range []struct {
		by         *browser
		code, want string
	}{
		{b, strings.ToLower(o.Code), `door-result ok`},
		{b, o.Code, "First scanned at"},
		{b, "ZZZZZZZZ", "No ticket has this code."},
		{env.login(access.RoleBoxOffice), o.Code, "Already checked in"},
	} {
		token := csrf
		if step.by != b {
			token = hiddenCSRF.FindStringSubmatch(step.by.do("GET", "/console/door", nil, nil).Body.String())[1]
		}
		rec := step.by.do("POST", "/console/door", url.Values{"_csrf": {token}, "gate": {"north"}, "code": {step.code}}, nil)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), step.want) {
			t.Errorf("scan %s: %d, want %q in %.2000s", step.code, rec.Code, step.want, mainOf(rec.Body.String()))
		}
	}
}

// TestDoorCountsAndUndo: a scan shows its show's door (admitted of the
// seats of paid orders, per gate), polled; the gate undoes a mistaken
// scan once (audited as its own), the ticket admits again after; ops see
// the show's check-in page, per gate and per quarter hour.
func TestDoorCountsAndUndo(t *testing.T) {
	env := newConsoleEnv(t)
	a := env.place(1, "A-1", "A-2")
	env.pay(a)
	env.pay(env.place(2, "B-1"))
	env.place(3, "C-1") // pending: not expected at the door
	b := env.login(access.RoleDoor)
	csrf := hiddenCSRF.FindStringSubmatch(b.do("GET", "/console/door", nil, nil).Body.String())[1]
	show := strconv.FormatInt(env.show.ID, 10)
	steps := []struct {
		name, method, path string
		form               url.Values
		want               []string
	}{
		{"scan", "POST", "/console/door", url.Values{"gate": {"north"}, "code": {a.Code}},
			[]string{"door-result ok", "2 of 3 tickets admitted", "north: 2", `id="door-undo"`, `/console/door/counts?show=` + show}},
		{"counts polled", "GET", "/console/door/counts?show=" + show, nil, []string{"2 of 3 tickets admitted", "north: 2"}},
		{"undo", "POST", "/console/door/undo", url.Values{"gate": {"north"}, "code": {a.Code}, "seat": {"A-1", "A-2"}},
			[]string{"Scan undone: seats A-1, A-2.", "0 of 3 tickets admitted"}},
		{"undo again", "POST", "/console/door/undo", url.Values{"gate": {"north"}, "code": {a.Code}, "seat": {"A-1", "A-2"}},
			[]string{"Nothing to undo"}},
		{"scan after the undo", "POST", "/console/door", url.Values{"gate": {"south"}, "code": {a.Code}},
			[]string{"door-result ok", "2 of 3 tickets admitted", "south: 2"}},
	}
	for _, s := range steps {
		if s.form != nil {
			s.form.Set("_csrf", csrf)
		}
		rec := b.do(s.method, s.path, s.form, nil)
		for _, w := range s.want {
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), w) {
				t.Fatalf("%s: %d, want %q in %.3000s", s.name, rec.Code, w, rec.Body.String())
			}
		}
	}
	if n := env.auditCount(checkin.AuditUndo); n != 1 {
		t.Errorf("%d audited undos, want 1 (the second had nothing to undo)", n)
	}
	if rec := b.do("GET", "/console/door/counts?show=x", nil, nil); rec.Code != http.StatusBadRequest {
		t.Errorf("counts of show x: %d, want 400", rec.Code)
	}
	ops := env.login(access.RoleOps)
	for _, path := range []string{"/console/shows/" + show + "/checkins", "/console/shows/" + show + "/checkins/live"} {
		rec := ops.do("GET", path, nil, nil)
		body := rec.Body.String()
		for _, w := range []string{"2 of 3 tickets admitted (66%)", `<th scope="row">south</th><td class="num">2</td>`, "Arrivals per 15 minutes"} {
			if rec.Code != http.StatusOK || !strings.Contains(body, w) {
				t.Errorf("%s: %d, want %q in %.3000s", path, rec.Code, w, mainOf(body))
			}
		}
	}
	if rec := ops.do("GET", "/console/shows/"+show, nil, nil); !strings.Contains(rec.Body.String(), `/console/shows/`+show+`/checkins`) {
		t.Error("the seat map page links no check-in page")
	}
}

// TestDoorSyncSizes: a gate's full batch of offline scans (500, of 10
// seats each) is past the console's form limit and still taken; past the
// sync's own limit it is 413, and a sync without the CSRF header is
// refused like any console post.
func TestDoorSyncSizes(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleDoor)
	if b.csrf == "" {
		b.csrf = hiddenCSRF.FindStringSubmatch(b.do("GET", "/console/door", nil, nil).Body.String())[1]
	}
	sync := func(body string, csrf bool) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(t.Context(), "POST", "/console/door/sync", strings.NewReader(body))
		req.RemoteAddr = b.ip + ":40000"
		req.Header.Set("Content-Type", "application/json")
		if csrf {
			req.Header.Set(csrfHeader, b.csrf)
		}
		for _, c := range b.cookies {
			req.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		return rec
	}
	full := syncBatch(checkin.MaxSyncScans, "ZZZZZZZZ")
	if len(full) <= consoleFormLimit {
		t.Fatalf("a full batch is %d bytes: the test wants one past the form limit %d", len(full), consoleFormLimit)
	}
	if rec := sync(full, true); rec.Code != http.StatusOK || strings.Count(rec.Body.String(), `"result":"not_valid"`) != checkin.MaxSyncScans {
		t.Fatalf("a full batch of unknown codes: %d %.300s, want 200 and %d not_valid", rec.Code, rec.Body, checkin.MaxSyncScans)
	}
	if rec := sync(syncBatch(checkin.MaxSyncScans, strings.Repeat("Z", 400)), true); rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a batch past the sync limit: %d, want 413", rec.Code)
	}
	if rec := sync(syncBatch(1, "ZZZZZZZZ"), false); rec.Code != http.StatusForbidden {
		t.Fatalf("a sync without the CSRF token: %d, want 403", rec.Code)
	}
}

// syncBatch is an offline gate's sync body of scans of code, 10 seats each.
func syncBatch(scans int, code string) string {
	seats := `"A-1","A-2","A-3","A-4","B-1","B-2","B-3","B-4","C-1","C-2"`
	var sb strings.Builder
	sb.WriteString(`{"gate":"north","scans":[`)
	for i := range scans {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"id":"%016x","code":%q,"at":%q,"seat_ids":[%s]}`, i+1, code, time.Now().UTC().Format(time.RFC3339), seats)
	}
	sb.WriteString("]}")
	return sb.String()
}
