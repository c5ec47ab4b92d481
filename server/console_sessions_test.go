package server

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
	"seatflow/web"
)

// loginFrom signs in as the account of role from address ip with browser
// ua (sent on every step of the login).
func (env *consoleEnv) loginFrom(role access.Role, ip, ua string) *browser {
	env.t.Helper()
	b := env.browser()
	b.ip = ip
	h := http.Header{"User-Agent": {ua}}
	form := b.do("GET", "/console/login", nil, h)
	m := hiddenCSRF.FindStringSubmatch(form.Body.String())
	if m == nil {
		env.t.Fatalf("login form without a token: %s", form.Body)
	}
	rec := b.do("POST", "/console/login", url.Values{"_csrf": {m[1]}, "username": {env.staff[role].Username},
		"password": {testPassword}}, h)
	if rec.Code != http.StatusSeeOther {
		env.t.Fatalf("login as %s: status %d", role, rec.Code)
	}
	if m := metaCSRF.FindStringSubmatch(b.do("GET", "/console/", nil, h).Body.String()); m != nil {
		b.csrf = m[1]
	}
	return b
}

// loggedIn reports whether b's session still opens a page (else it is sent
// to the login page).
func (b *browser) loggedIn() bool {
	b.env.t.Helper()
	rec := b.do("GET", "/console/holds", nil, nil)
	switch rec.Code {
	case http.StatusOK:
		return true
	case http.StatusSeeOther:
		if !strings.HasPrefix(rec.Header().Get("Location"), "/console/login") {
			b.env.t.Fatalf("redirected to %q, not the login page", rec.Header().Get("Location"))
		}
		return false
	}
	b.env.t.Fatalf("holds page: status %d", rec.Code)
	return false
}

// lastSeen is the recorded last use of b's session.
func (b *browser) lastSeen() time.Time {
	b.env.t.Helper()
	s, _, err := b.env.db.Session(context.Background(), hashToken(b.cookies[sessionCookie].Value), b.env.clock.Now())
	if err != nil {
		b.env.t.Fatalf("session: %v", err)
	}
	return s.LastSeenAt
}

// TestSessionIdleTimeout: a session unused for SessionIdle is over, like an
// expired one; each use pushes the end later; a use is written only when
// the recorded one is a minute old.
func TestSessionIdleTimeout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		idle  time.Duration // 0: the default
		steps []time.Duration
		last  time.Duration // the wait after the last step
		live  bool
	}{
		{"unused past the default 30 minutes", 0, nil, 30 * time.Minute, false},
		{"unused just under 30 minutes", 0, nil, 29*time.Minute + 59*time.Second, true},
		{"used every 20 minutes for an hour", 0, []time.Duration{20 * time.Minute, 20 * time.Minute, 20 * time.Minute}, 20 * time.Minute, true},
		{"used, then left for 30 minutes", 0, []time.Duration{20 * time.Minute}, 30 * time.Minute, false},
		{"a configured idle time of 10 minutes", 10 * time.Minute, nil, 10 * time.Minute, false},
		{"used every 9 minutes with 10", 10 * time.Minute, []time.Duration{9 * time.Minute, 9 * time.Minute}, 9 * time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newConsoleEnv(t)
			if tc.idle != 0 {
				env.cn.SessionIdle = tc.idle
			}
			b := env.login(access.RoleBoxOffice)
			for _, d := range tc.steps {
				env.clock.Advance(d)
				if !b.loggedIn() {
					t.Fatalf("logged out after %v of idleness", d)
				}
			}
			env.clock.Advance(tc.last)
			if got := b.loggedIn(); got != tc.live {
				t.Fatalf("after %v unused: logged in %t, want %t", tc.last, got, tc.live)
			}
			if !tc.live {
				var n int
				if err := env.db.X().Get(&n, `SELECT COUNT(*) FROM staff_session WHERE token_hash = ?`,
					hashToken(b.cookies[sessionCookie].Value)); err != nil || n != 0 {
					t.Errorf("the idle session is still stored: %d, %v", n, err)
				}
			}
		})
	}

	t.Run("a use is written at most once a minute", func(t *testing.T) {
		env := newConsoleEnv(t)
		b := env.login(access.RoleBoxOffice)
		start := b.lastSeen()
		env.clock.Advance(59 * time.Second)
		b.loggedIn()
		if got := b.lastSeen(); !got.Equal(start) {
			t.Errorf("a use 59 s after the last was written: %v, want %v", got, start)
		}
		env.clock.Advance(time.Second)
		b.loggedIn()
		if got, want := b.lastSeen(), start.Add(time.Minute); !got.Equal(want) {
			t.Errorf("a use a minute after the last: recorded %v, want %v", got, want)
		}
	})

	t.Run("htmx request of an idle session", func(t *testing.T) {
		env := newConsoleEnv(t)
		b := env.login(access.RoleBoxOffice)
		env.clock.Advance(access.DefaultSessionIdle)
		rec := b.do("GET", "/console/holds", nil, http.Header{"Hx-Request": {"true"}})
		if rec.Code != http.StatusUnauthorized || !strings.HasPrefix(rec.Header().Get("HX-Redirect"), "/console/login") {
			t.Fatalf("status %d, HX-Redirect %q", rec.Code, rec.Header().Get("HX-Redirect"))
		}
	})
}

