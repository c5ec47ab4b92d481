package server

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
)

// newTestPassword passes the password policy.
const newTestPassword = "violet kestrel umbrella"

var resetLinkInPage = regexp.MustCompile(`value="https?://[^/"]+(/console/reset/[A-Za-z0-9_-]+)"`)

// resetLinkFor has the test admin make a reset link for s and returns its path.
func resetLinkFor(t *testing.T, env *consoleEnv, s access.Staff) string {
	t.Helper()
	admin := env.login(access.RoleAdmin)
	rec := admin.post(fmt.Sprintf("/console/staff/%d/reset-link", s.ID), nil)
	m := resetLinkInPage.FindStringSubmatch(rec.Body.String())
	if rec.Code != http.StatusOK || m == nil {
		t.Fatalf("reset link: status %d, no link in %.500s", rec.Code, rec.Body)
	}
	return m[1]
}

// useResetLink opens the link as b (for its form token) and sets password.
func useResetLink(t *testing.T, b *browser, link, password string) *http.Response {
	t.Helper()
	form := b.do("GET", link, nil, nil)
	if form.Code != http.StatusOK {
		return form.Result()
	}
	m := hiddenCSRF.FindStringSubmatch(form.Body.String())
	if m == nil {
		t.Fatalf("reset form without a token: %.300s", form.Body)
	}
	return b.do("POST", link, url.Values{"_csrf": {m[1]}, "password": {password}, "confirm": {password}}, nil).Result()
}

