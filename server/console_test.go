package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
	"seatflow/core/store"
	"seatflow/core/till"
	"seatflow/web"
)

// testPassword is every test account's password.
const testPassword = "correct horse battery"

// consoleEnv is the console on the embedded stack: SQLite file, in-process
// Redis, DB delay queue, the engine notifying a SeatHub, and one account
// per role.
type consoleEnv struct {
	t      testing.TB
	stack  *stacktest.Stack
	db     *store.DB
	engine *core.Engine
	hub    *SeatHub
	clock  *stacktest.Clock // the console's clock (sessions, rate limits)
	runner *fakeRunner
	e      *echo.Echo
	cn     *console
	show   core.Show
	staff  map[access.Role]access.Staff
}

// consoleRefundApprovalCents is the console tests' two-step refund
// threshold: a C-row seat (5000) is below it, two A-row seats (15000) above.
const consoleRefundApprovalCents = 10000

// newConsoleEnv gives the console a test clock (env.clock), which moves
// only when a test advances it.
func newConsoleEnv(t testing.TB) *consoleEnv {
	t.Helper()
	return newConsoleEnvOn(t, stacktest.Embedded(t))
}

// newConsoleEnvOn is newConsoleEnv on the given stack (stacktest.Each).
func newConsoleEnvOn(t testing.TB, st *stacktest.Stack) *consoleEnv {
	t.Helper()
	hub := NewSeatHub(nil, nil)
	t.Cleanup(hub.Close)
	engine, err := core.NewEngine(core.Config{HoldTTL: 15 * time.Minute, PurchaseLimit: 6, Delay: core.DefaultDelayPolicy()},
		core.Deps{Store: st.DB, Seats: st.Seats, Queue: st.Queue, Notifier: hub})
	if err != nil {
		t.Fatal(err)
	}
	env := &consoleEnv{t: t, stack: st, db: st.DB, engine: engine, hub: hub,
		clock: stacktest.NewClock(time.Now()), runner: &fakeRunner{}, staff: map[access.Role]access.Staff{}}
	env.show = st.NewShow(t, 3, 4)
	env.e = echo.New()
	env.e.HTTPErrorHandler = handleError
	refunds, err := core.NewRefunds(engine, st.DB, consoleRefundApprovalCents)
	if err != nil {
		t.Fatal(err)
	}
	env.cn = registerConsole(env.e, ConsoleDeps{Engine: engine, DB: st.DB, Hub: hub, Reconcile: env.runner,
		Logger: slog.New(slog.DiscardHandler), Clock: env.clock, Refunds: refunds})
	for _, r := range access.AllRoles() {
		env.staff[r] = env.addStaff(string(r)+"-user", r)
		// Every counter sale needs its clerk's open shift at the till.
		if _, err := env.cn.Till.Open(context.Background(), till.OpenRequest{Clerk: env.staff[r].Username,
			Currency: env.show.Currency, FloatCents: 10000}); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// addStaff creates an account with a cheap hash: bcrypt's default cost
// would make every login in these tests take tens of milliseconds.
func (env *consoleEnv) addStaff(name string, role access.Role) access.Staff {
	env.t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		env.t.Fatal(err)
	}
	s, err := env.db.CreateStaff(context.Background(), access.Staff{Username: name, Role: role, CreatedAt: time.Now()}, string(hash))
	if err != nil {
		env.t.Fatal(err)
	}
	return s
}

// place holds seats of the test show for user through the engine.
func (env *consoleEnv) place(user int64, seats ...string) core.Order {
	env.t.Helper()
	o, err := env.engine.Place(context.Background(), core.PlaceRequest{UserID: user, ShowID: env.show.ID, SeatIDs: seats})
	if err != nil {
		env.t.Fatalf("place %v: %v", seats, err)
	}
	return o
}

// pay applies a payment for o through the engine.
func (env *consoleEnv) pay(o core.Order) core.PaymentResult {
	env.t.Helper()
	res, err := env.engine.HandlePayment(context.Background(), core.Payment{TxnID: "T" + o.OrderNo,
		OrderNo: o.OrderNo, AmountCents: o.AmountCents})
	if err != nil {
		env.t.Fatalf("pay %s: %v", o.OrderNo, err)
	}
	return res
}

// browser is one client: its cookies and the CSRF token of its session.
type browser struct {
	env     *consoleEnv
	cookies map[string]*http.Cookie
	csrf    string
	ip      string
}

func (env *consoleEnv) browser() *browser {
	return &browser{env: env, cookies: map[string]*http.Cookie{}, ip: "192.0.2.10"}
}

// login signs in as the account of role and returns its browser.
func (env *consoleEnv) login(role access.Role) *browser {
	env.t.Helper()
	b := env.browser()
	if rec := b.login(env.staff[role].Username, testPassword); rec.Code != http.StatusSeeOther {
		env.t.Fatalf("login as %s: status %d: %s", role, rec.Code, rec.Body)
	}
	return b
}

var (
	hiddenCSRF = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)
	metaCSRF   = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)"`)
)

// login fetches the login form (for its double-submit token) and posts it.
func (b *browser) login(username, password string) *httptest.ResponseRecorder {
	b.env.t.Helper()
	form := b.do("GET", "/console/login", nil, nil)
	m := hiddenCSRF.FindStringSubmatch(form.Body.String())
	if m == nil {
		b.env.t.Fatalf("login form without a token: %s", form.Body)
	}
	rec := b.do("POST", "/console/login", url.Values{"_csrf": {m[1]}, "username": {username}, "password": {password}}, nil)
	if rec.Code == http.StatusSeeOther {
		page := b.do("GET", "/console/", nil, nil)
		if page.Code == http.StatusSeeOther { // e.g. to set up a required second factor
			page = b.do("GET", page.Header().Get("Location"), nil, nil)
		}
		if m := metaCSRF.FindStringSubmatch(page.Body.String()); m != nil {
			b.csrf = m[1]
		}
	}
	return rec
}

