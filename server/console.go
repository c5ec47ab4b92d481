package server

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/admission"
	"seatflow/core/checkin"
	"seatflow/core/store"
	"seatflow/core/text"
	"seatflow/core/till"
	"seatflow/static"
	"seatflow/web"
)

// ReconcileRunner is what the console needs from the reconcile package:
// the latest runs, newest first; one run by id; a run started from the
// console (trigger "manual"), repairing (RunNow) or report-only (DryRun).
// RunNow and DryRun fail with a core.KindConflict error when another run is
// in progress; Run with a core.KindNotFound one for an unknown id. The
// wiring adapts the reconcile package's types to web's.
type ReconcileRunner interface {
	RecentRuns(ctx context.Context, limit int) ([]web.ReconcileRun, error)
	Run(ctx context.Context, id int64) (web.ReconcileRun, error)
	RunNow(ctx context.Context) (web.ReconcileRun, error)
	DryRun(ctx context.Context) (web.ReconcileRun, error)
	// LastFullRun is the newest run that was not a sweep; false if none.
	LastFullRun(ctx context.Context) (web.ReconcileRun, bool, error)
}

// ConsoleDeps is what the console is built from. Reconcile may be nil (the
// reconcile page then says it is not available); Logger and Clock default
// to a discarding logger and the system clock.
type ConsoleDeps struct {
	Engine    *core.Engine
	DB        *store.DB
	Hub       *SeatHub
	Reconcile ReconcileRunner
	Logger    *slog.Logger
	Clock     core.Clock
	// Refunds runs the console's refunds; nil gets one-step refunds.
	Refunds *core.Refunds
	// Till runs the clerks' shifts; nil gets one with no tolerance.
	Till *till.Till
	// Checkins admits tickets at the door; nil gets a desk with
	// unregistered metrics.
	Checkins *checkin.Desk
	// ClockOffset is this instance's clock offset to the database, for the
	// dashboard; nil shows none.
	ClockOffset func() (time.Duration, bool)
	// ClockLimit is SEATFLOW_MAX_CLOCK_SKEW, the dashboard's threshold of
	// the offset; 0 shows none.
	ClockLimit time.Duration
	// SessionIdle ends a session unused this long; 0 is
	// access.DefaultSessionIdle.
	SessionIdle time.Duration
	// SecondFactor is SEATFLOW_REQUIRE_2FA.
	SecondFactor access.SecondFactorPolicy
	// Registry gets the console's metrics; nil keeps them unregistered.
	Registry prometheus.Registerer
	// IPv6Prefix is SEATFLOW_IPV6_PREFIX: failed logins count per address,
	// an IPv6 one by its network (core.ClientNet; 0: the default /64).
	IPv6Prefix int
	// Room is the waiting rooms (console_queue.go); nil: no queue pages.
	Room *admission.Room
	// QueueWindow is SEATFLOW_QUEUE_WINDOW; 0 is admission.DefaultWindow.
	QueueWindow time.Duration
}

// console holds the console's handlers.
type console struct {
	ConsoleDeps
	limiter *loginLimiter
	// addrLimiter and accountLimiter count failed logins per address and
	// per username; hashSlots bounds the password checks running at once.
	addrLimiter, accountLimiter *loginLimiter
	hashSlots                   chan struct{}
	streams                     *sessionStreams // open event streams, ended with their session
	cases                       *core.Cases     // the discrepancy case workflow
	counter                     *core.Counter   // counter sales
	exchanges                   *core.Exchanges // seat exchanges of paid orders
	// totpFailures and totpLockouts count wrong second-factor codes and
	// the lockouts they caused (seatflow_totp_*_total).
	totpFailures, totpLockouts prometheus.Counter

	// keepAlive starts a stream's keep-alive ticks (each one re-checks
	// the session) and returns their stop.
	keepAlive func() (<-chan time.Time, func())
}

// Session and page settings.
const (
	sessionCookie   = "sf_session"
	loginCookie     = "sf_login"
	langCookie      = "sf_lang"
	sessionTTL      = 12 * time.Hour // one box-office shift
	holdsPageSize   = 50
	listPageSize    = 50
	maxNoteLen      = 500
	csrfHeader      = "X-CSRF-Token"
	csrfField       = "_csrf"
	loginTries      = 5
	loginTryWindow  = time.Minute
	loginAddrTries  = 20 // failed logins per address and window, any usernames
	loginUserTries  = 10 // failed logins per username and window, any addresses
	loginHashSlots  = 4  // password checks at once; bcrypt keeps a core busy
	sseKeepAlive    = 25 * time.Second
	contextKeyStaff = "console.staff"
)

// RegisterConsole mounts the staff console under /console on e. Every page
// goes through one role check (requireRole), which also checks the CSRF
// token of every POST. The seat maps' event streams end when deps.Hub is
// closed: close it when the HTTP server starts shutting down
// (http.Server.RegisterOnShutdown), or the shutdown waits for them.
func RegisterConsole(e *echo.Echo, deps ConsoleDeps) { registerConsole(e, deps) }

