package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
)

// clientRequestID is what we accept from a caller's X-Request-ID; anything
// else is replaced, so a hostile header cannot forge or flood log lines.
var clientRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// traceID takes the caller's X-Request-ID (or makes one), echoes it in the
// response and puts it into the request context for core and the logger.
func traceID() echo.MiddlewareFunc {
	return middleware.RequestIDWithConfig(middleware.RequestIDConfig{
		Generator: core.NewTraceID,
		RequestIDHandler: func(c echo.Context, id string) {
			if !clientRequestID.MatchString(id) {
				id = core.NewTraceID()
				c.Response().Header().Set(echo.HeaderXRequestID, id)
			}
			r := c.Request()
			c.SetRequest(r.WithContext(core.WithTraceID(r.Context(), id)))
		},
	})
}

// httpMetrics are the server's own collectors, beside the engine's.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series caches each (route, method, status)'s two series: a label
	// look-up hashes and compares every value, on every request.
	series sync.Map // seriesKey → httpSeries
}

type seriesKey struct {
	route, method string
	status        int
}

type httpSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// observe counts one answered request and its latency.
func (m *httpMetrics) observe(route, method string, status int, latency time.Duration) {
	k := seriesKey{route, method, status}
	v, ok := m.series.Load(k)
	if !ok {
		v, _ = m.series.LoadOrStore(k, httpSeries{m.requests.WithLabelValues(route, method, strconv.Itoa(status)),
			m.duration.WithLabelValues(route)})
	}
	s := v.(httpSeries)
	s.requests.Inc()
	s.duration.Observe(latency.Seconds())
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatflow_http_requests_total", Help: "HTTP requests, by route, method and status."},
			[]string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "seatflow_http_request_duration_seconds", Help: "HTTP request latency, by route.",
			Buckets: prometheus.DefBuckets}, []string{"route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// serverErrors are the 5xx statuses SeatFlow answers with (errors.go).
var serverErrors = []string{strconv.Itoa(http.StatusInternalServerError), strconv.Itoa(http.StatusServiceUnavailable)}

// zero creates, at 0, the latency series of every route and the 5xx series
// of every route and method, so that the first server error shows in
// rate() and a 5xx alert has series from the first scrape. Successes and
// client errors get their series with their first request.
func (m *httpMetrics) zero(routes []*echo.Route) {
	for _, r := range routes {
		if !countedMethod(r.Method) {
			continue // echo's own entries (route-not-found handlers)
		}
		m.duration.WithLabelValues(r.Path)
		for _, status := range serverErrors {
			m.requests.WithLabelValues(r.Path, r.Method, status)
		}
	}
}

// countedMethod reports the methods the request counter labels by name;
// any other is counted as "other".
func countedMethod(method string) bool {
	switch method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return true
	}
	return false
}

// quietRoute reports the routes polled by probes and scrapers; their
// successes would drown the log at info level.
func quietRoute(route string) bool {
	switch route {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return false
}

// requestLog logs and counts every request once it is answered. Errors are
// written by the error handler first (HandleError), so the status is final.
func requestLog(logger *slog.Logger, m *httpMetrics) echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		HandleError:  true,
		LogLatency:   true,
		LogMethod:    true,
		LogURIPath:   true,
		LogRoutePath: true,
		LogStatus:    true,
		LogError:     true,
		LogRemoteIP:  true,
		// The request's own context, before any deadline wraps it: only
		// its cancellation means the client went away.
		BeforeNextFunc: func(c echo.Context) { c.Set(contextKeyClientCtx, c.Request().Context()) },
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			if clientGone(c) {
				v.Status = statusClientClosed
			}
			// Labels come from the route table, not the request, so a
			// scanner cannot blow up the number of series.
			route, method := v.RoutePath, v.Method
			if route == "" {
				route = "unmatched"
			}
			if !countedMethod(method) {
				method = "other"
			}
			m.observe(route, method, v.Status, v.Latency)

			ctx := c.Request().Context()
			// 4xx stay at info: client mistakes and lost seat races are
			// business as usual. A client that left (499, as nginx logs
			// it) is not news, and no 5xx.
			level := slog.LevelInfo
			switch {
			// A shed request is protection working, tens of thousands a
			// second in a rush: counted in seatflow_shed_total, not news.
			case v.Status == statusClientClosed, errors.Is(v.Error, errOverloaded):
				level = slog.LevelDebug
			case v.Status >= 500:
				level = slog.LevelError
			case v.Status < 400 && quietRoute(route):
				level = slog.LevelDebug
			}
			if !logger.Enabled(ctx, level) {
				return nil
			}
			attrs := []slog.Attr{
				slog.String("method", v.Method),
				slog.String("path", redactedPath(v.URIPath)),
				slog.Int("status", v.Status),
				slog.Float64("latency_ms", float64(v.Latency.Microseconds())/1000),
				slog.String("remote_ip", v.RemoteIP),
			}
			if v.Error != nil {
				attrs = append(attrs, slog.String("err", v.Error.Error()))
			}
			logger.LogAttrs(ctx, level, "request", attrs...)
			return nil
		},
	})
}

// statusClientClosed is what the log and metrics record for a request whose
// client disconnected before it was answered.
const statusClientClosed = 499

const contextKeyClientCtx = "client_ctx"