// do sends a request with the browser's cookies and keeps the cookies the
// response sets. form is sent as a urlencoded body.
func (b *browser) do(method, path string, form url.Values, header http.Header) *httptest.ResponseRecorder {
	b.env.t.Helper()
	return b.doCtx(context.Background(), method, path, form, header)
}

func (b *browser) doCtx(ctx context.Context, method, path string, form url.Values, header http.Header) *httptest.ResponseRecorder {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequestWithContext(ctx, method, path, body)
	req.RemoteAddr = b.ip + ":40000"
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	for _, c := range b.cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	b.env.e.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	return rec
}

// post sends a form with the session's CSRF token.
func (b *browser) post(path string, form url.Values) *httptest.ResponseRecorder {
	b.env.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("_csrf", b.csrf)
	return b.do("POST", path, form, nil)
}

// fakeRunner is a ReconcileRunner that records its runs.
type fakeRunner struct {
	mu   sync.Mutex
	runs []web.ReconcileRun
	busy bool // RunNow finds another run in progress
}

func (f *fakeRunner) RecentRuns(_ context.Context, limit int) ([]web.ReconcileRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]web.ReconcileRun, 0, limit)
	for i := len(f.runs) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, f.runs[i])
	}
	return out, nil
}

func (f *fakeRunner) LastFullRun(context.Context) (web.ReconcileRun, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.runs) - 1; i >= 0; i-- {
		if f.runs[i].Trigger != "sweep" {
			return f.runs[i], true, nil
		}
	}
	return web.ReconcileRun{}, false, nil
}

func (f *fakeRunner) RunNow(context.Context) (web.ReconcileRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy {
		return web.ReconcileRun{}, &core.Error{Kind: core.KindConflict, Code: "reconcile_busy", Message: "busy"}
	}
	now := time.Now()
	r := web.ReconcileRun{ID: int64(len(f.runs) + 1), Trigger: "manual", Owner: "test-host", Status: "ok",
		StartedAt: now, FinishedAt: now,
		Checks: []web.ReconcileCheck{{Name: "expired_pending", Found: 1, Fixed: 1}, {Name: "limit_drift"}}}
	f.runs = append(f.runs, r)
	return r, nil
}

func (f *fakeRunner) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.runs)
}

// auditCount counts audit entries with action.
func (env *consoleEnv) auditCount(action string) int {
	env.t.Helper()
	var n int
	if err := env.db.X().Get(&n, `SELECT COUNT(*) FROM audit_log WHERE action = ?`, action); err != nil {
		env.t.Fatal(err)
	}
	return n
}