func auditOf(t *testing.T, env *consoleEnv, action string) []core.AuditEntry {
	t.Helper()
	a, err := env.db.AuditLog(t.Context(), store.AuditQuery{Action: action, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestChangeOwnPassword(t *testing.T) {
	env := newConsoleEnv(t)
	user := env.staff[access.RoleOps]
	b, other := env.login(access.RoleOps), env.login(access.RoleOps)
	bystander := env.login(access.RoleBoxOffice)
	for _, tc := range []struct {
		name   string
		form   url.Values
		status int
		want   string
	}{
		{"wrong current password", url.Values{"current": {"not it at all"}, "password": {newTestPassword}, "confirm": {newTestPassword}}, 422, "The current password is wrong"},
		{"confirmation differs", url.Values{"current": {testPassword}, "password": {newTestPassword}, "confirm": {newTestPassword + "x"}}, 422, "The two new passwords differ"},
		{"too short", url.Values{"current": {testPassword}, "password": {"Vq7#mR2!xLp"}, "confirm": {"Vq7#mR2!xLp"}}, 422, "Passwords need 12"},
		{"contains the username", url.Values{"current": {testPassword}, "password": {"I am " + user.Username + " ok"}, "confirm": {"I am " + user.Username + " ok"}}, 422, "must not contain the username"},
		{"common password", url.Values{"current": {testPassword}, "password": {"qwerty123456"}, "confirm": {"qwerty123456"}}, 422, "most common leaked passwords"},
	} {
		rec := b.post("/console/account/password", tc.form)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: status %d, want %d with %q: %.300s", tc.name, rec.Code, tc.status, tc.want, rec.Body)
		}
	}
	if rec := b.do("POST", "/console/account/password", url.Values{"current": {testPassword},
		"password": {newTestPassword}, "confirm": {newTestPassword}}, nil); rec.Code != http.StatusForbidden {
		t.Errorf("without the CSRF token: status %d, want 403", rec.Code)
	}
	if len(auditOf(t, env, access.AuditPasswordChange)) != 0 {
		t.Fatal("a refused change was audited as a change")
	}

	rec := b.post("/console/account/password", url.Values{"current": {testPassword}, "password": {newTestPassword}, "confirm": {newTestPassword}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("change: status %d: %.300s", rec.Code, rec.Body)
	}
	for name, br := range map[string]*browser{"the session that changed it": b, "another account": bystander} {
		if rec := br.do("GET", "/console/", nil, nil); rec.Code != http.StatusOK {
			t.Errorf("%s: status %d, want still logged in", name, rec.Code)
		}
	}
	if rec := other.do("GET", "/console/", nil, nil); rec.Code != http.StatusSeeOther {
		t.Errorf("the account's other session: status %d, want logged out", rec.Code)
	}
	if rec := env.browser().login(user.Username, testPassword); rec.Code == http.StatusSeeOther {
		t.Error("the old password still logs in")
	}
	if rec := env.browser().login(user.Username, newTestPassword); rec.Code != http.StatusSeeOther {
		t.Errorf("the new password: login status %d", rec.Code)
	}
	if a := auditOf(t, env, access.AuditPasswordChange); len(a) != 1 || a[0].Staff != user.Username {
		t.Errorf("audit: %+v", a)
	}
}

func TestPasswordResetLinkFlow(t *testing.T) {
	env := newConsoleEnv(t)
	clerk := env.staff[access.RoleBoxOffice]
	clerkSession := env.login(access.RoleBoxOffice)

	for _, role := range []access.Role{access.RoleBoxOffice, access.RoleManager, access.RoleOps} {
		if rec := env.login(role).post(fmt.Sprintf("/console/staff/%d/reset-link", clerk.ID), nil); rec.Code != http.StatusForbidden {
			t.Errorf("%s making a reset link: status %d, want 403", role, rec.Code)
		}
	}
	admin := env.login(access.RoleAdmin)
	if rec := admin.post(fmt.Sprintf("/console/staff/%d/reset-link", env.staff[access.RoleAdmin].ID), nil); rec.Code != http.StatusConflict {
		t.Errorf("admin resetting themselves: status %d, want 409", rec.Code)
	}
	first := resetLinkFor(t, env, clerk)
	link := resetLinkFor(t, env, clerk) // replaces the first
	if first == link {
		t.Fatal("two links alike")
	}

	visitor := env.browser()
	page := visitor.do("GET", link, nil, nil)
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), clerk.Username) {
		t.Fatalf("link page: status %d: %.300s", page.Code, page.Body)
	}
	if got := page.Header().Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("Referrer-Policy %q: the token would leak in Referer", got)
	}
	forged := visitor.do("POST", link, url.Values{"_csrf": {"forged"}, "password": {newTestPassword}, "confirm": {newTestPassword}}, nil)
	if forged.Code != http.StatusForbidden {
		t.Errorf("without the form's token: status %d, want 403", forged.Code)
	}
	m := hiddenCSRF.FindStringSubmatch(forged.Body.String()) // the form again, with a new token
	if rec := visitor.do("POST", link, url.Values{"_csrf": {m[1]}, "password": {"password1234"}, "confirm": {"password1234"}}, nil); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("a common password: status %d, want 422", rec.Code)
	}
	if res := useResetLink(t, env.browser(), first, newTestPassword); res.StatusCode != http.StatusNotFound {
		t.Errorf("the replaced link: status %d, want 404", res.StatusCode)
	}
	res := useResetLink(t, visitor, link, newTestPassword)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login?msg=password_reset" {
		t.Fatalf("reset: status %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if rec := clerkSession.do("GET", "/console/", nil, nil); rec.Code != http.StatusSeeOther {
		t.Errorf("the account's session after a reset: status %d, want logged out", rec.Code)
	}
	if rec := env.browser().login(clerk.Username, newTestPassword); rec.Code != http.StatusSeeOther {
		t.Errorf("login with the new password: status %d", rec.Code)
	}
	if rec := env.browser().do("GET", link, nil, nil); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "not valid") {
		t.Errorf("a used link: status %d, want 404", rec.Code)
	}
	if a := auditOf(t, env, access.AuditPasswordResetLink); len(a) != 2 || a[0].Staff != env.staff[access.RoleAdmin].Username || a[0].Target != "staff:"+clerk.Username {
		t.Errorf("audit of the links: %+v", a)
	}
	if a := auditOf(t, env, access.AuditPasswordReset); len(a) != 1 || a[0].Staff != clerk.Username {
		t.Errorf("audit of the reset: %+v", a)
	}
}

