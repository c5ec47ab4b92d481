package server

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"seatflow/core/access"
	"seatflow/core/stacktest"
)

// TestLoginRefusesCrossSite: the login form posted from another site is
// refused even with a matching double-submit token and the right password.
func TestLoginRefusesCrossSite(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		want   int
	}{
		{"no browser headers", nil, http.StatusSeeOther},
		{"same origin", http.Header{"Origin": {"http://example.com"}, "Sec-Fetch-Site": {"same-origin"}}, http.StatusSeeOther},
		{"cross-site fetch", http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		{"same-site sibling", http.Header{"Sec-Fetch-Site": {"same-site"}}, http.StatusForbidden},
		{"foreign origin", http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"opaque origin", http.Header{"Origin": {"null"}}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newConsoleEnv(t)
			b := env.browser()
			form := b.do("GET", "/console/login", nil, nil)
			m := hiddenCSRF.FindStringSubmatch(form.Body.String())
			if m == nil {
				t.Fatalf("login form without a token")
			}
			rec := b.do("POST", "/console/login", url.Values{"_csrf": {m[1]},
				"username": {env.staff[access.RoleOps].Username}, "password": {testPassword}}, tc.header)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d", rec.Code, tc.want)
			}
			if got := b.cookies[sessionCookie] != nil; got != (tc.want == http.StatusSeeOther) {
				t.Errorf("session cookie set: %t", got)
			}
		})
	}
}

// TestCSRFTokenNotFromQuery: a CSRF token in the query string does not
// count, for the login form and for a logged-in action alike.
func TestCSRFTokenNotFromQuery(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleOps)
	if rec := b.do("POST", "/console/logout?_csrf="+url.QueryEscape(b.csrf), url.Values{}, nil); rec.Code != http.StatusForbidden {
		t.Errorf("logout with the token in the query: status %d, want 403", rec.Code)
	}
	if rec := b.do("GET", "/console/", nil, nil); rec.Code != http.StatusOK {
		t.Errorf("session gone after a refused logout: status %d", rec.Code)
	}
	if rec := b.do("POST", "/console/logout", url.Values{"_csrf": {b.csrf}}, nil); rec.Code != http.StatusSeeOther {
		t.Errorf("logout with the token in the body: status %d, want 303", rec.Code)
	}

	visitor := env.browser()
	form := visitor.do("GET", "/console/login", nil, nil)
	m := hiddenCSRF.FindStringSubmatch(form.Body.String())
	if m == nil {
		t.Fatalf("login form without a token")
	}
	rec := visitor.do("POST", "/console/login?_csrf="+url.QueryEscape(m[1]), url.Values{
		"username": {env.staff[access.RoleOps].Username}, "password": {testPassword}}, nil)
	if rec.Code != http.StatusForbidden || visitor.cookies[sessionCookie] != nil {
		t.Errorf("login with the token in the query: status %d, want 403 and no session", rec.Code)
	}
}

// TestLoginOtherSpellings: usernames are lower-case ASCII, so a name typed
// otherwise ('ÁDMIN', 'ádmin') signs no one in, even with the right
// password, and gives no fresh tries past the account's limit: MariaDB's
// collation would find the account under every such spelling.
func TestLoginOtherSpellings(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		name := env.staff[access.RoleAdmin].Username // admin-user
		for _, spelling := range []string{"ádmin-user", "ADMİN-USER", "admin-usér", "ａdmin-user"} {
			if rec := env.browser().login(spelling, testPassword); rec.Code != http.StatusUnauthorized {
				t.Errorf("login as %q with the right password: status %d, want 401", spelling, rec.Code)
			}
		}
		for i := range loginUserTries {
			b := env.browser()
			b.ip = fmt.Sprintf("198.51.100.%d", i+1)
			b.login(name, "wrong password!")
		}
		for _, spelling := range []string{name, "Admin-User", "ádmin-user"} {
			b := env.browser()
			b.ip = "198.51.100.200"
			if rec := b.login(spelling, testPassword); rec.Code == http.StatusSeeOther {
				t.Errorf("login as %q past the account's limit: signed in", spelling)
			}
		}
	})
}

// TestLoginThrottleCountsIPv6Networks: the failed logins of one address
// count per IPv6 /64 (SEATFLOW_IPV6_PREFIX), since one machine commonly
// has a whole /64 to pick its addresses from.
func TestLoginThrottleCountsIPv6Networks(t *testing.T) {
	env := newConsoleEnv(t)
	for i := range loginAddrTries {
		b := env.browser()
		b.ip = fmt.Sprintf("[2001:db8:1:2::%x]", i+1)
		if rec := b.login(fmt.Sprintf("nobody-%d", i), "wrong password!"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("failed login %d: status %d", i, rec.Code)
		}
	}
	b := env.browser()
	b.ip = "[2001:db8:1:2:aaaa::1]"
	if rec := b.login(env.staff[access.RoleOps].Username, testPassword); rec.Code != http.StatusTooManyRequests {
		t.Errorf("another address of the same /64: status %d, want 429", rec.Code)
	}
	b.ip = "[2001:db8:1:3::1]"
	if rec := b.login(env.staff[access.RoleOps].Username, testPassword); rec.Code != http.StatusSeeOther {
		t.Errorf("an address of another /64: status %d, want signed in", rec.Code)
	}
}