// TestConsoleRoutesByRole sends every console route as every role, without
// a session, and with a missing or wrong CSRF token: the role matrix of
// requireRole, route by route.
func TestConsoleRoutesByRole(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	pending := env.place(7, "A-1")
	paidLater := env.place(8, "A-2")
	if _, err := env.engine.CancelAndRelease(ctx, core.CancelRequest{OrderNo: paidLater.OrderNo,
		Reason: core.ReasonCustomer, Actor: "user:8"}); err != nil {
		t.Fatal(err)
	}
	if res := env.pay(paidLater); res != core.PaymentDiscrepancy {
		t.Fatalf("payment after cancel: %s, want a discrepancy", res)
	}
	disc, err := env.db.Discrepancies(ctx, store.DiscrepancyOpen, 10, 0)
	if err != nil || len(disc) != 1 {
		t.Fatalf("discrepancies %v, %v", disc, err)
	}
	target := env.addStaff("target-user", access.RoleBoxOffice)
	show := fmt.Sprint(env.show.ID)
	spare := fmt.Sprint(env.stack.NewShow(t, 1, 2).ID) // cancelled below, and again, harmlessly
	discID := fmt.Sprint(disc[0].ID)
	targetID := fmt.Sprint(target.ID)

	type route struct {
		method, path string
		action       string     // what requireRole checks
		form         url.Values // POST body besides _csrf
		ok           int        // status when allowed
	}
	routes := []route{
		{"GET", "/console/", access.ActView, nil, 200},
		{"GET", "/console/holds", access.ActView, nil, 200},
		{"GET", "/console/holds?q=SF&sort=created&page=1", access.ActView, nil, 200},
		{"GET", "/console/orders/" + pending.OrderNo, access.ActView, nil, 200},
		{"POST", "/console/orders/" + pending.OrderNo + "/extend", access.ActExtendHold, url.Values{"minutes": {"5"}, "reason": {"at the ATM"}}, 303},
		{"POST", "/console/orders/" + pending.OrderNo + "/cancel", access.ActForceCancel, url.Values{"reason": {"customer at desk"}}, 200},
		{"POST", "/console/orders/" + pending.OrderNo + "/cancel", access.ActForceCancel, url.Values{"reason": {"customer at desk"}, "confirm": {"1"}}, 303},
		{"GET", "/console/shows", access.ActView, nil, 200},
		{"GET", "/console/shows/" + show, access.ActView, nil, 200},
		{"GET", "/console/shows/" + show + "/events", access.ActView, nil, 200},
		{"GET", "/console/shows/" + show + "/seats/A-1", access.ActView, nil, 200},
		{"GET", "/console/shows/new", access.ActShows, nil, 200},
		{"POST", "/console/shows/" + show + "/block", access.ActShows, url.Values{"seat_ids": {"C-4"}, "reason": {"house"}}, 303},
		{"POST", "/console/shows/" + show + "/unblock", access.ActShows, url.Values{"seat_ids": {"C-4"}}, 303},
		{"GET", "/console/shows/" + show + "/edit", access.ActShows, nil, 200},
		// The show has orders: past the role check, refused for every role.
		{"POST", "/console/shows/" + show + "/edit", access.ActShows, url.Values{"name": {"Renamed"}, "starts_at": {"2030-01-01T20:00"}}, 409},
		{"GET", "/console/shows/" + show + "/cancel", access.ActShows, nil, 200},
		{"POST", "/console/shows/" + spare + "/cancel", access.ActShows, url.Values{}, 303},
		// On sale already: publishing changes nothing.
		{"POST", "/console/shows/" + show + "/publish", access.ActShows, url.Values{}, 303},
		// Past the role check, refused the same for every role: an unknown
		// seat, a hold the force-cancel above ended, an unpaid ticket.
		{"POST", "/console/shows/" + show + "/counter", access.ActCounterSale, url.Values{"seat_ids": {"Z-99"}}, 422},
		{"POST", "/console/orders/" + pending.OrderNo + "/pay", access.ActCounterSale, url.Values{"tender": {"cash"}}, 409},
		{"GET", "/console/shows/" + show + "/waitlist", access.ActView, nil, 200},
		{"GET", "/console/shows/" + show + "/waitlist/live", access.ActView, nil, 200},
		// The list stays closed: a walk-in is refused past the role check.
		{"POST", "/console/shows/" + show + "/waitlist", access.ActShows, url.Values{"join_when": {"always"}, "offer_minutes": {"30"}}, 303},
		{"POST", "/console/shows/" + show + "/waitlist/entries", access.ActCounterSale, url.Values{"name": {"Walk-in"}, "count": {"1"}}, 409},
		{"POST", "/console/shows/" + show + "/waitlist/entries/wl_none/withdraw", access.ActCounterSale, url.Values{"confirm": {"1"}}, 404},
		{"GET", "/console/orders/" + pending.OrderNo + "/ticket", access.ActView, nil, 409},
		{"GET", "/console/discrepancies", access.ActDiscrepancies, nil, 200},
		{"GET", "/console/discrepancies/" + discID, access.ActDiscrepancies, nil, 200},
		{"POST", "/console/discrepancies/" + discID + "/take", access.ActDiscrepancies, url.Values{}, 303},
		{"POST", "/console/discrepancies/" + discID + "/note", access.ActDiscrepancies, url.Values{"note": {"called the bank"}}, 303},
		// Refused by the state machine (open → refunded skips the request):
		// past the role check, the same for every allowed role.
		{"POST", "/console/discrepancies/" + discID + "/move", access.ActDiscrepancies, url.Values{"to": {"refunded"}, "note": {"done"}}, 409},
		{"GET", "/console/reconcile", access.ActReconcile, nil, 200},
		{"POST", "/console/reconcile/run", access.ActReconcile, url.Values{}, 303},
		{"GET", "/console/dead-letters", access.ActReconcile, nil, 200},
		// No such dead letter: past the role check, the same for every allowed role.
		{"POST", "/console/dead-letters/999999/retry", access.ActReconcile, url.Values{}, 404},
		{"GET", "/console/audit", access.ActAudit, nil, 200},
		{"GET", "/console/staff", access.ActStaff, nil, 200},
		{"POST", "/console/staff", access.ActStaff, url.Values{"username": {"new-ops"}, "role": {"ops"}}, 200},
		{"POST", "/console/staff/" + targetID + "/disable", access.ActStaff, url.Values{}, 303},
		{"POST", "/console/staff/" + targetID + "/enable", access.ActStaff, url.Values{}, 303},
		{"POST", "/console/staff/" + targetID + "/role", access.ActStaff, url.Values{"role": {"ops"}}, 303},
		{"POST", "/console/staff/" + targetID + "/reset-link", access.ActStaff, url.Values{}, 200},
		{"POST", "/console/staff/" + targetID + "/2fa-reset", access.ActStaff, url.Values{}, 303},
		{"GET", "/console/account/2fa", access.ActOwnAccount, nil, 200},
		{"POST", "/console/account/2fa", access.ActOwnAccount, url.Values{"code": {"000000"}}, 422},
		{"GET", "/console/account/password", access.ActOwnAccount, nil, 200},
		// The wrong current password: past the role check, the same for every role.
		{"POST", "/console/account/password", access.ActOwnAccount, url.Values{"current": {"wrong"}, "password": {"x"}, "confirm": {"x"}}, 422},
		{"GET", "/console/account/zone", access.ActOwnAccount, nil, 200},
		{"POST", "/console/account/zone", access.ActOwnAccount, url.Values{"time_zone": {"Asia/Tokyo"}}, 303},
		{"POST", "/console/logout", access.ActOwnAccount, url.Values{}, 303},
	}
	send := func(b *browser, r route, csrf string) *httptest.ResponseRecorder {
		t.Helper()
		var form url.Values
		if r.method == "POST" {
			form = url.Values{}
			for k, v := range r.form {
				form[k] = v
			}
			if csrf != "" {
				form.Set("_csrf", csrf)
			}
		}
		reqCtx := ctx
		if strings.HasSuffix(r.path, "/events") {
			// The stream runs until the browser leaves: leave soon.
			var cancel context.CancelFunc
			reqCtx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
		}
		return b.doCtx(reqCtx, r.method, r.path, form, nil)
	}
	for _, r := range routes {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			t.Run("no session", func(t *testing.T) {
				rec := send(env.browser(), r, "")
				loc := rec.Header().Get("Location")
				if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/console/login?next=") {
					t.Fatalf("status %d, Location %q; want 303 to the login page", rec.Code, loc)
				}
			})
			for _, role := range access.AllRoles() {
				t.Run(string(role), func(t *testing.T) {
					// A session of its own per case: logout ends one.
					b := env.login(role)
					if r.method == "POST" && role.Can(r.action) {
						if rec := send(b, r, ""); rec.Code != http.StatusForbidden {
							t.Errorf("missing CSRF token: status %d, want 403", rec.Code)
						}
						if rec := send(b, r, "not-"+b.csrf); rec.Code != http.StatusForbidden ||
							!strings.Contains(rec.Body.String(), web.Translate(web.LangEN, "error.csrf")) {
							t.Errorf("wrong CSRF token: status %d, want 403 with the expired-form text", rec.Code)
						}
					}
					rec := send(b, r, b.csrf)
					want := http.StatusForbidden
					if role.Can(r.action) {
						want = r.ok
					}
					if rec.Code != want {
						t.Fatalf("status %d, want %d; body: %.300s", rec.Code, want, rec.Body)
					}
					if want == http.StatusForbidden && !strings.Contains(rec.Body.String(), "<h1>Not allowed</h1>") {
						t.Errorf("403 is not the console's page: %.300s", rec.Body)
					}
					if r.method == "GET" && want == 200 && !strings.HasSuffix(r.path, "/events") &&
						!strings.Contains(rec.Header().Get("Content-Security-Policy"), "script-src 'self'") {
						t.Errorf("no CSP header on a console page")
					}
				})
			}
		})
	}
	// State the allowed posts left behind: the audit log has them.
	// Box office, manager, ops and admin may force-cancel and extend; every role, door too, may log out.
	for action, want := range map[string]int{core.AuditForceCancel: 4, core.AuditExtendHold: 4,
		core.AuditCaseTake: 2, core.AuditCaseNote: 2, core.AuditCaseMove: 0,
		core.AuditReconcileRun: 2, core.AuditStaffAdd: 1, core.AuditStaffDisable: 1, core.AuditLogout: 5} {
		if got := env.auditCount(action); got != want {
			t.Errorf("audit entries %s: %d, want %d", action, got, want)
		}
	}
	if env.runner.count() != 2 {
		t.Errorf("reconcile runs started: %d, want 2 (ops, admin)", env.runner.count())
	}
}

