package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"seatflow/core/access"

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
	allowed := map[string]bool{"GET /console/door": true, "POST /console/door": true, "POST /console/logout": true}
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
		if allowed[key] {
			reached++
			if rec.Code != http.StatusOK {
				t.Errorf("%s: %d, want 200 for the door", key, rec.Code)
			}
			continue
		}
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403 for the door", key, rec.Code)
		}
	}
	if reached != 2 {
		t.Fatalf("reached %d scan routes, want 2", reached)
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
