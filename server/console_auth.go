package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/web"
)

// staffSession is the logged-in member of staff of one request.
type staffSession struct {
	session access.Session
	staff   access.Staff
}

// newToken returns 32 random bytes, URL-safe encoded.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashToken is what the database keeps of a session token.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// loadSession attaches the request's session, if it has a live one, and
// records the use (console_sessions.go). It enforces nothing: requireRole
// does.
func (cn *console) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		token := cookieValue(c, sessionCookie)
		if token == "" {
			return next(c)
		}
		sess, staff, err := cn.liveSession(c.Request().Context(), hashToken(token))
		switch {
		case errors.Is(err, access.ErrNoSession):
		case err != nil:
			return err
		default:
			cn.touchSession(c.Request().Context(), sess)
			c.Set(contextKeyStaff, &staffSession{session: sess, staff: staff})
		}
		return next(c)
	}
}

func sessionOf(c echo.Context) *staffSession {
	s, _ := c.Get(contextKeyStaff).(*staffSession)
	return s
}

// requireRole is the one gate of every console page and action: a visitor
// without a session goes to the login page, a role without action gets
// 403, and a state-changing request must carry the session's CSRF token
// (form field or header).
func (cn *console) requireRole(action string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			s := sessionOf(c)
			if s == nil {
				return toLogin(c)
			}
			if !s.staff.Role.Can(action) {
				cn.Logger.WarnContext(c.Request().Context(), "console: forbidden", "staff", s.staff.Username,
					"role", s.staff.Role, "action", action, "path", c.Request().URL.Path)
				return cn.errorPage(c, http.StatusForbidden, "")
			}
			if !isSafeMethod(c.Request().Method) && !validCSRF(c, s.session.CSRFToken) {
				cn.Logger.WarnContext(c.Request().Context(), "console: bad CSRF token", "staff", s.staff.Username,
					"path", c.Request().URL.Path)
				return cn.errorPage(c, http.StatusForbidden, "error.csrf")
			}
			if missing, err := cn.missingSecondFactor(c, s); err != nil || missing {
				return err
			}
			return next(c)
		}
	}
}

func isSafeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// validCSRF takes the token from the header or the request body only: a
// token in the query string leaks through logs and Referer headers.
func validCSRF(c echo.Context, want string) bool {
	got := c.Request().Header.Get(csrfHeader)
	if got == "" {
		got = c.Request().PostFormValue(csrfField)
	}
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// isHTMX reports whether htmx sent the request (it swaps the answer into
// the page: a redirect is HX-Redirect, a refusal is said in the swap).
func isHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// toLogin sends a visitor without a session to the login page and back.
// HTMX requests get HX-Redirect, which makes htmx load the whole page
// instead of swapping a login form into a fragment.
func toLogin(c echo.Context) error {
	target := web.URL("/login?" + url.Values{"next": {c.Request().URL.RequestURI()}}.Encode())
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", target)
		return c.NoContent(http.StatusUnauthorized)
	}
	if c.Request().Header.Get(echo.HeaderAccept) == "text/event-stream" {
		return c.NoContent(http.StatusUnauthorized)
	}
	return c.Redirect(http.StatusSeeOther, target)
}

// safeNext keeps a post-login or language-switch redirect inside the
// console: anything else (another host, "//evil", "/\evil") goes home.
func safeNext(next string) string {
	if next == web.Prefix || (strings.HasPrefix(next, web.Prefix+"/") &&
		!strings.ContainsAny(next, "\\\r\n") && !strings.Contains(next, "//")) {
		return next
	}
	return web.URL("/")
}

func (cn *console) setCookie(c echo.Context, name, value, path string, maxAge time.Duration) {
	c.SetCookie(&http.Cookie{
		Name:     name,
		Value:    value,
		Path:     path,
		MaxAge:   int(maxAge / time.Second),
		HttpOnly: true,
		Secure:   c.Scheme() == "https",
		SameSite: http.SameSiteLaxMode,
	})
}

func (cn *console) clearCookie(c echo.Context, name, path string) {
	c.SetCookie(&http.Cookie{Name: name, Value: "", Path: path, MaxAge: -1, HttpOnly: true,
		Secure: c.Scheme() == "https", SameSite: http.SameSiteLaxMode})
}

// loginForm shows the login page. Before there is a session, CSRF on the
// login form itself is stopped with a double-submit token: a cookie and a
// hidden field that must match.
func (cn *console) loginForm(c echo.Context) error {
	if sessionOf(c) != nil {
		return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
	}
	return cn.renderLogin(c, http.StatusOK, web.LoginData{Next: c.QueryParam("next")})
}

