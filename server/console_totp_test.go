package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
)

var (
	totpSecretInPage = regexp.MustCompile(`<code id="totp-secret">([A-Z2-7]+)</code>`)
	challengeInPage  = regexp.MustCompile(`name="challenge" value="([^"]+)"`)
)

// enrollSecondFactor sets up b's account's second factor and returns its secret.
func enrollSecondFactor(t *testing.T, env *consoleEnv, b *browser) string {
	t.Helper()
	page := b.do("GET", "/console/account/2fa", nil, nil)
	m := totpSecretInPage.FindStringSubmatch(page.Body.String())
	if page.Code != http.StatusOK || m == nil || !strings.Contains(page.Body.String(), "<svg") {
		t.Fatalf("2fa page: status %d, no secret or QR code: %.400s", page.Code, page.Body)
	}
	if rec := b.post("/console/account/2fa", url.Values{"password": {testPassword}, "code": {totpCode(t, m[1], env.clock.Now())}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("confirm: status %d: %.300s", rec.Code, rec.Body)
	}
	return m[1]
}

func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := access.TOTPCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// loginPassword gives the password and returns the response: the code
// page when the account has a second factor.
func loginPassword(t *testing.T, b *browser, username string) *http.Response {
	t.Helper()
	form := b.do("GET", "/console/login", nil, nil)
	m := hiddenCSRF.FindStringSubmatch(form.Body.String())
	rec := b.do("POST", "/console/login", url.Values{"_csrf": {m[1]}, "username": {username}, "password": {testPassword}}, nil)
	res := rec.Result()
	res.Header.Set("X-Test-Body", rec.Body.String()[:min(rec.Body.Len(), 4000)])
	return res
}

func TestSecondFactorEnrollAndSignIn(t *testing.T) {
	env := newConsoleEnv(t)
	ops := env.staff[access.RoleOps]
	b := env.login(access.RoleOps)

	first := totpSecretInPage.FindStringSubmatch(b.do("GET", "/console/account/2fa", nil, nil).Body.String())
	again := totpSecretInPage.FindStringSubmatch(b.do("GET", "/console/account/2fa", nil, nil).Body.String())
	if first == nil || again == nil || first[1] != again[1] {
		t.Fatalf("a reload changed the offered secret: %v, %v", first, again)
	}
	if rec := b.post("/console/account/2fa", url.Values{"code": {"000000"}}); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("a wrong code turned it on: status %d", rec.Code)
	}
	// Without a confirmed factor the password alone signs in.
	if res := loginPassword(t, env.browser(), ops.Username); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("login before the factor is confirmed: status %d", res.StatusCode)
	}
	secret := enrollSecondFactor(t, env, b)
	if a := auditOf(t, env, access.AuditTOTPEnable); len(a) != 1 || a[0].Staff != ops.Username {
		t.Errorf("audit: %+v", a)
	}

	env.clock.Advance(30 * time.Second) // the next step: the confirming code is used up
	visitor := env.browser()
	res := loginPassword(t, visitor, ops.Username)
	m := challengeInPage.FindStringSubmatch(res.Header.Get("X-Test-Body"))
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("password of an account with a factor: status %d, want the code page", res.StatusCode)
	}
	if rec := visitor.do("GET", "/console/", nil, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("a session before the code: status %d", rec.Code)
	}
	code := func(c string) *http.Response {
		return visitor.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {c}}, nil).Result()
	}
	if res := code("000000"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong code: status %d", res.StatusCode)
	}
	if res := visitor.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {totpCode(t, secret, env.clock.Now())}},
		http.Header{"Sec-Fetch-Site": {"cross-site"}}); res.Code != http.StatusForbidden {
		t.Errorf("a code posted from another site: status %d, want 403", res.Code)
	}
	good := totpCode(t, secret, env.clock.Now())
	if res := code(good); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("right code: status %d", res.StatusCode)
	}
	if rec := visitor.do("GET", "/console/", nil, nil); rec.Code != http.StatusOK {
		t.Errorf("after the code: status %d, want signed in", rec.Code)
	}
	if a := auditOf(t, env, access.AuditLoginCodeFailed); len(a) != 1 {
		t.Errorf("%d failed-code audit lines, want 1", len(a))
	}

	// The same code again, in a new sign-in within its step: replayed.
	other := env.browser()
	m = challengeInPage.FindStringSubmatch(loginPassword(t, other, ops.Username).Header.Get("X-Test-Body"))
	if rec := other.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {good}}, nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("a replayed code: status %d, want 401", rec.Code)
	}
	// Five codes per sign-in: then it is over, even with the right one.
	for range loginCodeTries - 1 {
		other.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {"000000"}}, nil)
	}
	env.clock.Advance(30 * time.Second)
	rec := other.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {totpCode(t, secret, env.clock.Now())}}, nil)
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "too many wrong codes") {
		t.Errorf("a sixth code: status %d, want the sign-in over", rec.Code)
	}
	// Those wrong codes locked the factor (TestSecondFactorLockout): lift it.
	if _, err := env.db.UnlockTOTP(context.Background(), ops.ID, env.clock.Now(), core.AuditEntry{At: env.clock.Now(), Action: access.AuditTOTPUnlock}); err != nil {
		t.Fatal(err)
	}
	// And a waiting sign-in ends after five minutes.
	late := env.browser()
	m = challengeInPage.FindStringSubmatch(loginPassword(t, late, ops.Username).Header.Get("X-Test-Body"))
	env.clock.Advance(loginCodeTTL)
	if rec := late.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {totpCode(t, secret, env.clock.Now())}}, nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("a code after five minutes: status %d, want 401", rec.Code)
	}
}

