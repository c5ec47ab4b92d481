package server

import (
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
)

// addKey stores a key with the given scopes and returns its secret.
func (a *testApp) addKey(name string, scopes ...access.Scope) (access.APIKey, string) {
	a.t.Helper()
	k, secret, err := createAPIKey(a.t.Context(), a.app.DB, name, access.JoinScopes(scopes), core.StaffAction{Staff: "staff:test"}, time.Now().UTC())
	if err != nil {
		a.t.Fatal(err)
	}
	return k, secret
}

// Every /api/v1 route but the signed payment callback is in routeScopes, and
// routeScopes names no route that does not exist.
func TestEveryAPIRouteHasAScope(t *testing.T) {
	a := newTestApp(t)
	registered := map[string]bool{}
	for _, r := range a.app.Handler.echo.Routes() {
		// The callback and the queue ticket are signed, the document is
		// public: no key.
		if !strings.HasPrefix(r.Path, "/api/v1/") || r.Path == "/api/v1/payments/callback" || r.Path == "/api/v1/openapi.json" ||
			r.Path == "/api/v1/queue/:ticket" {
			continue
		}
		key := r.Method + " " + r.Path
		registered[key] = true
		if _, ok := routeScopes[key]; !ok {
			t.Errorf("route %s has no scope in routeScopes", key)
		}
	}
	for key := range routeScopes {
		if !registered[key] {
			t.Errorf("routeScopes names %s, which is not a route", key)
		}
	}
}

// Each route refuses a key lacking its scope (403 insufficient_scope, even
// with every other scope) and admits a key holding only that scope.
func TestAPIKeyScopeMatrix(t *testing.T) {
	a := newTestApp(t)
	order := a.place(1, "A-1")["order_no"].(string)
	path := strings.NewReplacer(":id", strconv.FormatInt(a.show.ID, 10), ":order_no", order)
	for route, scope := range routeScopes {
		method, p, _ := strings.Cut(route, " ")
		t.Run(route, func(t *testing.T) {
			var others []access.Scope
			for _, s := range access.AllScopes {
				if s != scope {
					others = append(others, s)
				}
			}
			_, without := a.addKey("without "+string(scope), others...)
			rec := a.do(method, path.Replace(p), `{}`, "Authorization", "Bearer "+without)
			if rec.Code != http.StatusForbidden || errorCode(t, rec) != "insufficient_scope" {
				t.Errorf("without %s: %d %s, want 403 insufficient_scope", scope, rec.Code, rec.Body)
			}
			_, with := a.addKey("only "+string(scope), scope)
			rec = a.do(method, path.Replace(p), `{}`, "Authorization", "Bearer "+with)
			if rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden {
				t.Errorf("with %s: %d %s, want the call admitted", scope, rec.Code, rec.Body)
			}
		})
	}
}

// Unknown, revoked and malformed keys are 401; SEATFLOW_API_TOKEN is a key
// with every scope.
func TestAPIKeyRefused(t *testing.T) {
	a := newTestApp(t)
	k, revoked := a.addKey("old front end", access.ScopeOrdersRead)
	if rec := a.do("GET", "/api/v1/shows", "", "Authorization", "Bearer "+revoked); rec.Code != http.StatusOK {
		t.Fatalf("before revoking: %d %s", rec.Code, rec.Body)
	}
	if _, err := revokeAPIKey(t.Context(), a.app.DB, k.ID, cliActor, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	unknown, _ := access.NewAPIKeySecret()
	for _, c := range []struct{ name, auth string }{
		{"revoked key", "Bearer " + revoked},
		{"unknown key", "Bearer " + unknown},
		{"no header", ""},
		{"empty bearer", "Bearer "},
		{"basic scheme", "Basic " + revoked},
		{"bootstrap token with a suffix", "Bearer " + testToken + "x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := a.do("GET", "/api/v1/shows", "", "Authorization", c.auth)
			if rec.Code != http.StatusUnauthorized || errorCode(t, rec) != "unauthorized" {
				t.Errorf("%d %s, want 401 unauthorized", rec.Code, rec.Body)
			}
		})
	}
	for route := range routeScopes {
		method, p, _ := strings.Cut(route, " ")
		p = strings.NewReplacer(":id", strconv.FormatInt(a.show.ID, 10), ":order_no", "SFNOPE").Replace(p)
		if rec := a.do(method, p, `{}`); rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden {
			t.Errorf("bootstrap token on %s: %d %s", route, rec.Code, rec.Body)
		}
	}
}

