package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// The operations listener (SEATFLOW_OPS_LISTEN): /healthz, /readyz and
// /metrics on an address of their own, besides the API's. On the API's
// listener a probe in a rush waits behind the buyers' connections: in the
// kernel's accept queue, behind the connection cap and its reserve (the
// lane, connlimit.go); measured, /readyz answered there in 1.1-2.6 s at
// 10,000 buyers (BENCHMARKS.md, rush). Here it has an accept loop, a
// connection cap and an http.Server of its own, which the API's load never
// fills. The routes stay on the API's listener too: existing probes keep
// working.

// Bounds of the operations server: its clients are a few probes and
// scrapers, each request answered from memory (/readyz from the health
// watcher's last probe) or within readyTimeout when it pings the stores.
const (
	// opsMaxConns caps its open connections; one more waits in the
	// listen queue until one closes.
	opsMaxConns       = 32
	opsHeaderTimeout  = 2 * time.Second
	opsRequestTimeout = 5 * time.Second
	opsWriteTimeout   = readyTimeout + 2*time.Second // a /readyz that pings the stores, then its answer
)

// validOpsAddr is validAddr on an address other than the API's (api,
// SEATFLOW_ADDR): sharing it would fail to bind, or serve nothing apart.
func validOpsAddr(v, api string) error {
	if err := validAddr(v); err != nil {
		return err
	}
	if _, port, _ := net.SplitHostPort(v); v == api && port != "0" {
		return errors.New("the same address as SEATFLOW_ADDR: want a port of its own, such as 127.0.0.1:9091")
	}
	return nil
}

// opsRoute says whether the operations listener serves path.
func opsRoute(path string) bool {
	return path == "/healthz" || path == "/readyz" || path == "/metrics"
}

// opsHandler serves the operations routes through h, the API's handler:
// the same handlers, logging and metrics, and /metrics's token
// (SEATFLOW_METRICS_TOKEN) when one is set. Every other path is 404: the
// API and the console are not served here.
func opsHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !opsRoute(r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// newOpsServer is the operations listener's server. One request per
// connection, as probes connect: the cap then bounds requests in
// flight, and no idle kept-alive client can hold a place a probe needs.
func newOpsServer(h http.Handler, logger *slog.Logger) *http.Server {
	srv := &http.Server{
		Handler:           opsHandler(h),
		ReadHeaderTimeout: opsHeaderTimeout,
		ReadTimeout:       opsRequestTimeout,
		WriteTimeout:      opsWriteTimeout,
		MaxHeaderBytes:    8 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	srv.SetKeepAlivesEnabled(false)
	return srv
}

// serveOps answers the operations routes on ln until stop, which shuts
// the server down gracefully within ctx and returns once it has; failed
// reports a Serve that ended on its own.
func (a *App) serveOps(ctx context.Context, ln net.Listener) (failed <-chan error, stop func(context.Context) error) {
	srv := newOpsServer(a.Handler, a.logger)
	a.logger.InfoContext(ctx, "operations listening", "addr", "http://"+ln.Addr().String())
	served := make(chan error, 1)
	go func() {
		if err := srv.Serve(netutil.LimitListener(ln, opsMaxConns)); !errors.Is(err, http.ErrServerClosed) {
			served <- fmt.Errorf("SEATFLOW_OPS_LISTEN: %w", err)
		}
		close(served)
	}()
	return served, func(ctx context.Context) error {
		err := srv.Shutdown(ctx)
		<-served
		return err
	}
}