func TestChangeStaffRole(t *testing.T) {
	env := newConsoleEnv(t)
	clerk := env.staff[access.RoleBoxOffice]
	clerkSession := env.login(access.RoleBoxOffice)
	path := fmt.Sprintf("/console/staff/%d/role", clerk.ID)
	for _, role := range []access.Role{access.RoleBoxOffice, access.RoleManager, access.RoleOps} {
		if rec := env.login(role).post(path, url.Values{"role": {"admin"}}); rec.Code != http.StatusForbidden {
			t.Errorf("%s changing a role: status %d, want 403", role, rec.Code)
		}
	}
	admin := env.login(access.RoleAdmin)
	if rec := admin.post(fmt.Sprintf("/console/staff/%d/role", env.staff[access.RoleAdmin].ID), url.Values{"role": {"ops"}}); rec.Code != http.StatusConflict {
		t.Errorf("admin changing their own role: status %d, want 409", rec.Code)
	}
	if rec := admin.post(path, url.Values{"role": {"root"}}); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("unknown role: status %d, want 422", rec.Code)
	}
	if rec := admin.do("POST", path, url.Values{"role": {"ops"}}, nil); rec.Code != http.StatusForbidden {
		t.Errorf("without the CSRF token: status %d, want 403", rec.Code)
	}
	if rec := clerkSession.do("GET", "/console/reconcile", nil, nil); rec.Code != http.StatusForbidden {
		t.Fatalf("box office on the reconcile page: status %d, want 403", rec.Code)
	}
	if rec := admin.post(path, url.Values{"role": {"ops"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("change role: status %d: %.300s", rec.Code, rec.Body)
	}
	if rec := clerkSession.do("GET", "/console/reconcile", nil, nil); rec.Code != http.StatusOK {
		t.Errorf("the same session after becoming ops: status %d, want 200", rec.Code)
	}
	a := auditOf(t, env, access.AuditStaffRole)
	if len(a) != 1 || a[0].Target != "staff:"+clerk.Username || a[0].Detail["from"] != "box_office" || a[0].Detail["to"] != "ops" {
		t.Errorf("audit: %+v", a)
	}
}

// TestStaffResetLinkCommand: `seatflow staff reset-link NAME` prints a link
// that works in the console, for the admin with no other admin to ask.
func TestStaffResetLinkCommand(t *testing.T) {
	env := newConsoleEnv(t)
	admin := env.staff[access.RoleAdmin]
	for _, args := range [][]string{nil, {"a", "b"}, {"nobody"}} {
		if err := StaffResetLink(t.Context(), env.db, args, io.Discard); err == nil {
			t.Errorf("reset-link %q: want an error", args)
		}
	}
	var out strings.Builder
	if err := StaffResetLink(t.Context(), env.db, []string{strings.ToUpper(admin.Username)}, &out); err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`/console/reset/[A-Za-z0-9_-]+`).FindString(out.String())
	if link == "" {
		t.Fatalf("no link in %q", out.String())
	}
	if res := useResetLink(t, env.browser(), link, newTestPassword); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("using the printed link: status %d", res.StatusCode)
	}
	if rec := env.browser().login(admin.Username, newTestPassword); rec.Code != http.StatusSeeOther {
		t.Errorf("login with the new password: status %d", rec.Code)
	}
}

// addStaffWithLink has admin add an account and its owner set password
// through the one-time link the page shows.
func addStaffWithLink(t *testing.T, env *consoleEnv, admin *browser, name string, role access.Role, password string) {
	t.Helper()
	rec := admin.post("/console/staff", url.Values{"username": {name}, "role": {string(role)}})
	m := resetLinkInPage.FindStringSubmatch(rec.Body.String())
	if rec.Code != http.StatusOK || m == nil {
		t.Fatalf("add %s: status %d, no link in %.500s", name, rec.Code, rec.Body)
	}
	if res := useResetLink(t, env.browser(), m[1], password); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("%s sets a password with the link: %d", name, res.StatusCode)
	}
}
