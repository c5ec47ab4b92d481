// Package server is SeatFlow's HTTP side: the JSON API, health and metrics
// endpoints, the staff console, and the wiring of the binary (App). It
// depends on core, never the reverse. The URL space is laid out in
// routes.go (the console's pages in RegisterConsole); every API error is
// mapped to a status in errors.go.
package server

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/admission"
	"seatflow/core/checkin"
	"seatflow/core/reconcile"
	"seatflow/core/store"
)

// apiBodyLimit bounds API request bodies: the largest legitimate one (an
// order for a handful of seats) is a few hundred bytes.
const apiBodyLimit = "64K"

// syncBodyLimit bounds an offline gate's batch (POST /checkins/sync):
// checkin.MaxSyncScans scans of up to 10 seats each. The console's scan
// page sends the same batches (doorSyncBodyLimit).
const syncBodyLimit = "256K"

// maxClockSkew is how far a payment callback's timestamp may be from our
// clock; it limits how long a captured callback can be replayed.
const maxClockSkew = 5 * time.Minute

// Deps are what the handlers work with.
type Deps struct {
	Engine *core.Engine
	DB     *store.DB // console reads and staff accounts
	Hub    *SeatHub  // live seat maps; the engine's Notifier
	// Reconciler runs the repair checks on demand (API and console).
	Reconciler *reconcile.Reconciler
	// Refunds runs refunds of paid orders (API and console).
	Refunds *core.Refunds
	// Checkins admits tickets at the door; nil (handler tests) gets a desk
	// of its own with unregistered metrics.
	Checkins *checkin.Desk
	// Room is the waiting rooms (api_queue.go); nil (handler tests): no
	// queue routes, and no order needs an admission.
	Room *admission.Room
	// Registry is the private registry /metrics serves; the server
	// registers its HTTP metrics on it.
	Registry *prometheus.Registry
	Logger   *slog.Logger
	// health says which backing stores are down, for the console's banner;
	// nil (handler tests) sets no banner.
	health *storeHealth
	// skew is the clock offset to the database, for /readyz and the
	// dashboard; nil (handler tests) reports none.
	skew *clockSkew
}

// Server is the HTTP handler: echo plus the dependencies and settings the
// handlers use.
type Server struct {
	engine  *core.Engine
	db      *store.DB
	hub     *SeatHub
	recon   *reconcile.Reconciler
	refunds *core.Refunds
	// exchanges moves seats of paid orders (API and console); nil with
	// refunds.
	exchanges *core.Exchanges
	checkins  *checkin.Desk
	registry  *prometheus.Registry
	logger    *slog.Logger
	echo      *echo.Echo
	cfg       Config
	skew      *clockSkew
	abuse     *abuseLimits
	room      *admission.Room
	overload  *overload
	// seatMaps and availability are the storefront's reads of a show,
	// cached for SEATFLOW_SEAT_MAP_MAX_AGE (show_cache.go).
	seatMaps, availability *showCache
	health                 *storeHealth // nil (handler tests): /readyz pings the stores itself
}

// NewServer builds the handler with every route of routes.go.
func NewServer(cfg Config, d Deps) *Server {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = handleError
	e.IPExtractor = clientIPExtractor(cfg.TrustedProxies)
	e.SchemeExtractor = schemeExtractor(cfg.TrustedProxies)
	e.Pre(apiHeaders)
	s := &Server{engine: d.Engine, db: d.DB, hub: d.Hub, recon: d.Reconciler, refunds: d.Refunds, registry: d.Registry, logger: d.Logger, echo: e, cfg: cfg,
		skew: d.skew, abuse: newAbuseLimits(cfg.RateLimits, d.Registry), health: d.health, room: d.Room,
		overload: newOverload(cfg, d.DB.PoolSize(), d.Registry), seatMaps: newShowCache(cfg.SeatMapMaxAge, time.Now),
		availability: newShowCache(cfg.SeatMapMaxAge, time.Now)}
	if d.Refunds != nil {
		s.exchanges = core.NewExchanges(d.Engine, d.Refunds, core.NewCounter(d.Engine, d.DB))
	}
	if s.checkins = d.Checkins; s.checkins == nil {
		s.checkins = checkin.New(d.DB, core.SystemClock{}, nil)
	}
	hm := newHTTPMetrics(d.Registry)
	e.Use(traceID(), requestLog(d.Logger, hm), recoverPanics(d.Logger))
	if d.health != nil {
		e.Use(storeStatus(d.health))
	}
	s.routes()
	hm.zero(e.Routes())
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

// newHTTPServer sets every timeout, so a slow or idle client cannot hold a
// connection forever. WriteTimeout applies to every response: a streaming
// handler (the console's server-sent events) must lift it for its own
// request with http.NewResponseController(w).SetWriteDeadline(time.Time{}).
func newHTTPServer(addr string, h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}