func TestSecondFactorDisableAndAdminReset(t *testing.T) {
	env := newConsoleEnv(t)
	ops := env.staff[access.RoleOps]
	b := env.login(access.RoleOps)
	secret := enrollSecondFactor(t, env, b)
	env.clock.Advance(30 * time.Second)
	for _, form := range []url.Values{
		{"password": {"wrong password!"}, "code": {totpCode(t, secret, env.clock.Now())}},
		{"password": {testPassword}, "code": {"000000"}},
	} {
		if rec := b.post("/console/account/2fa/disable", form); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("disable with %v: status %d, want 422", form, rec.Code)
		}
	}
	if rec := b.post("/console/account/2fa/disable", url.Values{"password": {testPassword},
		"code": {totpCode(t, secret, env.clock.Now())}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("disable: status %d: %.300s", rec.Code, rec.Body)
	}
	if res := loginPassword(t, env.browser(), ops.Username); res.StatusCode != http.StatusSeeOther {
		t.Errorf("login after turning it off: status %d, want the password alone", res.StatusCode)
	}

	enrollSecondFactor(t, env, b)
	admin := env.login(access.RoleAdmin)
	if page := admin.do("GET", "/console/staff", nil, nil).Body.String(); !strings.Contains(page, "2fa-reset") {
		t.Error("the staff page offers no reset for an account with a factor")
	}
	if rec := admin.post(fmt.Sprintf("/console/staff/%d/2fa-reset", ops.ID), nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("admin reset: status %d", rec.Code)
	}
	if res := loginPassword(t, env.browser(), ops.Username); res.StatusCode != http.StatusSeeOther {
		t.Errorf("login after an admin reset: status %d, want the password alone", res.StatusCode)
	}
	if a := auditOf(t, env, access.AuditTOTPReset); len(a) != 1 || a[0].Target != "staff:"+ops.Username {
		t.Errorf("audit of the reset: %+v", a)
	}
}