// The database holds only a key's hash: not its table, not any byte of the
// SQLite file.
func TestAPIKeyHashedAtRest(t *testing.T) {
	a := newTestApp(t)
	k, secret := a.addKey("front end", access.ScopeOrdersRead, access.ScopeOrdersWrite)
	if !strings.HasPrefix(secret, k.Prefix) || len(secret) < 40 {
		t.Fatalf("key %q, prefix %q", secret, k.Prefix)
	}
	var stored string
	if err := a.app.DB.X().Get(&stored, `SELECT key_hash FROM api_key WHERE id = ?`, k.ID); err != nil {
		t.Fatal(err)
	}
	if stored != access.HashAPIKey(secret) {
		t.Errorf("stored %q, want the key's SHA-256", stored)
	}
	if _, err := a.app.DB.X().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	file := strings.TrimPrefix(a.app.cfg.DB, "sqlite://")
	for _, f := range []string{file, file + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secret[len(k.Prefix):]) {
			t.Errorf("%s holds the key in plain text", f)
		}
	}
	var audit string
	if err := a.app.DB.X().Get(&audit, `SELECT detail FROM audit_log WHERE action = ? AND target = ?`,
		access.AuditAPIKeyAdd, "apikey:"+strconv.FormatInt(k.ID, 10)); err != nil {
		t.Fatalf("no audit row for the new key: %v", err)
	}
	if strings.Contains(audit, secret) {
		t.Errorf("the audit row holds the key: %s", audit)
	}
}

// A key's first use is recorded; uses within the next minute write nothing.
func TestAPIKeyLastUsed(t *testing.T) {
	a := newTestApp(t)
	k, secret := a.addKey("front end", access.ScopeOrdersRead)
	lastUsed := func() int64 {
		var ms int64
		if err := a.app.DB.X().Get(&ms, `SELECT last_used_at FROM api_key WHERE id = ?`, k.ID); err != nil {
			t.Fatal(err)
		}
		return ms
	}
	if lastUsed() != 0 {
		t.Fatalf("a new key is used at %d", lastUsed())
	}
	before := time.Now().UnixMilli()
	for i := range 3 {
		if rec := a.do("GET", "/api/v1/shows", "", "Authorization", "Bearer "+secret); rec.Code != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, rec.Code, rec.Body)
		}
		if i == 0 {
			first := lastUsed()
			if first < before {
				t.Fatalf("last used %d, want at least %d", first, before)
			}
			t.Cleanup(func() {
				if got := lastUsed(); got != first {
					t.Errorf("later calls within a minute rewrote last used: %d, then %d", first, got)
				}
			})
		}
	}
	keys, err := a.app.DB.APIKeys(t.Context())
	if err != nil || len(keys) != 1 || keys[0].LastUsedAt.IsZero() {
		t.Errorf("listed keys %+v (%v): want one, with a last-used time", keys, err)
	}
}