func TestConsoleLogin(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	ops := env.staff[access.RoleOps]

	t.Run("wrong password", func(t *testing.T) {
		rec := env.browser().login(ops.Username, "wrong password!")
		if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "Wrong username or password") {
			t.Fatalf("status %d: %.300s", rec.Code, rec.Body)
		}
	})
	t.Run("unknown user", func(t *testing.T) {
		if rec := env.browser().login("nobody", testPassword); rec.Code != http.StatusUnauthorized {
			t.Fatalf("status %d", rec.Code)
		}
	})
	t.Run("login form without its token", func(t *testing.T) {
		b := env.browser()
		rec := b.do("POST", "/console/login", url.Values{"username": {ops.Username}, "password": {testPassword}}, nil)
		if rec.Code != http.StatusForbidden || b.cookies[sessionCookie] != nil {
			t.Fatalf("status %d, session cookie %v", rec.Code, b.cookies[sessionCookie])
		}
	})
	t.Run("cookie and stored session", func(t *testing.T) {
		b := env.browser()
		rec := b.login(ops.Username, testPassword)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/console/" {
			t.Fatalf("status %d, Location %q", rec.Code, rec.Header().Get("Location"))
		}
		c := b.cookies[sessionCookie]
		if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/console" || c.Secure {
			t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Lax, Path=/console, not Secure over http", c)
		}
		var stored int
		if err := env.db.X().Get(&stored, `SELECT COUNT(*) FROM staff_session WHERE token_hash = ?`, hashToken(c.Value)); err != nil || stored != 1 {
			t.Fatalf("sessions stored under the token's hash: %d, %v", stored, err)
		}
		if err := env.db.X().Get(&stored, `SELECT COUNT(*) FROM staff_session WHERE token_hash = ?`, c.Value); err != nil || stored != 0 {
			t.Fatalf("the raw token is stored: %d, %v", stored, err)
		}
		if b.csrf == "" {
			t.Fatal("no CSRF token in the page")
		}
	})
	t.Run("secure cookie over TLS", func(t *testing.T) {
		b := env.browser()
		form := b.do("GET", "/console/login", nil, nil)
		token := hiddenCSRF.FindStringSubmatch(form.Body.String())[1]
		req := httptest.NewRequest("POST", "/console/login", strings.NewReader(url.Values{"_csrf": {token},
			"username": {ops.Username}, "password": {testPassword}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(b.cookies[loginCookie])
		req.TLS = &tls.ConnectionState{}
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		var session *http.Cookie
		for _, c := range rec.Result().Cookies() {
			if c.Name == sessionCookie {
				session = c
			}
		}
		if rec.Code != http.StatusSeeOther || session == nil || !session.Secure {
			t.Fatalf("status %d, cookie %+v: want a Secure session cookie", rec.Code, session)
		}
	})
	t.Run("next stays in the console", func(t *testing.T) {
		b := env.browser()
		form := b.do("GET", "/console/login?next=/console/holds", nil, nil)
		token := hiddenCSRF.FindStringSubmatch(form.Body.String())[1]
		rec := b.do("POST", "/console/login", url.Values{"_csrf": {token}, "username": {ops.Username},
			"password": {testPassword}, "next": {"/console/holds?q=SF"}}, nil)
		if loc := rec.Header().Get("Location"); loc != "/console/holds?q=SF" {
			t.Fatalf("Location %q", loc)
		}
	})
	t.Run("disabled account", func(t *testing.T) {
		s := env.addStaff("soon-disabled", access.RoleBoxOffice)
		b := env.browser()
		if rec := b.login(s.Username, testPassword); rec.Code != http.StatusSeeOther {
			t.Fatalf("login: %d", rec.Code)
		}
		if _, err := env.db.SetStaffDisabled(ctx, s.ID, true); err != nil {
			t.Fatal(err)
		}
		if rec := b.do("GET", "/console/", nil, nil); rec.Code != http.StatusSeeOther {
			t.Errorf("disabled account's open session: status %d, want 303 to login", rec.Code)
		}
		if rec := env.browser().login(s.Username, testPassword); rec.Code != http.StatusUnauthorized {
			t.Errorf("disabled account logs in: status %d", rec.Code)
		}
	})
	t.Run("session expires", func(t *testing.T) {
		b := env.login(access.RoleBoxOffice)
		env.clock.Advance(sessionTTL + time.Second)
		if rec := b.do("GET", "/console/holds", nil, nil); rec.Code != http.StatusSeeOther {
			t.Errorf("expired session: status %d, want 303", rec.Code)
		}
	})
	t.Run("htmx request without session", func(t *testing.T) {
		rec := env.browser().do("GET", "/console/shows/1/seats/A-1", nil, http.Header{"Hx-Request": {"true"}})
		if rec.Code != http.StatusUnauthorized || !strings.HasPrefix(rec.Header().Get("HX-Redirect"), "/console/login") {
			t.Fatalf("status %d, HX-Redirect %q", rec.Code, rec.Header().Get("HX-Redirect"))
		}
	})
	t.Run("logout ends the session", func(t *testing.T) {
		b := env.login(access.RoleOps)
		old := *b.cookies[sessionCookie]
		if rec := b.post("/console/logout", nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("logout: %d", rec.Code)
		}
		b.cookies[sessionCookie] = &old // a stolen copy of the cookie is useless now
		if rec := b.do("GET", "/console/", nil, nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("after logout: status %d", rec.Code)
		}
	})
	if env.auditCount(core.AuditLoginFailed) < 3 || env.auditCount(core.AuditLogin) < 5 {
		t.Errorf("logins audited: %d failed, %d ok", env.auditCount(core.AuditLoginFailed), env.auditCount(core.AuditLogin))
	}
}

func TestConsoleLoginRateLimit(t *testing.T) {
	env := newConsoleEnv(t)
	name := env.staff[access.RoleOps].Username
	attacker := env.browser()
	for i := 1; i <= loginTries; i++ {
		if rec := attacker.login(name, "guess"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("try %d: status %d, want 401", i, rec.Code)
		}
	}
	rec := attacker.login(name, testPassword)
	if rec.Code != http.StatusTooManyRequests || attacker.cookies[sessionCookie] != nil {
		t.Fatalf("try %d with the right password: status %d, want 429 and no session", loginTries+1, rec.Code)
	}
	other := env.browser()
	other.ip = "192.0.2.99"
	if rec := other.login(name, testPassword); rec.Code != http.StatusSeeOther {
		t.Errorf("another address: status %d, want a login", rec.Code)
	}
	sameAddress := env.browser()
	if rec := sameAddress.login(env.staff[access.RoleAdmin].Username, testPassword); rec.Code != http.StatusSeeOther {
		t.Errorf("another username from the same address: status %d, want a login", rec.Code)
	}
	env.clock.Advance(loginTryWindow)
	if rec := attacker.login(name, testPassword); rec.Code != http.StatusSeeOther {
		t.Errorf("after the window: status %d, want a login", rec.Code)
	}
}

func TestLoginLimiterPrunes(t *testing.T) {
	clock := stacktest.NewClock(time.Now())
	l := newLoginLimiter(1, time.Minute, clock)
	for i := range pruneAt {
		l.allow(fmt.Sprint("k", i))
	}
	clock.Advance(time.Minute)
	l.allow("fresh")
	if len(l.tries) != 1 {
		t.Fatalf("%d windows kept after pruning, want 1", len(l.tries))
	}
}

func TestSafeNext(t *testing.T) {
	for next, want := range map[string]string{
		"":                     "/console/",
		"/console":             "/console",
		"/console/holds?q=1":   "/console/holds?q=1",
		"https://evil.example": "/console/",
		"//evil.example/":      "/console/",
		"/console//evil":       "/console/",
		"/console/\\evil":      "/console/",
		"/consolex":            "/console/",
		"/api/v1/orders":       "/console/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

func TestConsoleForceCancel(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	b := env.login(access.RoleBoxOffice)
	o := env.place(11, "B-1", "B-2")
	path := "/console/orders/" + o.OrderNo + "/cancel"

	rec := b.post(path, url.Values{"reason": {"   "}})
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "Give a reason") {
		t.Fatalf("no reason: status %d", rec.Code)
	}
	rec = b.post(path, url.Values{"reason": {"double booking at desk 3"}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `id="confirm-cancel"`) ||
		!strings.Contains(rec.Body.String(), "B-1 B-2") {
		t.Fatalf("first post: status %d, want the confirmation: %.500s", rec.Code, rec.Body)
	}
	if got, _, _ := env.engine.Order(ctx, o.OrderNo); got.Status != core.StatusPending {
		t.Fatalf("cancelled before confirmation: %s", got.Status)
	}
	rec = b.post(path, url.Values{"reason": {"double booking at desk 3"}, "confirm": {"1"}})
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !strings.HasSuffix(loc, "?outcome=cancelled") {
		t.Fatalf("confirm: status %d, Location %q", rec.Code, loc)
	}
	got, events, err := env.engine.Order(ctx, o.OrderNo)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != core.StatusCancelled || got.CancelReason != core.ReasonStaff || got.CancelActor != "staff:box_office-user" {
		t.Fatalf("order after force-cancel: %+v", got)
	}
	var note any
	for _, ev := range events {
		if ev.Kind == core.EventCancelled {
			note = ev.Detail["note"]
		}
	}
	if note != "double booking at desk 3" {
		t.Errorf("cancel event note %v", note)
	}
	page := b.do("GET", rec.Header().Get("Location"), nil, nil)
	if !strings.Contains(page.Body.String(), "Order cancelled; its seats are released.") {
		t.Errorf("order page after cancel lacks the outcome")
	}
	holds, err := env.stack.Seats.Holds(ctx, env.show.ID)
	if err != nil || len(holds) != 0 {
		t.Errorf("seats still held after force-cancel: %v, %v", holds, err)
	}

	// A second click, and a cancel that loses to a payment: outcomes, not errors.
	rec = b.post(path, url.Values{"reason": {"again"}, "confirm": {"1"}})
	if loc := rec.Header().Get("Location"); !strings.HasSuffix(loc, "?outcome=already_cancelled") {
		t.Errorf("second cancel: status %d, Location %q", rec.Code, loc)
	}
	paid := env.place(12, "C-1")
	env.pay(paid)
	rec = b.post("/console/orders/"+paid.OrderNo+"/cancel", url.Values{"reason": {"late"}, "confirm": {"1"}})
	if loc := rec.Header().Get("Location"); !strings.HasSuffix(loc, "?outcome=already_paid") {
		t.Fatalf("cancel of a paid order: status %d, Location %q", rec.Code, loc)
	}
	page = b.do("GET", rec.Header().Get("Location"), nil, nil)
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), "Already paid") {
		t.Errorf("paid order page: %d", page.Code)
	}
	if n := env.auditCount(core.AuditForceCancel); n != 3 {
		t.Errorf("force-cancels audited: %d, want 3", n)
	}
	if rec := b.post("/console/orders/SFNOSUCHORDER/cancel", url.Values{"reason": {"x"}, "confirm": {"1"}}); rec.Code != http.StatusNotFound {
		t.Errorf("unknown order: status %d, want 404", rec.Code)
	}
}

// TestConsolePages checks what the pages show, beyond their status codes.
func TestConsolePages(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	b := env.login(access.RoleAdmin)
	var orders []core.Order
	for i, seat := range []string{"A-1", "A-2", "A-3", "B-1"} {
		orders = append(orders, env.place(int64(100+i), seat))
	}
	env.pay(orders[3])

	cases := []struct {
		name, path string
		status     int
		want       []string
		not        []string
	}{
		{"dashboard counts", "/console/", 200,
			[]string{`id="stat-pending">3<`, `<svg class="chart"`, "Orders in the last hour"}, nil},
		{"holds with countdowns and hops", "/console/holds", 200,
			[]string{orders[0].OrderNo, `data-expire="` + web.EpochMS(orders[0].ExpireAt) + `"`, "3 in all", "Timeout hops"},
			[]string{orders[3].OrderNo}},
		{"holds search", "/console/holds?q=" + orders[1].OrderNo[len(orders[1].OrderNo)-8:], 200,
			[]string{orders[1].OrderNo, "1 in all"}, []string{orders[0].OrderNo}},
		{"holds by user", "/console/holds?user=102", 200, []string{orders[2].OrderNo}, []string{orders[0].OrderNo}},
		{"holds bad user", "/console/holds?user=abc", 400, []string{"Bad request"}, nil},
		{"order timeline", "/console/orders/" + orders[0].OrderNo, 200,
			[]string{"Timeout hop scheduled", "delay level", "Placed", `id="cancel-form"`}, nil},
		{"paid order has no cancel form", "/console/orders/" + orders[3].OrderNo, 200,
			[]string{"Seats sold", "Paid"}, []string{`id="cancel-form"`}},
		{"unknown order", "/console/orders/SFNOPE", 404, []string{`id="no-order"`, "SFNOPE"}, nil},
		{"seat map", "/console/shows/" + fmt.Sprint(env.show.ID), 200,
			[]string{`sse-connect="/console/shows/`, `["A-1","locked"`, `["B-1","sold"`,
				`["C-4","available"`}, nil},
		{"unknown show", "/console/shows/999999", 404, nil, nil},
		{"seat panel", "/console/shows/" + fmt.Sprint(env.show.ID) + "/seats/A-1", 200,
			[]string{orders[0].OrderNo, `id="cancel-form"`}, []string{"<html"}},
		{"unknown console path", "/console/no/such/page", 404, []string{"<h1>Not found</h1>", "console.css"}, nil},
		{"reconcile page", "/console/reconcile", 200, []string{`id="run-now"`}, nil},
		{"static asset", "/console/static/htmx.min.js", 200, []string{"htmx"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := b.do("GET", c.path, nil, nil)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %.300s", rec.Code, c.status, rec.Body)
			}
			body := rec.Body.String()
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("missing %q", w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(body, w) {
					t.Errorf("unexpected %q", w)
				}
			}
		})
	}

	t.Run("staff add and disable", func(t *testing.T) {
		for _, c := range []struct {
			form url.Values
			want string
		}{
			{url.Values{"username": {"Bad Name"}, "role": {"ops"}}, "Usernames are 2-64"},
			{url.Values{"username": {"no-role"}, "role": {"root"}}, "Pick a role"},
			{url.Values{"username": {"ops-user"}, "role": {"ops"}}, "That username is taken"},
		} {
			rec := b.post("/console/staff", c.form)
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), c.want) {
				t.Errorf("%v: status %d, want 422 with %q", c.form, rec.Code, c.want)
			}
		}
		clerk := env.browser()
		addStaffWithLink(t, env, b, "clerk", access.RoleBoxOffice, "quiet ocelot marmalade")
		if rec := clerk.login("clerk", "quiet ocelot marmalade"); rec.Code != http.StatusSeeOther {
			t.Fatalf("new account cannot log in: %d", rec.Code)
		}
		var id int64
		if err := env.db.X().Get(&id, `SELECT id FROM staff WHERE username = 'clerk'`); err != nil {
			t.Fatal(err)
		}
		if rec := b.post(fmt.Sprintf("/console/staff/%d/disable", id), nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("disable: %d", rec.Code)
		}
		if rec := clerk.do("GET", "/console/", nil, nil); rec.Code != http.StatusSeeOther {
			t.Errorf("disabled clerk still in: %d", rec.Code)
		}
		if rec := b.post(fmt.Sprintf("/console/staff/%d/disable", env.staff[access.RoleAdmin].ID), nil); rec.Code != http.StatusBadRequest {
			t.Errorf("admin disabling themselves: %d, want 400", rec.Code)
		}
	})

	t.Run("reconcile run now", func(t *testing.T) {
		if rec := b.post("/console/reconcile/run", nil); rec.Header().Get("Location") != "/console/reconcile?msg=reconcile_done" {
			t.Fatalf("run now: %d %q", rec.Code, rec.Header().Get("Location"))
		}
		page := b.do("GET", "/console/reconcile?msg=reconcile_done", nil, nil).Body.String()
		for _, want := range []string{"Reconcile run finished.", `<td class="run-ok">ok</td>`, "expired_pending", "test-host"} {
			if !strings.Contains(page, want) {
				t.Errorf("reconcile page lacks %q", want)
			}
		}
		if dash := b.do("GET", "/console/", nil, nil).Body.String(); !strings.Contains(dash, "found 1, fixed 1, errors 0") {
			t.Errorf("dashboard lacks the last run's totals")
		}
		env.runner.mu.Lock()
		env.runner.busy = true
		env.runner.mu.Unlock()
		if rec := b.post("/console/reconcile/run", nil); rec.Header().Get("Location") != "/console/reconcile?msg=reconcile_busy" {
			t.Errorf("run now while busy: %d %q", rec.Code, rec.Header().Get("Location"))
		}
	})

	t.Run("no reconcile runner", func(t *testing.T) {
		bare := *env
		bare.e = echo.New()
		RegisterConsole(bare.e, ConsoleDeps{Engine: env.engine, DB: env.db, Hub: env.hub})
		nb := &browser{env: &bare, cookies: b.cookies, csrf: b.csrf, ip: b.ip}
		if page := nb.do("GET", "/console/reconcile", nil, nil); page.Code != 200 || !strings.Contains(page.Body.String(), `id="reconcile-unavailable"`) {
			t.Errorf("reconcile page without a runner: %d", page.Code)
		}
		if dash := nb.do("GET", "/console/", nil, nil).Body.String(); !strings.Contains(dash, "not available") {
			t.Errorf("dashboard without a runner does not say so")
		}
		if rec := nb.post("/console/reconcile/run", nil); rec.Code != http.StatusNotFound {
			t.Errorf("run now without a runner: %d, want 404", rec.Code)
		}
	})

	t.Run("audit log pages", func(t *testing.T) {
		for i := range listPageSize + 5 {
			if err := env.db.AddAudit(ctx, core.AuditEntry{At: time.Now(), Staff: "filler", Action: "filler", Target: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		first := b.do("GET", "/console/audit", nil, nil).Body.String()
		m := regexp.MustCompile(`href="/console/audit\?before=(\d+)"`).FindStringSubmatch(first)
		if m == nil || strings.Count(first, "<tr>") != listPageSize+1 {
			t.Fatalf("first page: %d rows, older link %v", strings.Count(first, "<tr>")-1, m)
		}
		older := b.do("GET", "/console/audit?before="+m[1], nil, nil).Body.String()
		if !strings.Contains(older, "logged in") || strings.Contains(older, `>54<`) {
			t.Errorf("older page does not continue where the first ended")
		}

		// Filtered by person and action, paged within the filter; the
		// target of an order's entry links to the order.
		o := env.place(77, "C-3")
		if err := env.db.AddAudit(ctx, core.AuditEntry{At: time.Now(), Staff: "ann", Action: core.AuditExtendHold,
			Target: "order:" + o.OrderNo, Detail: map[string]any{"minutes": 5, "outcome": "extended"}}); err != nil {
			t.Fatal(err)
		}
		mine := b.do("GET", "/console/audit?staff=ann", nil, nil).Body.String()
		if strings.Count(mine, "<tr>") != 2 || !strings.Contains(mine, `href="/console/orders/`+o.OrderNo+`"`) ||
			!strings.Contains(mine, "<dd>extended</dd>") {
			t.Errorf("audit filtered by ann: %d rows, want 1 with a link to the order and readable detail", strings.Count(mine, "<tr>")-1)
		}
		if byOrder := b.do("GET", "/console/audit?order="+o.OrderNo, nil, nil).Body.String(); strings.Count(byOrder, "<tr>") != 2 {
			t.Errorf("audit filtered by order: %d rows, want 1", strings.Count(byOrder, "<tr>")-1)
		}
		fillers := b.do("GET", "/console/audit?action=filler&staff=filler", nil, nil).Body.String()
		m = regexp.MustCompile(`href="/console/audit\?(action=filler&amp;before=\d+&amp;staff=filler)"`).FindStringSubmatch(fillers)
		if m == nil || strings.Count(fillers, "<tr>") != listPageSize+1 || strings.Contains(fillers, "ann") {
			t.Fatalf("filler filter: %d rows, older link %v", strings.Count(fillers, "<tr>")-1, m)
		}
		if rest := b.do("GET", "/console/audit?"+html.UnescapeString(m[1]), nil, nil).Body.String(); strings.Count(rest, "<tr>") != 6 {
			t.Errorf("second page of the filler filter: %d rows, want 5", strings.Count(rest, "<tr>")-1)
		}
	})
}

func TestConsoleLanguage(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleOps)
	zh := http.Header{"Accept-Language": {"zh-CN,zh;q=0.9,en;q=0.8"}}
	if body := b.do("GET", "/console/holds", nil, zh).Body.String(); !strings.Contains(body, "待支付锁座") || !strings.Contains(body, `<html lang="zh-CN">`) {
		t.Fatalf("Accept-Language zh: no Chinese page")
	}
	rec := b.do("GET", "/console/lang?to=en&next=/console/holds", nil, zh)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/console/holds" || b.cookies[langCookie].Value != "en" {
		t.Fatalf("switch: %d %q %v", rec.Code, rec.Header().Get("Location"), b.cookies[langCookie])
	}
	if body := b.do("GET", "/console/holds", nil, zh).Body.String(); !strings.Contains(body, "Pending holds") {
		t.Fatalf("lang cookie does not override Accept-Language")
	}
	if body := env.browser().do("GET", "/console/login", nil, zh).Body.String(); !strings.Contains(body, "登录") {
		t.Errorf("login page ignores Accept-Language")
	}
}