// TestSessionIdleConfigured: SEATFLOW_SESSION_IDLE reaches the console of
// the whole app. The app runs on the system clock, so the sessions are
// made a minute either side of the limit.
func TestSessionIdleConfigured(t *testing.T) {
	a := newTestApp(t, "SEATFLOW_SESSION_IDLE", "10m")
	ctx := t.Context()
	s, err := a.app.DB.CreateStaff(ctx, access.Staff{Username: "clerk", Role: access.RoleBoxOffice, CreatedAt: time.Now()}, dummyHash)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		unused time.Duration
		status int
	}{{9 * time.Minute, http.StatusOK}, {11 * time.Minute, http.StatusSeeOther}} {
		now := time.Now()
		token := newToken()
		if err := a.app.DB.CreateSession(ctx, access.Session{TokenHash: hashToken(token), StaffID: s.ID, CSRFToken: newToken(),
			CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(time.Hour), LastSeenAt: now.Add(-tc.unused)}); err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequestWithContext(ctx, "GET", "/console/holds", nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: token})
		rec := httptest.NewRecorder()
		a.app.Handler.ServeHTTP(rec, req)
		if rec.Code != tc.status {
			t.Errorf("a session unused for %v with SEATFLOW_SESSION_IDLE=10m: status %d, want %d", tc.unused, rec.Code, tc.status)
		}
	}
}

// manualKeepAlive makes the console's stream keep-alives tick only when the
// test sends on the returned channel.
func manualKeepAlive(env *consoleEnv) chan<- time.Time {
	ticks := make(chan time.Time)
	env.cn.keepAlive = func() (<-chan time.Time, func()) { return ticks, func() {} }
	return ticks
}

// waitStreamEnd reads events until the stream ends, failing on an event
// naming orderNo (a change made after the session ended) or on ctx's end.
func waitStreamEnd(t *testing.T, ctx context.Context, events <-chan string, orderNo string) {
	t.Helper()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			if orderNo != "" && strings.Contains(ev, orderNo) {
				t.Fatalf("the stream carried a change after its session ended: %.200s", ev)
			}
		case <-ctx.Done():
			t.Fatal("the stream did not end with its session")
		}
	}
}

// readGrid waits for a stream's first event, the whole grid.
func readGrid(t *testing.T, ctx context.Context, events <-chan string) {
	t.Helper()
	select {
	case first := <-events:
		if !strings.Contains(first, `id="seat-grid"`) {
			t.Fatalf("first event is not the grid: %.200s", first)
		}
	case <-ctx.Done():
		t.Fatal("no grid in time")
	}
}

