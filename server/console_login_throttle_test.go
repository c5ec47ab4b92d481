package server

import (
	"fmt"
	"net/http"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
)

// TestLoginThrottleAcross: failed logins are limited per address across
// usernames and per account across addresses; the next try, even with the
// right password, gets 429 with Retry-After and no session.
func TestLoginThrottleAcross(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tries int
		// try is attempt i's username and address.
		try func(env *consoleEnv, i int) (string, string)
		// last is the right-password login that must be refused.
		last func(env *consoleEnv) (string, string)
	}{
		{"one address, many usernames", loginAddrTries,
			func(env *consoleEnv, i int) (string, string) { return fmt.Sprint("nobody", i), "192.0.2.50" },
			func(env *consoleEnv) (string, string) { return env.staff[access.RoleOps].Username, "192.0.2.50" }},
		{"one account, many addresses", loginUserTries,
			func(env *consoleEnv, i int) (string, string) {
				return env.staff[access.RoleOps].Username, fmt.Sprintf("198.51.100.%d", i+1)
			},
			func(env *consoleEnv) (string, string) { return env.staff[access.RoleOps].Username, "203.0.113.7" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newConsoleEnv(t)
			for i := range tc.tries {
				b := env.browser()
				name, ip := tc.try(env, i)
				b.ip = ip
				if rec := b.login(name, "wrong password"); rec.Code != http.StatusUnauthorized {
					t.Fatalf("try %d: status %d, want 401", i+1, rec.Code)
				}
			}
			b := env.browser()
			name, ip := tc.last(env)
			b.ip = ip
			rec := b.login(name, testPassword)
			if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || b.cookies[sessionCookie] != nil {
				t.Fatalf("after %d failures: status %d, Retry-After %q, want 429 and no session",
					tc.tries, rec.Code, rec.Header().Get("Retry-After"))
			}
			env.clock.Advance(loginTryWindow)
			if rec := b.login(name, testPassword); rec.Code != http.StatusSeeOther {
				t.Errorf("after the window: status %d, want a login", rec.Code)
			}
		})
	}
}

// TestLoginHashCap: with every password-check slot taken, a login is
// refused at once with 429 and Retry-After, before any hash is checked.
func TestLoginHashCap(t *testing.T) {
	env := newConsoleEnv(t)
	for range loginHashSlots {
		env.cn.hashSlots <- struct{}{}
	}
	failedBefore := env.auditCount(core.AuditLoginFailed)
	b := env.browser()
	rec := b.login(env.staff[access.RoleOps].Username, testPassword)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || b.cookies[sessionCookie] != nil {
		t.Fatalf("all slots taken: status %d, Retry-After %q, want 429 and no session", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := b.login("nobody", "wrong password"); rec.Code != http.StatusTooManyRequests ||
		env.auditCount(core.AuditLoginFailed) != failedBefore {
		t.Fatalf("all slots taken, wrong password: status %d, failures audited %d (want 429, none checked)",
			rec.Code, env.auditCount(core.AuditLoginFailed)-failedBefore)
	}
	<-env.cn.hashSlots
	if rec := b.login(env.staff[access.RoleOps].Username, testPassword); rec.Code != http.StatusSeeOther {
		t.Errorf("a slot free: status %d, want a login", rec.Code)
	}
}