// TestSeatEventsStream reads the seat map's event stream over a real
// connection: the grid first, then a button per changed seat.
func TestSeatEventsStream(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleBoxOffice)
	srv := httptest.NewServer(env.e)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/console/shows/%d/events", srv.URL, env.show.ID), nil)
	req.Header.Set("Accept", "text/event-stream")
	req.AddCookie(b.cookies[sessionCookie])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := sseEvents(resp.Body, 10)
	next := func() string {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			return ev
		case <-ctx.Done():
			t.Fatal("no event in time")
		}
		return ""
	}
	first := next()
	if !strings.HasPrefix(first, "event: seats\ndata: ") || !strings.Contains(first, `id="seat-grid"`) ||
		!strings.Contains(first, `hx-swap-oob="true"`) || strings.Count(first, `,"available"`) != 12 {
		t.Fatalf("first event is not the grid: %.400s", first)
	}
	o := env.place(5, "A-3")
	ev := next()
	if !strings.Contains(ev, `id="seat-A-3" class="locked"`) || !strings.Contains(ev, `data-order="`+o.OrderNo+`"`) ||
		!strings.Contains(ev, `hx-swap-oob="true"`) || strings.Contains(ev, "seat-grid") {
		t.Fatalf("place: event %q", ev)
	}
	// Each seats event is followed by its change, for the page's live
	// parts (live.js).
	if ev, want := next(), `event: change`+"\n"+`data: {"show":`+strconv.FormatInt(env.show.ID, 10)+`,"seats":["A-3"],"state":"locked","order":"`+o.OrderNo+`"}`; ev != want {
		t.Fatalf("place: change event %q, want %q", ev, want)
	}
	env.pay(o)
	if ev := next(); !strings.Contains(ev, `id="seat-A-3" class="sold"`) {
		t.Fatalf("pay: event %q", ev)
	}
	if ev := next(); !strings.HasPrefix(ev, "event: change\n") || !strings.Contains(ev, `"state":"sold"`) {
		t.Fatalf("pay: change event %q", ev)
	}
	env.hub.Close()
	select {
	case _, ok := <-events:
		for ok {
			_, ok = <-events
		}
	case <-ctx.Done():
		t.Fatal("stream did not end when the hub closed")
	}
}