// registerConsole is RegisterConsole, returning the console for tests.
func registerConsole(e *echo.Echo, deps ConsoleDeps) *console {
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Clock == nil {
		deps.Clock = core.SystemClock{}
	}
	if deps.SessionIdle == 0 {
		deps.SessionIdle = access.DefaultSessionIdle
	}
	if deps.Refunds == nil {
		deps.Refunds, _ = core.NewRefunds(deps.Engine, deps.DB, 0) // a threshold of 0 is never refused
	}
	if deps.Till == nil {
		deps.Till, _ = till.New(deps.DB, deps.Clock, 0, nil) // a tolerance of 0 is never refused
	}
	if deps.Checkins == nil {
		deps.Checkins = checkin.New(deps.DB, deps.Clock, nil)
	}
	cn := &console{ConsoleDeps: deps, limiter: newLoginLimiter(loginTries, loginTryWindow, deps.Clock),
		streams:        newSessionStreams(),
		addrLimiter:    newLoginLimiter(loginAddrTries, loginTryWindow, deps.Clock),
		accountLimiter: newLoginLimiter(loginUserTries, loginTryWindow, deps.Clock),
		hashSlots:      make(chan struct{}, loginHashSlots),
		cases:          core.NewCases(deps.DB, deps.Clock), counter: core.NewCounter(deps.Engine, deps.DB),
		keepAlive: keepAliveTicker,
		totpFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "seatflow_totp_failures_total",
			Help: "Wrong second-factor (TOTP) codes entered, at sign-in or to turn the factor off."}),
		totpLockouts: prometheus.NewCounter(prometheus.CounterOpts{Name: "seatflow_totp_lockouts_total",
			Help: "Second factors locked after too many wrong codes."})}
	cn.exchanges = core.NewExchanges(deps.Engine, deps.Refunds, cn.counter)
	if deps.Registry != nil {
		deps.Registry.MustRegister(cn.totpFailures, cn.totpLockouts)
	}

	g := e.Group(web.Prefix, consoleGzip(), securityHeaders, cn.errorPages, limitBodies, cn.loadSession)
	g.GET("/static/*", echo.WrapHandler(http.StripPrefix(web.Prefix+"/static/", staticFiles(static.FS))))
	g.GET("/login", cn.loginForm)
	g.POST("/login", cn.login)
	g.GET("/lang", cn.switchLang)
	g.GET("", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, web.URL("/")) })

	view, cancel := cn.requireRole(access.ActView), cn.requireRole(access.ActForceCancel)
	disc, recon := cn.requireRole(access.ActDiscrepancies), cn.requireRole(access.ActReconcile)
	audit, staff := cn.requireRole(access.ActAudit), cn.requireRole(access.ActStaff)

	g.POST("/logout", cn.logout, cn.requireRole(access.ActOwnAccount))
	g.GET("/", cn.dashboard, view)
	g.GET("/holds", cn.holds, view)
	g.GET("/orders", cn.orders, view)
	g.GET("/orders.csv", cn.ordersCSV, view)
	g.GET("/orders/:no", cn.order, view)
	g.POST("/orders/:no/cancel", cn.forceCancel, cancel)
	g.POST("/orders/:no/extend", cn.extendHold, cn.requireRole(access.ActExtendHold))
	g.POST("/orders/:no/refund", cn.refundOrder, cn.requireRole(access.ActRefund))
	g.POST("/orders/:no/exchange", cn.exchangeSeats, cn.requireRole(access.ActRefund))
	approve := cn.requireRole(access.ActApproveRefund)
	g.POST("/refunds/:id/approve", cn.approveRefund, approve)
	g.POST("/refunds/:id/reject", cn.rejectRefund, approve)
	g.GET("/shows", cn.shows, view)
	setUp := cn.requireRole(access.ActShows)
	g.GET("/shows/new", cn.newShowForm, setUp)
	g.POST("/shows", cn.createShow, setUp)
	g.POST("/shows/:id/block", cn.blockSeats, setUp)
	g.POST("/shows/:id/unblock", cn.unblockSeats, setUp)
	g.GET("/shows/:id", cn.seatMap, view)
	g.GET("/shows/:id/events", cn.seatEvents, view)
	g.GET("/live", cn.liveEvents, view)
	g.GET("/shows/:id/seats/:seat", cn.seatPanel, view)
	cn.counterRoutes(g)
	cn.bestRulesRoutes(g)
	cn.showLifeRoutes(g)
	cn.tillRoutes(g)
	cn.deadLetterRoutes(g)
	cn.apiKeyRoutes(g)
	g.GET("/discrepancies", cn.discrepancies, disc)
	g.GET("/discrepancies/:id", cn.discrepancyCase, disc)
	g.POST("/discrepancies/:id/take", cn.takeCase, disc)
	g.POST("/discrepancies/:id/move", cn.moveCase, disc)
	g.POST("/discrepancies/:id/note", cn.noteCase, disc)
	g.GET("/reconcile", cn.reconcile, recon)
	g.POST("/reconcile/run", cn.runReconcile, recon)
	g.POST("/reconcile/dry-run", cn.dryRunReconcile, recon)
	g.GET("/reconcile/runs/:id", cn.reconcileRun, recon)
	g.POST("/reconcile/runs/:id/apply", cn.applyReconcile, recon)
	g.GET("/audit", cn.auditLog, audit)
	g.GET("/staff", cn.staffList, staff)
	g.POST("/staff", cn.staffAdd, staff)
	g.POST("/staff/:id/disable", cn.staffDisable, staff)
	g.POST("/staff/:id/enable", cn.staffEnable, staff)
	// Every role, the door too, keeps its own account: with
	// SEATFLOW_REQUIRE_2FA a door account must reach its 2FA set-up.
	own := cn.requireRole(access.ActOwnAccount)
	cn.sessionRoutes(g, own)
	cn.passwordRoutes(g, own, staff)
	cn.secondFactorRoutes(g, own, staff)
	cn.zoneRoutes(g, own)
	cn.mountReopen(g, view)
	cn.queueRoutes(g, view)
	cn.checkinRoutes(g, view)
	cn.waitlistRoutes(g, view)
	cn.inboxRoutes(g)
	cn.doorRoutes(g)
	return cn
}