// TestSeatStreamEndsWhenIdle: keep-alives do not count as use, and the
// first one after the session went idle ends the stream.
func TestSeatStreamEndsWhenIdle(t *testing.T) {
	env := newConsoleEnv(t)
	ticks := manualKeepAlive(env)
	viewer := env.login(access.RoleBoxOffice)
	srv := httptest.NewServer(env.e)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events := openSeatStreamChan(t, ctx, srv, env, viewer)
	readGrid(t, ctx, events)

	env.clock.Advance(access.DefaultSessionIdle - time.Second)
	ticks <- time.Now()
	select {
	case ev := <-events:
		if ev != ": keep-alive" {
			t.Fatalf("a keep-alive before the idle time: %q", ev)
		}
	case <-ctx.Done():
		t.Fatal("no keep-alive")
	}
	env.clock.Advance(time.Second) // the keep-alive did not count as use
	ticks <- time.Now()
	waitStreamEnd(t, ctx, events, "")
	if viewer.loggedIn() {
		t.Error("the idle session still opens pages")
	}
}

// TestSessionsPage: one's own live sessions, with when each logged in and
// was last used, from where and with which browser, this one marked; not
// other accounts' sessions, nor idle ones.
func TestSessionsPage(t *testing.T) {
	env := newConsoleEnv(t)
	env.loginFrom(access.RoleBoxOffice, "192.0.2.30", "IdleBrowser/1.0")
	env.clock.Advance(20 * time.Minute)
	other := env.loginFrom(access.RoleBoxOffice, "192.0.2.20", "OtherBrowser/2.0")
	env.loginFrom(access.RoleOps, "192.0.2.99", "OpsBrowser/9.9")
	env.clock.Advance(11 * time.Minute) // idle's 30 minutes are over
	me := env.loginFrom(access.RoleBoxOffice, "192.0.2.10", `Mozilla/5.0 "<b>x</b>"`)

	rec := me.do("GET", "/console/sessions", nil, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("sessions page: %d", rec.Code)
	}
	page := rec.Body.String()
	current := regexp1(t, page, `(?s)<tr class="current" id="session-current">(.*?)</tr>`)
	others := regexp1(t, page, `(?s)<tr class="session-other"[^>]*>(.*?)</tr>`)
	p := web.Page{Loc: time.Local} // the console's zone
	for name, c := range map[string]struct {
		row  string
		want []string
	}{
		"this session": {current, []string{"192.0.2.10", html.EscapeString(`Mozilla/5.0 "<b>x</b>"`), "this session",
			p.Time(env.clock.Now())}},
		"the other session": {others, []string{"192.0.2.20", "OtherBrowser/2.0", p.Time(other.lastSeen())}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.row, w) {
				t.Errorf("%s: row lacks %q: %s", name, w, c.row)
			}
		}
	}
	if strings.Contains(others, "this session") {
		t.Error("the other session is marked as this one")
	}
	for _, absent := range []string{"OpsBrowser", "IdleBrowser", "<b>x</b>", me.cookies[sessionCookie].Value,
		hashToken(me.cookies[sessionCookie].Value)} {
		if strings.Contains(page, absent) {
			t.Errorf("the page shows %q", absent)
		}
	}
	if n := strings.Count(page, "<tr class="); n != 2 {
		t.Errorf("%d session rows, want 2", n)
	}
	for _, form := range []string{`action="/console/sessions/end-others"`, `action="/console/sessions/end-all"`} {
		if !strings.Contains(page, form) {
			t.Errorf("no %s form", form)
		}
	}
	if !strings.Contains(me.do("GET", "/console/", nil, nil).Body.String(), `href="/console/sessions"`) {
		t.Error("the header does not link the sessions page")
	}
}

// regexp1 returns the first group of re's first match in s.
func regexp1(t *testing.T, s, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in %s", re, s)
	}
	return m[1]
}

