package server

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"seatflow/core/access"
)

// The API key page is for admins only; adding shows the key once (and it
// works), revoking ends it; both need the CSRF token and are audited.
func TestConsoleAPIKeys(t *testing.T) {
	env := newConsoleEnv(t)
	addForm := func() url.Values {
		return url.Values{"name": {"web front end"}, "scope": {"orders:read", "orders:write"}}
	}
	for _, role := range access.AllRoles() {
		t.Run(string(role), func(t *testing.T) {
			b := env.login(role)
			want := http.StatusForbidden
			if role.Can(access.ActStaff) {
				want = http.StatusOK
			}
			if rec := b.do("GET", "/console/apikeys", nil, nil); rec.Code != want {
				t.Errorf("GET as %s: %d, want %d", role, rec.Code, want)
			}
			if want == http.StatusForbidden {
				if rec := b.post("/console/apikeys", addForm()); rec.Code != http.StatusForbidden {
					t.Errorf("POST as %s: %d, want 403", role, rec.Code)
				}
			}
		})
	}
	if n := env.auditCount(access.AuditAPIKeyAdd); n != 0 {
		t.Fatalf("refused adds wrote %d audit rows", n)
	}

	admin := env.login(access.RoleAdmin)
	if rec := admin.do("POST", "/console/apikeys", addForm(), nil); rec.Code != http.StatusForbidden {
		t.Errorf("add without CSRF token: %d, want 403", rec.Code)
	}
	rec := admin.post("/console/apikeys", addForm())
	m := regexp.MustCompile(`<code id="apikey-secret">(sfk_[A-Za-z0-9_-]+)</code>`).FindStringSubmatch(rec.Body.String())
	if rec.Code != http.StatusCreated || m == nil {
		t.Fatalf("add: %d %.500s", rec.Code, rec.Body)
	}
	secret := m[1]
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("the page with the key has Cache-Control %q", cc)
	}
	key, err := env.db.APIKeyByHash(t.Context(), access.HashAPIKey(secret))
	if err != nil || key.CreatedBy != "staff:"+env.staff[access.RoleAdmin].Username ||
		access.JoinScopes(key.Scopes) != "orders:read,orders:write" {
		t.Fatalf("stored key %+v (%v)", key, err)
	}
	if n := env.auditCount(access.AuditAPIKeyAdd); n != 1 {
		t.Errorf("audit rows for the add: %d, want 1", n)
	}
	list := admin.do("GET", "/console/apikeys", nil, nil).Body.String()
	if !strings.Contains(list, key.Prefix) || strings.Contains(list, secret) {
		t.Errorf("the list must show the prefix %s, never the key", key.Prefix)
	}

	for _, bad := range []url.Values{
		{"name": {""}, "scope": {"orders:read"}},
		{"name": {"x"}},
		{"name": {"x"}, "scope": {"everything"}},
	} {
		if rec := admin.post("/console/apikeys", bad); rec.Code != http.StatusUnprocessableEntity ||
			!strings.Contains(rec.Body.String(), `role="alert"`) {
			t.Errorf("add %v: %d, want 422 with the form's message", bad, rec.Code)
		}
	}

	revoke := "/console/apikeys/" + strings.TrimPrefix(regexp.MustCompile(`apikey-\d+`).FindString(list), "apikey-") + "/revoke"
	if rec := admin.do("POST", revoke, url.Values{}, nil); rec.Code != http.StatusForbidden {
		t.Errorf("revoke without CSRF token: %d, want 403", rec.Code)
	}
	if rec := admin.post(revoke, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("revoke: %d %.300s", rec.Code, rec.Body)
	}
	if key, err := env.db.APIKeyByHash(t.Context(), access.HashAPIKey(secret)); err != nil || !key.Revoked() {
		t.Errorf("after revoke: %+v (%v)", key, err)
	}
	if n := env.auditCount(access.AuditAPIKeyRevoke); n != 1 {
		t.Errorf("audit rows for the revoke: %d, want 1", n)
	}
	if rec := admin.post("/console/apikeys/999999/revoke", nil); rec.Code != http.StatusNotFound {
		t.Errorf("revoke an unknown key: %d, want 404", rec.Code)
	}
}