// clientGone reports whether the client closed the connection (or gave up
// on the request) while it was being served.
func clientGone(c echo.Context) bool {
	ctx, ok := c.Get(contextKeyClientCtx).(context.Context)
	return ok && errors.Is(ctx.Err(), context.Canceled)
}

// recoverPanics turns a handler panic into a logged 500 instead of a dropped
// connection.
func recoverPanics(logger *slog.Logger) echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			logger.ErrorContext(c.Request().Context(), "handler panic", "err", err, "stack", string(stack))
			return fmt.Errorf("panic: %w", err)
		},
	})
}

// bearerAuth admits requests carrying "Authorization: Bearer <token>" (the
// metrics token). The comparison is constant-time so the token cannot be
// guessed byte by byte.
func bearerAuth(token Secret) echo.MiddlewareFunc {
	want := []byte(token.Reveal())
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			scheme, got, ok := strings.Cut(c.Request().Header.Get(echo.HeaderAuthorization), " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") ||
				subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="seatflow"`)
				return errUnauthorized
			}
			return next(c)
		}
	}
}

// apiHeaders marks every API answer, errors included, as JSON to be taken
// as sent and never stored. It runs before routing (e.Pre), so the router's
// own 404 and 405 answers under /api/ carry the headers too.
func apiHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if strings.HasPrefix(c.Request().URL.Path, "/api/") {
			h := c.Response().Header()
			h.Set(echo.HeaderXContentTypeOptions, "nosniff")
			h.Set(echo.HeaderCacheControl, "no-store")
		}
		return next(c)
	}
}

// deadline bounds the work of one API call, so a hung store turns into a
// 503 instead of a pile of stuck requests.
func deadline(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx, cancel := context.WithTimeout(c.Request().Context(), d)
			defer cancel()
			c.SetRequest(c.Request().WithContext(ctx))
			return next(c)
		}
	}
}

// ContextKeyStoreDown is the echo context key under which every request
// finds what is down while a backing store does not answer: a string
// naming the stores ("database", "seat store", "delay queue", joined by
// ", "), absent when all answer. The console layout shows it as a banner.
const ContextKeyStoreDown = "store_down"

// Names of the backing stores, as the banner shows them.
const (
	storeDatabase   = "database"
	storeSeats      = "seat store"
	storeDelayQueue = "delay queue"
)

// Probe intervals: a slow look while all is well, a quick one while
// something is down, so the banner goes away soon after the store returns.
const (
	healthEvery     = 5 * time.Second
	healthEveryDown = time.Second
	healthTimeout   = 2 * time.Second
)

// storeHealth is what the last probe of the backing stores found. A request
// that fails for want of a store asks for a probe at once (kick), so the
// banner does not wait for the next tick; a probe that finds everything
// answering clears it: recovery needs no restart.
type storeHealth struct {
	down   atomic.Pointer[string] // nil while every store answers
	probed atomic.Int64           // when the last probe finished, Unix nanoseconds; 0 before the first
	kicks  chan struct{}
}

// healthFresh is how old the last probe may be for /readyz to answer from
// it: a probe every healthEvery taking up to healthTimeout, and a second
// to spare. Older (the watcher is stuck or not running) it pings itself.
const healthFresh = healthEvery + healthTimeout + time.Second

// recent returns what the last probe found, and false when there is no
// probe that finished within healthFresh of now.
func (h *storeHealth) recent(now time.Time) (down string, ok bool) {
	at := h.probed.Load()
	if at == 0 || now.Sub(time.Unix(0, at)) > healthFresh {
		return "", false
	}
	return h.Down(), true
}

func newStoreHealth() *storeHealth { return &storeHealth{kicks: make(chan struct{}, 1)} }

// Down returns what is down, or "" when every store answered the last probe.
func (h *storeHealth) Down() string {
	if p := h.down.Load(); p != nil {
		return *p
	}
	return ""
}

func (h *storeHealth) set(down []string) {
	defer h.probed.Store(time.Now().UnixNano())
	if len(down) == 0 {
		h.down.Store(nil)
		return
	}
	s := strings.Join(down, ", ")
	h.down.Store(&s)
}

// kick asks the watcher for a probe now; it never blocks.
func (h *storeHealth) kick() {
	select {
	case h.kicks <- struct{}{}:
	default:
	}
}

// watch probes until ctx ends. probe returns the names of the stores that
// do not answer.
func (h *storeHealth) watch(ctx context.Context, probe func(context.Context) []string) {
	for {
		pctx, cancel := context.WithTimeout(ctx, healthTimeout)
		h.set(probe(pctx))
		cancel()
		every := healthEvery
		if h.Down() != "" {
			every = healthEveryDown
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-h.kicks:
			t.Stop()
		case <-t.C:
		}
	}
}

// storeStatus puts what is down into every request's context (for the
// console's banner) and asks for a probe when a request fails because a
// store is unavailable.
func storeStatus(h *storeHealth) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if down := h.Down(); down != "" {
				c.Set(ContextKeyStoreDown, down)
			}
			err := next(c)
			// Console pages render their own error page and return nil,
			// so the status counts too. Shed work says nothing of the
			// stores: a rush must not become a probe per request.
			if (core.ErrorKind(err) == core.KindUnavailable && !errors.Is(err, errOverloaded)) ||
				(err == nil && c.Response().Status == http.StatusServiceUnavailable) {
				h.kick()
			}
			return err
		}
	}
}