// TestLogOutEverywhere: "everywhere else" ends the account's other
// sessions and their open streams and keeps this one; "everywhere" ends
// this one too. Other accounts keep theirs; each is audited with the count.
func TestLogOutEverywhere(t *testing.T) {
	for _, tc := range []struct {
		name, path, action, then string
		keepsThis                bool
	}{
		{"everywhere else", "/console/sessions/end-others", access.AuditSessionsEndOthers, "/console/sessions?msg=sessions_ended", true},
		{"everywhere", "/console/sessions/end-all", access.AuditSessionsEndAll, "/console/login?msg=logged_out", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newConsoleEnv(t)
			me := env.login(access.RoleBoxOffice)
			second, third := env.login(access.RoleBoxOffice), env.login(access.RoleBoxOffice)
			colleague := env.login(access.RoleOps)
			srv := httptest.NewServer(env.e)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			streams := map[string]<-chan string{}
			for name, b := range map[string]*browser{"me": me, "second": second, "colleague": colleague} {
				streams[name] = openSeatStreamChan(t, ctx, srv, env, b)
				readGrid(t, ctx, streams[name])
			}

			rec := me.post(tc.path, nil)
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tc.then {
				t.Fatalf("status %d, Location %q: %s", rec.Code, rec.Header().Get("Location"), rec.Body)
			}
			o := env.place(5, "A-3")
			waitStreamEnd(t, ctx, streams["second"], o.OrderNo)
			if second.loggedIn() || third.loggedIn() {
				t.Error("another session of the account still opens pages")
			}
			if !colleague.loggedIn() {
				t.Error("another account was logged out")
			}
			if !tc.keepsThis {
				waitStreamEnd(t, ctx, streams["me"], o.OrderNo)
				if me.loggedIn() {
					t.Error("this session still opens pages")
				}
			} else if !me.loggedIn() {
				t.Error("this session was logged out")
			}
			// The streams that stay get the change.
			live := []string{"colleague"}
			if tc.keepsThis {
				live = append(live, "me")
			}
			for _, name := range live {
				if !streamCarries(ctx, streams[name], o.OrderNo) {
					t.Errorf("%s's stream ended or missed the change", name)
				}
			}
			ended := 2
			if !tc.keepsThis {
				ended = 3
			}
			e := lastAudit(t, env, tc.action)
			if e.Staff != env.staff[access.RoleBoxOffice].Username || e.Target != "staff:"+env.staff[access.RoleBoxOffice].Username ||
				e.Detail["sessions"] != float64(ended) {
				t.Errorf("audit %+v, want %d sessions", e, ended)
			}
		})
	}
}

// streamCarries reports whether events carries one naming orderNo before
// the stream ends.
func streamCarries(ctx context.Context, events <-chan string, orderNo string) bool {
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return false
			}
			if strings.Contains(ev, orderNo) {
				return true
			}
		case <-ctx.Done():
			return false
		}
	}
}

func lastAudit(t *testing.T, env *consoleEnv, action string) core.AuditEntry {
	t.Helper()
	log, err := env.db.AuditLog(context.Background(), store.AuditQuery{Action: action, Limit: 1})
	if err != nil || len(log) != 1 {
		t.Fatalf("audit %s: %v, %v", action, log, err)
	}
	return log[0]
}