// TestSecondFactorEnableNeedsPassword: turning the second factor on asks
// for the password again, so a stolen session cannot put a factor of the
// thief's own on the account and lock its owner out.
func TestSecondFactorEnableNeedsPassword(t *testing.T) {
	env := newConsoleEnv(t)
	ops := env.staff[access.RoleOps]
	b := env.login(access.RoleOps)
	m := totpSecretInPage.FindStringSubmatch(b.do("GET", "/console/account/2fa", nil, nil).Body.String())
	if m == nil {
		t.Fatal("no offered secret")
	}
	code := totpCode(t, m[1], env.clock.Now())
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{"no password", url.Values{"code": {code}}},
		{"wrong password", url.Values{"password": {"wrong password!"}, "code": {code}}},
	} {
		rec := b.post("/console/account/2fa", tc.form)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `id="totp-error"`) {
			t.Errorf("%s: status %d, want 422 with the error shown", tc.name, rec.Code)
		}
	}
	if res := loginPassword(t, env.browser(), ops.Username); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the factor was turned on without the password: login status %d", res.StatusCode)
	}
	if page := b.do("GET", "/console/account/2fa", nil, nil).Body.String(); !strings.Contains(page, `id="totp-enable-password"`) {
		t.Error("the set-up form asks for no password")
	}
	if rec := b.post("/console/account/2fa", url.Values{"password": {testPassword}, "code": {code}}); rec.Code != http.StatusSeeOther {
		t.Errorf("with the password: status %d", rec.Code)
	}
}

// TestRequireSecondFactor: SEATFLOW_REQUIRE_2FA=admin sends an admin with
// no factor to set one up before anything else, and keeps it on.
func TestRequireSecondFactor(t *testing.T) {
	env := newConsoleEnv(t)
	env.cn.SecondFactor = access.SecondFactorAdmins
	admin, clerk := env.login(access.RoleAdmin), env.login(access.RoleBoxOffice)
	for _, path := range []string{"/console/", "/console/staff", "/console/audit"} {
		if rec := admin.do("GET", path, nil, nil); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/console/account/2fa" {
			t.Errorf("admin without a factor, GET %s: %d to %q", path, rec.Code, rec.Header().Get("Location"))
		}
	}
	if rec := admin.do("GET", "/console/orders", nil, http.Header{"Hx-Request": {"true"}}); rec.Header().Get("HX-Redirect") != "/console/account/2fa" {
		t.Errorf("an htmx request: HX-Redirect %q", rec.Header().Get("HX-Redirect"))
	}
	if rec := admin.post("/console/staff", url.Values{"username": {"sneaky"}, "password": {newTestPassword}, "role": {"admin"}}); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/console/account/2fa" {
		t.Errorf("an action before the factor: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	if page := admin.do("GET", "/console/account/2fa", nil, nil).Body.String(); !strings.Contains(page, `id="totp-required"`) {
		t.Error("the set-up page does not say it is required")
	}
	if rec := clerk.do("GET", "/console/", nil, nil); rec.Code != http.StatusOK {
		t.Errorf("box office, not covered: status %d", rec.Code)
	}
	secret := enrollSecondFactor(t, env, admin)
	if rec := admin.do("GET", "/console/staff", nil, nil); rec.Code != http.StatusOK {
		t.Errorf("admin with a factor: status %d", rec.Code)
	}
	env.clock.Advance(30 * time.Second)
	if rec := admin.post("/console/account/2fa/disable", url.Values{"password": {testPassword},
		"code": {totpCode(t, secret, env.clock.Now())}}); rec.Code != http.StatusConflict {
		t.Errorf("turning a required factor off: status %d, want 409", rec.Code)
	}
}

// TestWrongCodesCountAsFailedLogins: with the password known, sign-in
// after sign-in must not give endless tries at the code: wrong codes count
// as the account's failed logins besides locking the factor, and past the
// limit even the password step is refused.
func TestWrongCodesCountAsFailedLogins(t *testing.T) {
	env := newConsoleEnv(t)
	ops := env.staff[access.RoleOps]
	enrollSecondFactor(t, env, env.login(access.RoleOps))
	wrongCodes := access.TOTPMaxFailures - 1 // below the factor's lock
	b := env.browser()
	m := challengeInPage.FindStringSubmatch(loginPassword(t, b, ops.Username).Header.Get("X-Test-Body"))
	if m == nil {
		t.Fatal("no code page")
	}
	for range wrongCodes {
		if rec := b.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {"000000"}}, nil); rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong code: status %d", rec.Code)
		}
	}
	for i := range loginUserTries - wrongCodes {
		w := env.browser()
		w.ip = fmt.Sprintf("198.51.100.%d", i+1)
		if rec := w.login(ops.Username, "wrong password!"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: status %d", i, rec.Code)
		}
	}
	if res := loginPassword(t, env.browser(), ops.Username); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the password after %d wrong codes and %d wrong passwords: status %d, want 429",
			wrongCodes, loginUserTries-wrongCodes, res.StatusCode)
	}
}

