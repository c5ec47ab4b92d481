package server

import (
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/admission"
	"seatflow/web"
)

// poolReserve is the database connections API work never takes, so the
// console lane finds one at once in a rush: a clerk signing in (session
// and account reads) and force-cancelling, the health watcher's ping and a
// reconcile run. The derived limit of API work other than placements is
// the pool size (32 on MySQL, 8 reads on SQLite, SEATFLOW_DB_MAX_OPEN)
// minus this: such a request holds at most one connection at a time, so
// however the limit moves, it alone cannot exhaust the pool.
//
// Placements have a limit of their own, derived from the group commit
// (core.PlacementsInFlight): they wait in its queue holding no connection
// (their cached plan and in-memory or Redis seat lock need none), so a
// bound from the pool starved them. Measured on the embedded stack: with
// one limit of 4 (8 reads minus 4) a 1,000-buyer rush got 16,150 shed
// answers for 876 holds and sold out at 30 holds/s (BENCHMARKS.md, rush).
const poolReserve = 4

// overloadRetryAfter is what a shed request is asked to wait: short, as a
// slot frees within the latency objective.
const overloadRetryAfter = time.Second

// errOverloaded is the answer to work over the limit (concurrency or
// connections): 503 with Retry-After, at once.
var errOverloaded = &core.Error{Kind: core.KindUnavailable, Code: "overloaded",
	Message: "the server is at capacity; retry after Retry-After seconds", RetryAfter: overloadRetryAfter}

// Reasons a request is shed, the label of seatflow_shed_total.
const (
	shedConcurrency = "concurrency"
	shedConnections = "connections"
)

// overload is the always-on protection of the costly API routes: an
// adaptive limit of work in flight (core/admission/limiter.go), and the
// count of what it and the connection cap (connlimit.go) refuse.
type overload struct {
	limiter *admission.Limiter // API work but placements
	place   *admission.Limiter // POST /orders
	shed    *prometheus.CounterVec
	// admitted, when set (tests), runs in each admitted request before its
	// handler: a test holds requests in flight there.
	admitted func(echo.Context)
}

// maxInFlight is SEATFLOW_MAX_INFLIGHT, or derived from the pool size:
// the bound of API work other than placements.
func maxInFlight(cfg Config, poolSize int) int {
	if cfg.MaxInFlight > 0 {
		return cfg.MaxInFlight
	}
	return max(admission.DefaultMinLimit, poolSize-poolReserve)
}

// maxPlacements is SEATFLOW_MAX_INFLIGHT, or what the group commit takes
// in one round: the bound of placements in flight.
func maxPlacements(cfg Config) int {
	if cfg.MaxInFlight > 0 {
		return cfg.MaxInFlight
	}
	return core.PlacementsInFlight
}

// Values of the work label of the limiters' gauges.
const (
	workPlacements = "placements"
	workOther      = "other"
)

func newLimiter(cfg Config, most int) *admission.Limiter {
	// A setting under the default minimum is the operator's bound too.
	return admission.NewLimiter(admission.LimiterConfig{Objective: cfg.LatencyObjective,
		Min: min(admission.DefaultMinLimit, most), Max: most})
}

func newOverload(cfg Config, poolSize int, reg prometheus.Registerer) *overload {
	o := &overload{limiter: newLimiter(cfg, maxInFlight(cfg, poolSize)), place: newLimiter(cfg, maxPlacements(cfg)),
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "seatflow_shed_total",
			Help: "Requests refused with 503 overloaded, by reason: concurrency (a limit of API work in flight) or connections (the cap on open connections)."},
			[]string{"reason"})}
	o.shed.WithLabelValues(shedConcurrency)
	o.shed.WithLabelValues(shedConnections)
	reg.MustRegister(o.shed)
	for _, g := range []struct {
		name, help string
		value      func(admission.LimiterStats) float64
	}{
		{"seatflow_api_inflight", "API requests in flight under their adaptive limit, by work: placements or other.",
			func(s admission.LimiterStats) float64 { return float64(s.InFlight) }},
		{"seatflow_api_inflight_limit", "The adaptive limit of API requests in flight (between its bounds, driven by their p99 latency), by work: placements or other.",
			func(s admission.LimiterStats) float64 { return float64(s.Limit) }},
		{"seatflow_api_latency_p99_seconds", "p99 latency of the last 200 API requests admitted under the limit, by work: what drives it.",
			func(s admission.LimiterStats) float64 { return s.P99.Seconds() }},
	} {
		for work, l := range map[string]*admission.Limiter{workPlacements: o.place, workOther: o.limiter} {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: g.name, Help: g.help,
				ConstLabels: prometheus.Labels{"work": work}}, func() float64 { return g.value(l.Stats()) }))
		}
	}
	return o
}

// limit sheds a costly API request over the limit of API work other than
// placements; limitPlace, a placement over theirs.
func (o *overload) limit(next echo.HandlerFunc) echo.HandlerFunc { return o.limitBy(o.limiter, next) }

func (o *overload) limitPlace(next echo.HandlerFunc) echo.HandlerFunc {
	return o.limitBy(o.place, next)
}

// limitBy sheds a request over l with 503 overloaded, before any other
// work (auth included), and measures the ones it admits.
func (o *overload) limitBy(l *admission.Limiter, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		done, ok := l.Acquire()
		if !ok {
			o.shed.WithLabelValues(shedConcurrency).Inc()
			return errOverloaded
		}
		start := time.Now()
		defer func() { done(time.Since(start)) }()
		if o.admitted != nil {
			o.admitted(c)
		}
		return next(c)
	}
}

// count passes a request that must never be shed (the payment callback
// settles money already taken) but counts it as work in flight.
func (o *overload) count(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		done := o.limiter.Force()
		start := time.Now()
		defer func() { done(time.Since(start)) }()
		return next(c)
	}
}

// laneRoute says whether a request belongs to the lane that is never
// shed, by concurrency or by connections: probes, metrics, the contract,
// the payment callback, the waiting rooms and the staff console.
func laneRoute(path string) bool {
	switch path {
	case "/healthz", "/readyz", "/metrics", "/api/v1/openapi.json", "/api/v1/payments/callback":
		return true
	}
	if strings.HasPrefix(path, "/api/v1/queue/") || // the waiting room's polls and joins
		strings.HasPrefix(path, "/api/v1/shows/") && strings.HasSuffix(path, "/queue") {
		return true
	}
	return path == web.Prefix || strings.HasPrefix(path, web.Prefix+"/")
}
