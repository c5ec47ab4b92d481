package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"seatflow/core"
	"seatflow/core/till"
	"seatflow/web"
)

// routes is the whole URL space of SeatFlow, in one place.
func (s *Server) routes() {
	e := s.echo

	// Operations: no auth, so probes and scrapers need no credentials.
	e.GET("/healthz", s.handleHealthz)
	e.GET("/readyz", s.handleReadyz)
	metrics := echo.WrapHandler(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	if s.cfg.MetricsToken != "" {
		e.GET("/metrics", metrics, bearerAuth(s.cfg.MetricsToken))
	} else {
		e.GET("/metrics", metrics)
	}

	// JSON API for the ticketing front end and the payment gateway. The
	// middleware is per route, not on the group: a group's catch-all would
	// turn "wrong method" (405) into 404.
	// s.overload.limit (overload.go) comes first on every costly route: over
	// the limit of work in flight it answers 503 overloaded at once. Never
	// on the lane (laneRoute): probes, metrics, the contract, the payment
	// callback (counted, not shed: s.overload.count), the console; nor on
	// the waiting room's join and poll, POST /shows/:id/queue and
	// GET /queue/:ticket, which must answer in a rush.
	api := e.Group("/api/v1")
	auth := s.apiKeyAuth() // API keys and the scope each route needs: api_keys.go
	mw := []echo.MiddlewareFunc{s.overload.limit, auth, s.abuse.middleware,
		middleware.BodyLimit(apiBodyLimit), deadline(s.cfg.RequestTimeout)}
	// The contract (openapi.go): no key, as client generators read it.
	api.GET("/openapi.json", handleOpenAPI, apiHeaders)
	api.GET("/shows", s.handleShows, mw...)
	api.GET("/shows/:id/availability", s.handleAvailability, append([]echo.MiddlewareFunc{s.limitCached(s.availability)}, mw[1:]...)...)
	api.GET("/shows/:id/seats", s.handleSeats, append([]echo.MiddlewareFunc{s.limitCached(s.seatMaps)}, mw[1:]...)...)
	planMW := []echo.MiddlewareFunc{s.overload.limit, auth, s.abuse.middleware, middleware.BodyLimit(planBodyLimit),
		deadline(max(s.cfg.RequestTimeout, planTimeout))}
	api.POST("/shows", s.handleCreateShow, planMW...)
	api.GET("/shows/:id", s.handleGetShow, mw...)
	api.PATCH("/shows/:id", s.handleEditShow, mw...)
	api.PUT("/shows/:id/plan", s.handleReplacePlan, planMW...)
	api.GET("/shows/:id/best-available", s.handleGetBestRules, mw...)
	api.PUT("/shows/:id/best-available", s.handleSetBestRules, mw...)
	api.POST("/shows/:id/blocks", s.handleBlocks, mw...)
	api.DELETE("/shows/:id/blocks", s.handleBlocks, mw...)
	api.POST("/shows/:id/cancel", s.handleCancelShow, mw...)
	api.POST("/shows/:id/publish", s.handlePublishShow, mw...)
	// Placements have a limit of their own: they hold no DB connection
	// while they wait for the group commit (overload.go).
	api.POST("/orders", s.handlePlaceOrder, append([]echo.MiddlewareFunc{s.overload.limitPlace}, mw[1:]...)...)
	api.GET("/orders", s.handleSearchOrders, mw...)
	api.GET("/orders/:order_no", s.handleGetOrder, mw...)
	api.POST("/orders/:order_no/cancel", s.handleCancelOrder, mw...)
	api.POST("/orders/:order_no/extend", s.handleExtendOrder, mw...)
	if s.refunds != nil { // handler tests built without refunds have no refund route
		api.POST("/orders/:order_no/refund", s.handleRefundOrder, mw...)
		api.POST("/orders/:order_no/exchange", s.handleExchangeSeats, mw...)
	}
	// The gateway holds no API key: its callback is authenticated by its
	// HMAC signature alone (api_payments.go).
	api.POST("/payments/callback", s.handlePaymentCallback, s.overload.count,
		middleware.BodyLimit(apiBodyLimit), deadline(s.cfg.RequestTimeout))
	if s.room != nil { // servers built without one (handler tests) have no queue routes
		// Never shed (no s.overload.limit): joins and polls must answer in
		// a rush, and an operator must be able to pause one.
		queueMW := []echo.MiddlewareFunc{auth, s.abuse.middleware,
			middleware.BodyLimit(apiBodyLimit), deadline(s.cfg.RequestTimeout)}
		api.PUT("/shows/:id/queue", s.handlePutQueue, queueMW...)
		api.GET("/shows/:id/queue", s.handleGetQueue, queueMW...)
		api.POST("/shows/:id/queue", s.handleJoinQueue, queueMW...)
		api.GET("/shows/:id/queue/entries", s.handleQueueEntries, queueMW...)
		// A ticket is a signed bearer secret: no key, no abuse limit (a
		// forged one costs a signature check), no store before it is
		// verified (api_queue.go).
		api.GET("/queue/:ticket", s.handlePollQueue, deadline(s.cfg.RequestTimeout))
	}
	// The waiting list (api_waitlist.go).
	api.PUT("/shows/:id/waitlist", s.handlePutWaitlist, mw...)
	api.GET("/shows/:id/waitlist", s.handleGetWaitlist, mw...)
	api.POST("/shows/:id/waitlist", s.handleJoinWaitlist, mw...)
	api.GET("/waitlist/:entry", s.handleGetWaitEntry, mw...)
	api.DELETE("/waitlist/:entry", s.handleWithdrawWaitEntry, mw...)
	// Door scans (api_checkins.go).
	api.POST("/checkins", s.handleCheckin, mw...)
	api.POST("/checkins/undo", s.handleUndoCheckin, mw...)
	// An offline gate's batch is larger than any other request.
	api.POST("/checkins/sync", s.handleSyncCheckins, s.overload.limit, auth, s.abuse.middleware,
		middleware.BodyLimit(syncBodyLimit), deadline(s.cfg.RequestTimeout))
	api.GET("/shows/:id/tickets", s.handleTicketList, mw...)
	var recon ReconcileRunner
	if s.recon != nil { // servers built without one (handler tests) have no reconcile routes
		api.GET("/reconcile/runs", s.handleReconcileRuns, mw...)
		api.POST("/reconcile/runs", s.handleRunReconcile, mw...)
		recon = consoleReconcile{s.recon}
	}

	// Staff console (HTML, own sessions and error pages); see console.go.
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, web.URL("/")) })
	cd := ConsoleDeps{Engine: s.engine, DB: s.db, Hub: s.hub, Reconcile: recon, Logger: s.logger, Refunds: s.refunds, Checkins: s.checkins,
		SessionIdle: s.cfg.SessionIdle, SecondFactor: s.cfg.RequireSecondFactor, IPv6Prefix: s.cfg.RateLimits.IPv6Prefix,
		Registry: s.registry, Room: s.room, QueueWindow: s.cfg.queueConfig().Window}
	var tm *till.Metrics
	if s.registry != nil {
		tm = till.NewMetrics(s.registry)
	}
	// A negative tolerance, the only error, is refused by config.go.
	cd.Till, _ = till.New(s.db, core.SystemClock{}, s.cfg.TillToleranceCents, tm)
	if s.skew != nil {
		cd.ClockOffset, cd.ClockLimit = s.skew.Offset, s.cfg.MaxClockSkew
	}
	RegisterConsole(e, cd)
}