// The payment callback needs no bearer token, and during a rotation either
// secret signs it; any other secret is refused.
func TestPaymentCallbackSecrets(t *testing.T) {
	const previous = "previous-payment-secret-0123456789"
	a := newTestApp(t, "SEATFLOW_PAYMENT_SECRET_PREVIOUS", previous)
	for i, c := range []struct {
		name, secret string
		status       int
	}{
		{"current secret", testSecret, http.StatusOK},
		{"previous secret", previous, http.StatusOK},
		{"another secret", "some-other-secret-0123456789", http.StatusUnauthorized},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := a.place(7, "B-"+strconv.Itoa(1+i))
			body := `{"order_no":"` + o["order_no"].(string) + `","txn_id":"T-` + c.name + `","amount_cents":` +
				strconv.FormatFloat(o["amount_cents"].(float64), 'f', 0, 64) + `}`
			ts := strconv.FormatInt(time.Now().Unix(), 10)
			rec := a.do("POST", "/api/v1/payments/callback", body, "Authorization", "",
				"X-SeatFlow-Timestamp", ts, "X-SeatFlow-Signature", sign(c.secret, ts, body))
			if rec.Code != c.status {
				t.Errorf("%d %s, want %d", rec.Code, rec.Body, c.status)
			}
			if c.status == http.StatusUnauthorized && errorCode(t, rec) != "bad_signature" {
				t.Errorf("code %s, want bad_signature", errorCode(t, rec))
			}
		})
	}
	// Once the rotation is over, the previous secret signs nothing.
	b := newTestApp(t)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	if rec := b.do("POST", "/api/v1/payments/callback", `{}`, "Authorization", "",
		"X-SeatFlow-Timestamp", ts, "X-SeatFlow-Signature", sign(previous, ts, `{}`)); rec.Code != http.StatusUnauthorized {
		t.Errorf("previous secret without SEATFLOW_PAYMENT_SECRET_PREVIOUS: %d %s", rec.Code, rec.Body)
	}
}

// The key printed by add works, list shows it without its secret, revoke
// ends it: `seatflow apikey` end to end against the handler.
func TestAPIKeyCommand(t *testing.T) {
	a := newTestApp(t)
	run := func(args ...string) string {
		t.Helper()
		var out strings.Builder
		if err := APIKeyCommand(t.Context(), a.app.DB, args, &out); err != nil {
			t.Fatalf("apikey %v: %v", args, err)
		}
		return out.String()
	}
	out := run("add", "--name", "box office kiosk", "--scope", "orders:read, orders:write")
	m := regexp.MustCompile(`added API key (\d+) "box office kiosk" \((sfk_\S+)\) with scopes orders:read,orders:write\nkey \(shown once, store it now\): (sfk_\S+)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("add printed %q", out)
	}
	id, prefix, secret := m[1], m[2], m[3]
	if rec := a.do("GET", "/api/v1/shows", "", "Authorization", "Bearer "+secret); rec.Code != http.StatusOK {
		t.Errorf("the new key: %d %s", rec.Code, rec.Body)
	}
	list := run("list")
	if !strings.Contains(list, prefix) || !strings.Contains(list, "box office kiosk") || !strings.Contains(list, "active") ||
		strings.Contains(list, secret) {
		t.Errorf("list:\n%s", list)
	}
	if out := run("revoke", id); !strings.Contains(out, "revoked API key "+id) {
		t.Errorf("revoke printed %q", out)
	}
	if rec := a.do("GET", "/api/v1/shows", "", "Authorization", "Bearer "+secret); rec.Code != http.StatusUnauthorized {
		t.Errorf("the revoked key: %d %s", rec.Code, rec.Body)
	}
	if list := run("list"); !strings.Contains(list, "revoked 20") {
		t.Errorf("list after revoke:\n%s", list)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{}, "usage: seatflow apikey"},
		{[]string{"add", "--name", "x"}, "at least one scope"},
		{[]string{"add", "--name", "x", "--scope", "orders:delete"}, `unknown scope "orders:delete"`},
		{[]string{"add", "--scope", "refunds"}, "name"},
		{[]string{"revoke", "abc"}, "positive number"},
		{[]string{"revoke", "999"}, "not found"},
	} {
		var out strings.Builder
		err := APIKeyCommand(t.Context(), a.app.DB, bad.args, &out)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("apikey %v: %v, want an error about %q", bad.args, err, bad.want)
		}
	}
}