// TestSecondFactorSecretEncryptedAtRest: the database keeps no second
// factor's secret in clear: a copy of it (a backup, a replica) must not
// give anyone the codes.
func TestSecondFactorSecretEncryptedAtRest(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ops := env.staff[access.RoleOps]
		b := env.login(access.RoleOps)
		offered := totpSecretInPage.FindStringSubmatch(b.do("GET", "/console/account/2fa", nil, nil).Body.String())
		stored := func() string {
			var s string
			if err := st.DB.X().Get(&s, `SELECT secret FROM staff_totp WHERE staff_id = ?`, ops.ID); err != nil {
				t.Fatal(err)
			}
			return s
		}
		if offered == nil || strings.Contains(stored(), offered[1]) {
			t.Fatalf("the offered secret is stored in clear: %q", stored())
		}
		secret := enrollSecondFactor(t, env, b)
		if strings.Contains(stored(), secret) {
			t.Fatalf("the confirmed secret is stored in clear: %q", stored())
		}
		env.clock.Advance(30 * time.Second)
		visitor := env.browser()
		m := challengeInPage.FindStringSubmatch(loginPassword(t, visitor, ops.Username).Header.Get("X-Test-Body"))
		if rec := visitor.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {totpCode(t, secret, env.clock.Now())}}, nil); rec.Code != http.StatusSeeOther {
			t.Errorf("sign-in with the encrypted secret: status %d", rec.Code)
		}
	})
}

// TestSecondFactorLockout: wrong codes count in the database, so every
// instance shares the count: after totpMaxFailures in a window the second
// factor is locked, even for the right code on another instance, until
// the lock runs out or an admin lifts it; each lockout is counted in
// seatflow_totp_lockouts_total.
func TestSecondFactorLockout(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ops := env.staff[access.RoleOps]
		secret := enrollSecondFactor(t, env, env.login(access.RoleOps))
		env.clock.Advance(30 * time.Second)
		// Another instance on the same database: its own memory, shared rows.
		other := *env
		other.e = echo.New()
		other.e.HTTPErrorHandler = handleError
		otherCn := registerConsole(other.e, ConsoleDeps{Engine: env.engine, DB: st.DB, Hub: env.hub,
			Logger: slog.New(slog.DiscardHandler), Clock: env.clock})
		wrong := 0
		for _, e := range []*consoleEnv{env, &other, env, &other, env} {
			b := e.browser()
			m := challengeInPage.FindStringSubmatch(loginPassword(t, b, ops.Username).Header.Get("X-Test-Body"))
			if m == nil {
				t.Fatalf("after %d wrong codes: no code page", wrong)
			}
			b.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {"000000"}}, nil)
			wrong++
		}
		signIn := func(e *consoleEnv) int {
			b := e.browser()
			res := loginPassword(t, b, ops.Username)
			m := challengeInPage.FindStringSubmatch(res.Header.Get("X-Test-Body"))
			if m == nil {
				return res.StatusCode
			}
			return b.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {totpCode(t, secret, env.clock.Now())}}, nil).Code
		}
		if code := signIn(&other); code != http.StatusTooManyRequests {
			t.Fatalf("the right code after %d wrong ones, on the other instance: status %d, want 429 (locked)", wrong, code)
		}
		if got := testutil.ToFloat64(otherCn.totpLockouts) + testutil.ToFloat64(env.cn.totpLockouts); got != 1 {
			t.Errorf("seatflow_totp_lockouts_total = %v, want 1", got)
		}
		if a := auditOf(t, env, access.AuditTOTPLocked); len(a) != 1 || a[0].Target != "staff:"+ops.Username {
			t.Errorf("audit of the lockout: %+v", a)
		}
		admin := env.login(access.RoleAdmin)
		if page := admin.do("GET", "/console/staff", nil, nil).Body.String(); !strings.Contains(page, "2fa-unlock") {
			t.Error("the staff page offers no unlock for a locked factor")
		}
		if rec := admin.post(fmt.Sprintf("/console/staff/%d/2fa-unlock", ops.ID), nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("admin unlock: status %d", rec.Code)
		}
		if code := signIn(env); code != http.StatusSeeOther {
			t.Errorf("the right code after an admin unlock: status %d", code)
		}
	})
}