// staticFiles serves the embedded assets. They change only with the binary,
// so browsers may keep them for a while. A folder is not found: its listing
// would tell a scanner what we ship.
func staticFiles(assets fs.FS) http.Handler {
	files := http.FileServerFS(assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if info, err := fs.Stat(assets, cmp.Or(name, ".")); err != nil || info.IsDir() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

// consolePolicy allows scripts, styles and connections from this origin
// only: no inline script, no eval, no framing.
const consolePolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", consolePolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		return next(c)
	}
}

// errorPages renders every error a console handler returns as a console
// page, in the console's language and style, instead of the API's JSON.
func (cn *console) errorPages(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err == nil || c.Response().Committed {
			return err
		}
		// The client left (a login given up, a page closed): nobody reads
		// the page, and it is no server fault. The request log records 499,
		// as statusOf does for the API. Only the cancellation itself: any
		// other failure is still the server's, client gone or not.
		if errors.Is(err, context.Canceled) {
			return c.NoContent(statusClientClosed)
		}
		status := consoleStatus(err)
		if status >= http.StatusInternalServerError {
			cn.Logger.ErrorContext(c.Request().Context(), "console request failed",
				"path", redactedPath(c.Request().URL.Path), "status", status, "err", err)
		}
		message := ""
		if errors.Is(err, text.ErrInvalid) {
			// Any form's free text: say what is wrong with it, not just "bad request".
			message = "error.invalid_text"
		}
		return cn.errorPage(c, status, message)
	}
}

// consoleStatus is statusOf for pages: the same kinds, the same statuses.
func consoleStatus(err error) int {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he.Code
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return kindStatus(ce.Kind)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// errorPage renders the console's page for status; text is a catalog key
// explaining more than the status does, or "".
func (cn *console) errorPage(c echo.Context, status int, text string) error {
	p := cn.page(c, "", "")
	return render(c, status, web.ErrorPage(p, web.ErrorData{Status: status, Text: text,
		RequestID: c.Response().Header().Get(echo.HeaderXRequestID)}))
}

// page is what the layout needs, from the request and its session.
func (cn *console) page(c echo.Context, title, nav string) web.Page {
	p := web.Page{
		Lang:  web.PickLang(cookieValue(c, langCookie), c.Request().Header.Get("Accept-Language")),
		Title: title,
		Nav:   nav,
		Now:   cn.Clock.Now(),
		Loc:   time.Local,
		Path:  c.Request().URL.RequestURI(),
	}
	if s, ok := c.Get(contextKeyStaff).(*staffSession); ok {
		p.Staff, p.CSRF = s.staff, s.session.CSRFToken
		// A zone that no longer loads (a zone database without it) falls
		// back to the server's; the zone page still names the stored one.
		if z, err := core.TimeZone(s.staff.TimeZone); err == nil && z != nil {
			p.Loc = z
		}
	}
	if msg := c.QueryParam("msg"); msg != "" && web.Known("notice."+msg) {
		p.Notice = "notice." + msg
	}
	p.StoreDown, _ = c.Get(ContextKeyStoreDown).(string)
	p.Inbox = cn.inboxCount(c.Request().Context(), p)
	return p
}

// render writes a component as a whole HTML page or fragment. It renders
// into a buffer first, so a failing component yields an error page rather
// than half a page.
func render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

func cookieValue(c echo.Context, name string) string {
	ck, err := c.Cookie(name)
	if err != nil {
		return ""
	}
	return ck.Value
}