func TestSeatHub(t *testing.T) {
	t.Run("fan out per show", func(t *testing.T) {
		h := NewSeatHub(nil, nil)
		a, b, other := h.Subscribe(1), h.Subscribe(1), h.Subscribe(2)
		seats := []string{"A-1", "A-2"}
		h.SeatsChanged(1, seats, core.SeatLocked, "SF1")
		seats[0] = "mutated" // the hub keeps its own copy
		for _, s := range []*SeatSubscription{a, b} {
			got := <-s.C
			if got.ShowID != 1 || got.SeatIDs[0] != "A-1" || got.State != core.SeatLocked || got.OrderNo != "SF1" {
				t.Errorf("got %+v", got)
			}
		}
		select {
		case c := <-other.C:
			t.Errorf("show 2 got show 1's change %+v", c)
		default:
		}
		a.Close()
		a.Close()
		h.SeatsChanged(1, []string{"A-3"}, core.SeatSold, "SF1")
		if _, ok := <-a.C; ok {
			t.Error("closed subscription still receives")
		}
		if got := <-b.C; got.SeatIDs[0] != "A-3" {
			t.Errorf("b got %+v", got)
		}
	})
	t.Run("slow subscriber is dropped, others are not held up", func(t *testing.T) {
		h := NewSeatHub(nil, nil)
		slow, fast := h.Subscribe(1), h.Subscribe(1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range fast.C {
			}
		}()
		for i := range subscriberBuffer + 1 {
			h.SeatsChanged(1, []string{fmt.Sprint("S", i)}, core.SeatLocked, "")
		}
		n := 0
		for range slow.C {
			n++
		}
		if n != subscriberBuffer {
			t.Errorf("slow subscriber got %d changes before being dropped, want %d", n, subscriberBuffer)
		}
		h.Close()
		<-done
		if _, ok := <-h.Subscribe(1).C; ok {
			t.Error("subscription on a closed hub is open")
		}
	})
	t.Run("relay reaches every instance", func(t *testing.T) {
		relay := &loopRelay{}
		one, two := NewSeatHub(relay, nil), NewSeatHub(relay, nil)
		relay.hubs = []*SeatHub{one, two}
		s1, s2 := one.Subscribe(9), two.Subscribe(9)
		one.SeatsChanged(9, []string{"C-1"}, core.SeatAvailable, "")
		for i, s := range []*SeatSubscription{s1, s2} {
			if got := <-s.C; got.SeatIDs[0] != "C-1" {
				t.Errorf("instance %d got %+v", i+1, got)
			}
		}
		relay.fail = true
		one.SeatsChanged(9, []string{"C-2"}, core.SeatAvailable, "")
		if got := <-s1.C; got.SeatIDs[0] != "C-2" {
			t.Errorf("local delivery when the relay fails: %+v", got)
		}
		select {
		case c := <-s2.C:
			t.Errorf("instance 2 got %+v through a failed relay", c)
		default:
		}
	})
}