func (cn *console) renderLogin(c echo.Context, status int, d web.LoginData) error {
	d.Token = newToken()
	cn.setCookie(c, loginCookie, d.Token, web.URL("/login"), time.Hour)
	p := cn.page(c, "login.title", "")
	return render(c, status, web.LoginPage(p, d))
}

// dummyHash is a bcrypt hash (of random bytes nobody knows) at the default
// cost: an unknown username is checked against it, so a failed login takes
// as long whether or not the account exists.
const dummyHash = "$2a$10$gmS.mqVXNsZkLPDSDTeVyeRlZ35UfaxT6qx0q6ZG/XykjOn423YW6"

func (cn *console) login(c echo.Context) error {
	ctx := c.Request().Context()
	name, nameValid := access.LoginName(c.FormValue("username"))
	// Bounded: a failed login writes the name into the audit log.
	username := truncate(name, 64)
	d := web.LoginData{Username: username, Next: c.FormValue("next")}
	if !formTokenValid(c, loginCookie) {
		d.Error = "login.expired"
		return cn.renderLogin(c, http.StatusForbidden, d)
	}
	// Addresses count by network: one machine may have a whole IPv6 /64.
	ip := core.ClientNet(c.RealIP(), cn.IPv6Prefix)
	// Three limits: one address guessing one account, one address spraying
	// many accounts, many addresses guessing one account. The last two
	// count failures only, so a shared office address can still log in.
	if !cn.limiter.allow(ip+"|"+username) || cn.addrLimiter.over(ip) || cn.accountLimiter.over(username) {
		return cn.throttled(c, d, loginTryWindow)
	}
	// Password hashing is what a flood of logins costs the whole server:
	// beyond a few at once, refuse before hashing anything.
	select {
	case cn.hashSlots <- struct{}{}:
		defer func() { <-cn.hashSlots }()
	default:
		return cn.throttled(c, d, time.Second)
	}
	// A name in another spelling is no account's: not even looked up.
	staff, hash, err := access.Staff{}, "", error(access.ErrStaffNotFound)
	if nameValid {
		staff, hash, err = cn.DB.StaffLogin(ctx, username)
	}
	if err != nil && !errors.Is(err, access.ErrStaffNotFound) {
		return err
	}
	active := err == nil && !staff.Disabled
	if !active {
		hash = dummyHash
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(c.FormValue("password"))) != nil || !active {
		cn.addrLimiter.allow(ip)
		cn.accountLimiter.allow(username)
		cn.audit(c, core.AuditEntry{Staff: username, Action: core.AuditLoginFailed})
		d.Error = "login.failed"
		return cn.renderLogin(c, http.StatusUnauthorized, d)
	}
	cn.limiter.reset(ip + "|" + username)
	if f, ok, err := cn.DB.TOTP(ctx, staff.ID); err != nil {
		return err
	} else if ok && f.Confirmed() {
		if now := cn.Clock.Now(); f.Locked(now) {
			return cn.secondFactorLocked(c, f, now)
		}
		return cn.askForCode(c, staff, d.Next)
	}
	return cn.startSession(c, staff, d.Next)
}