// TestAdminEndsSessions: an admin ends every session of another account
// from the staff page, its streams too, audited; not their own there, and
// an unknown account is 404.
func TestAdminEndsSessions(t *testing.T) {
	env := newConsoleEnv(t)
	admin := env.login(access.RoleAdmin)
	clerk := env.staff[access.RoleBoxOffice]
	victims := []*browser{env.login(access.RoleBoxOffice), env.login(access.RoleBoxOffice)}
	bystander := env.login(access.RoleOps)
	srv := httptest.NewServer(env.e)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream := openSeatStreamChan(t, ctx, srv, env, victims[0])
	readGrid(t, ctx, stream)

	staffPage := admin.do("GET", "/console/staff", nil, nil).Body.String()
	path := fmt.Sprintf("/console/staff/%d/sessions/end", clerk.ID)
	if !strings.Contains(staffPage, `action="`+path+`"`) {
		t.Fatalf("the staff page has no end-sessions form for %s", clerk.Username)
	}
	if strings.Contains(staffPage, fmt.Sprintf(`action="/console/staff/%d/sessions/end"`, env.staff[access.RoleAdmin].ID)) {
		t.Error("the staff page offers to end the admin's own sessions")
	}
	if rec := admin.post(path, nil); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/console/staff?msg=staff_sessions_ended" {
		t.Fatalf("end sessions: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	o := env.place(5, "A-3")
	waitStreamEnd(t, ctx, stream, o.OrderNo)
	for i, v := range victims {
		if v.loggedIn() {
			t.Errorf("the clerk's session %d still opens pages", i)
		}
	}
	if !admin.loggedIn() || !bystander.loggedIn() {
		t.Error("the admin or a bystander was logged out")
	}
	if e := lastAudit(t, env, access.AuditStaffSessionsEnd); e.Staff != env.staff[access.RoleAdmin].Username ||
		e.Role != access.RoleAdmin || e.Target != "staff:"+clerk.Username || e.Detail["sessions"] != 2.0 {
		t.Errorf("audit %+v", e)
	}
	for _, c := range []struct {
		path   string
		status int
	}{
		{fmt.Sprintf("/console/staff/%d/sessions/end", env.staff[access.RoleAdmin].ID), http.StatusBadRequest},
		{"/console/staff/99999/sessions/end", http.StatusNotFound},
		{"/console/staff/0/sessions/end", http.StatusNotFound},
	} {
		if rec := admin.post(c.path, nil); rec.Code != c.status {
			t.Errorf("POST %s: %d, want %d", c.path, rec.Code, c.status)
		}
	}
	if !admin.loggedIn() {
		t.Error("the admin ended their own session from the staff page")
	}
}

// TestEndSessionsForbidden: only admins end another account's sessions;
// every role may end its own.
func TestEndSessionsForbidden(t *testing.T) {
	env := newConsoleEnv(t)
	admin := env.login(access.RoleAdmin)
	path := fmt.Sprintf("/console/staff/%d/sessions/end", env.staff[access.RoleAdmin].ID)
	for _, r := range []access.Role{access.RoleBoxOffice, access.RoleManager, access.RoleOps} {
		b := env.login(r)
		if rec := b.post(path, nil); rec.Code != http.StatusForbidden {
			t.Errorf("%s ends the admin's sessions: status %d, want 403", r, rec.Code)
		}
		if rec := b.do("GET", "/console/sessions", nil, nil); rec.Code != http.StatusOK {
			t.Errorf("%s's own sessions page: %d", r, rec.Code)
		}
	}
	if !admin.loggedIn() {
		t.Error("a non-admin ended the admin's session")
	}
	if n := env.auditCount(access.AuditStaffSessionsEnd); n != 0 {
		t.Errorf("%d refused endings audited", n)
	}
}

// TestEndSessionsNeedCSRF: each of the new POSTs without the session's
// CSRF token (or with another session's, or in the query string) is 403
// and ends nothing.
func TestEndSessionsNeedCSRF(t *testing.T) {
	env := newConsoleEnv(t)
	admin := env.login(access.RoleAdmin)
	other := env.login(access.RoleAdmin) // an admin's second session: what end-others would end
	clerk := env.login(access.RoleBoxOffice)
	for _, path := range []string{"/console/sessions/end-others", "/console/sessions/end-all",
		fmt.Sprintf("/console/staff/%d/sessions/end", env.staff[access.RoleBoxOffice].ID)} {
		for name, send := range map[string]func() *httptest.ResponseRecorder{
			"no token": func() *httptest.ResponseRecorder { return admin.do("POST", path, url.Values{}, nil) },
			"another session's": func() *httptest.ResponseRecorder {
				return admin.do("POST", path, url.Values{"_csrf": {clerk.csrf}}, nil)
			},
			"in the query string": func() *httptest.ResponseRecorder {
				return admin.do("POST", path+"?_csrf="+admin.csrf, url.Values{}, nil)
			},
			"empty header and form": func() *httptest.ResponseRecorder { return admin.do("POST", path, url.Values{"_csrf": {""}}, nil) },
		} {
			if rec := send(); rec.Code != http.StatusForbidden {
				t.Errorf("POST %s, %s: status %d, want 403", path, name, rec.Code)
			}
		}
	}
	if !admin.loggedIn() || !other.loggedIn() || !clerk.loggedIn() {
		t.Error("a POST without the CSRF token ended a session")
	}
	for _, a := range []string{access.AuditSessionsEndOthers, access.AuditSessionsEndAll, access.AuditStaffSessionsEnd} {
		if n := env.auditCount(a); n != 0 {
			t.Errorf("%d %s audited", n, a)
		}
	}
}