// TestSecondFactorLockoutRunsOutAndDoubles: a lock ends by itself after
// its time, and the next one without a right code in between lasts twice
// as long.
func TestSecondFactorLockoutRunsOutAndDoubles(t *testing.T) {
	env := newConsoleEnv(t)
	ops := env.staff[access.RoleOps]
	secret := enrollSecondFactor(t, env, env.login(access.RoleOps))
	lockOut := func() {
		t.Helper()
		b := env.browser()
		m := challengeInPage.FindStringSubmatch(loginPassword(t, b, ops.Username).Header.Get("X-Test-Body"))
		if m == nil {
			t.Fatal("no code page")
		}
		for range access.TOTPMaxFailures {
			b.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {"000000"}}, nil)
		}
	}
	signIn := func() int {
		b := env.browser()
		res := loginPassword(t, b, ops.Username)
		m := challengeInPage.FindStringSubmatch(res.Header.Get("X-Test-Body"))
		if m == nil {
			return res.StatusCode
		}
		return b.do("POST", "/console/login/code", url.Values{"challenge": {m[1]}, "code": {totpCode(t, secret, env.clock.Now())}}, nil).Code
	}
	lockOut()
	env.clock.Advance(access.TOTPLockout - time.Second)
	if code := signIn(); code != http.StatusTooManyRequests {
		t.Fatalf("within the first lock: status %d, want 429", code)
	}
	env.clock.Advance(2 * time.Second)
	lockOut()
	env.clock.Advance(access.TOTPLockout + time.Second)
	if code := signIn(); code != http.StatusTooManyRequests {
		t.Fatalf("the second lock, past the first one's length: status %d, want 429", code)
	}
	env.clock.Advance(access.TOTPLockout)
	if code := signIn(); code != http.StatusSeeOther {
		t.Fatalf("after twice the length: status %d, want signed in", code)
	}
}

// TestStaffUnlockSecondFactorCommand: `seatflow staff unlock-2fa NAME`
// lifts a lock and keeps the factor.
func TestStaffUnlockSecondFactorCommand(t *testing.T) {
	env := newConsoleEnv(t)
	ops := env.staff[access.RoleOps]
	enrollSecondFactor(t, env, env.login(access.RoleOps))
	ctx, now := context.Background(), time.Now()
	for range access.TOTPMaxFailures {
		if _, err := env.db.FailTOTPCode(ctx, ops.ID, now, core.AuditEntry{At: now, Action: access.AuditTOTPLocked}); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	if err := StaffUnlockSecondFactor(ctx, env.db, []string{ops.Username}, &out); err != nil || !strings.Contains(out.String(), "unlocked") {
		t.Fatalf("unlock: %v, %q", err, out.String())
	}
	if f, ok, err := env.db.TOTP(ctx, ops.ID); err != nil || !ok || !f.Confirmed() || f.Locked(time.Now()) {
		t.Errorf("after the unlock: %+v %t %v", f, ok, err)
	}
	out.Reset()
	if err := StaffUnlockSecondFactor(ctx, env.db, []string{ops.Username}, &out); err != nil || !strings.Contains(out.String(), "not locked") {
		t.Errorf("a second unlock: %v, %q", err, out.String())
	}
}