// startSession logs staff in: a new session, its cookie, the audit line,
// and on to next.
func (cn *console) startSession(c echo.Context, staff access.Staff, next string) error {
	ctx, ip := c.Request().Context(), c.RealIP()
	now := cn.Clock.Now()
	token := newToken()
	sess := access.Session{TokenHash: hashToken(token), StaffID: staff.ID, CSRFToken: newToken(),
		CreatedAt: now, ExpiresAt: now.Add(sessionTTL), IP: ip, UserAgent: truncate(c.Request().UserAgent(), 255)}
	if err := cn.DB.CreateSession(ctx, sess); err != nil {
		return err
	}
	// Housekeeping: logins are rare, so they can afford to sweep old sessions.
	if _, err := cn.DB.DeleteExpiredSessions(ctx, now); err != nil {
		cn.Logger.WarnContext(ctx, "console: purging expired sessions", "err", err)
	}
	cn.setCookie(c, sessionCookie, token, web.Prefix, sessionTTL)
	cn.clearCookie(c, loginCookie, web.URL("/login"))
	c.Set(contextKeyStaff, &staffSession{session: sess, staff: staff})
	cn.audit(c, core.AuditEntry{Action: core.AuditLogin})
	to := safeNext(next)
	if !staff.Role.Can(access.ActView) && to == web.URL("/") {
		to = web.URL("/door") // gate staff have no dashboard
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// formTokenValid is the CSRF check of a form posted without a session (the
// login page, a reset link's page): posted from this site, and its hidden
// token equal to the double-submit cookie named cookie.
func formTokenValid(c echo.Context, cookie string) bool {
	want := cookieValue(c, cookie)
	return sameOriginPost(c.Request()) && want != "" &&
		subtle.ConstantTimeCompare([]byte(want), []byte(c.Request().PostFormValue(csrfField))) == 1
}

// sameOriginPost refuses a login posted from another site: a cookie set
// by a sibling subdomain could defeat the double-submit token alone.
// Browsers send Sec-Fetch-Site, older ones at least Origin; a request
// with neither (not a browser) is left to the token.
func sameOriginPost(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// throttled answers a login refused by a limit: 429, and when to retry.
func (cn *console) throttled(c echo.Context, d web.LoginData, retryAfter time.Duration) error {
	c.Response().Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	d.Error = "login.throttled"
	return cn.renderLogin(c, http.StatusTooManyRequests, d)
}

func (cn *console) logout(c echo.Context) error {
	s := sessionOf(c)
	if err := cn.DB.DeleteSession(c.Request().Context(), s.session.TokenHash); err != nil {
		return err
	}
	cn.streams.endSession(s.session.TokenHash)
	cn.audit(c, core.AuditEntry{Action: core.AuditLogout})
	cn.clearCookie(c, sessionCookie, web.Prefix)
	return c.Redirect(http.StatusSeeOther, web.URL("/login"))
}

// switchLang keeps the chosen language in a cookie for a year.
func (cn *console) switchLang(c echo.Context) error {
	if l, ok := web.ParseLang(c.QueryParam("to")); ok {
		cn.setCookie(c, langCookie, string(l), web.Prefix, 365*24*time.Hour)
	}
	return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
}

// audit records a staff action: who (the session's staff unless the entry
// names someone, as a failed login does), when, from where. A failure to
// record is logged; the action it describes has already happened.
// staffAction is who asks for a change the engine audits in the change's
// own transaction (force-cancel, extend, case steps, refunds).
func staffAction(c echo.Context) *core.StaffAction {
	s := sessionOf(c)
	return &core.StaffAction{Staff: s.staff.Username, Role: s.staff.Role, IP: c.RealIP()}
}

func (cn *console) audit(c echo.Context, a core.AuditEntry) {
	if s := sessionOf(c); s != nil && a.Staff == "" {
		a.Staff, a.Role = s.staff.Username, s.staff.Role
	}
	a.At = cn.Clock.Now()
	a.IP = c.RealIP()
	ctx := c.Request().Context()
	if err := cn.DB.AddAudit(ctx, a); err != nil {
		cn.Logger.ErrorContext(ctx, "console: audit log write failed", "action", a.Action, "staff", a.Staff, "err", err)
	}
}

// truncate keeps the first n characters of s: the column widths of the
// console's tables are in characters.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// loginLimiter counts login attempts per key (address and username) in
// fixed windows: at most max tries per window. It lives in memory, so each
// instance counts on its own; the limit per instance is what bounds a
// password-guessing run.
type loginLimiter struct {
	max    int
	window time.Duration
	clock  core.Clock

	mu    sync.Mutex
	tries map[string]*tryWindow
}

type tryWindow struct {
	start time.Time
	n     int
}

// pruneAt is the size past which expired windows are swept, so keys made
// up by a scanner do not pile up.
const pruneAt = 10_000

func newLoginLimiter(max int, window time.Duration, clock core.Clock) *loginLimiter {
	return &loginLimiter{max: max, window: window, clock: clock, tries: map[string]*tryWindow{}}
}

// allow counts one try for key and reports whether it is within the limit.
func (l *loginLimiter) allow(key string) bool {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.tries) >= pruneAt {
		for k, w := range l.tries {
			if now.Sub(w.start) >= l.window {
				delete(l.tries, k)
			}
		}
	}
	w := l.tries[key]
	if w == nil || now.Sub(w.start) >= l.window {
		w = &tryWindow{start: now}
		l.tries[key] = w
	}
	w.n++
	return w.n <= l.max
}

// over reports whether key has used up its tries in the current window,
// without counting one.
func (l *loginLimiter) over(key string) bool {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.tries[key]
	return w != nil && now.Sub(w.start) < l.window && w.n >= l.max
}

// reset forgets key's tries after a successful login.
func (l *loginLimiter) reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.tries, key)
}