// loopRelay stands in for Redis pub/sub: a publish reaches every hub.
type loopRelay struct {
	hubs []*SeatHub
	fail bool
}

func (r *loopRelay) Publish(_ context.Context, c SeatChange) error {
	if r.fail {
		return errors.New("relay down")
	}
	for _, h := range r.hubs {
		h.Deliver(c)
	}
	return nil
}

func TestStaffAdd(t *testing.T) {
	st := stacktest.Embedded(t)
	ctx := context.Background()
	var out strings.Builder
	if err := StaffAdd(ctx, st.DB, []string{"--role", "ops", "night-ops"}, &out); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^added night-ops \(ops\); password: (\S{20})\n$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("output %q", out.String())
	}
	s, hash, err := st.DB.StaffLogin(ctx, "night-ops")
	if err != nil || s.Role != access.RoleOps {
		t.Fatalf("account %+v, %v", s, err)
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(m[1])) != nil {
		t.Error("printed password does not match the stored hash")
	}
	if cost, _ := bcrypt.Cost([]byte(hash)); cost < bcrypt.DefaultCost {
		t.Errorf("bcrypt cost %d", cost)
	}
	for _, args := range [][]string{
		{"night-ops"},              // taken
		{"--role", "root", "x-y"},  // no such role
		{"Bad Name"},               // invalid username
		{},                         // no name
		{"a-b", "--role", "admin"}, // flags after the name
	} {
		if err := StaffAdd(ctx, st.DB, args, io.Discard); err == nil {
			t.Errorf("StaffAdd(%q) succeeded", args)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"售票处售票处", 4, "售票处售"}, // characters, not bytes: no split rune
		{"", 2, ""},
	} {
		if got := truncate(c.in, c.n); got != c.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
