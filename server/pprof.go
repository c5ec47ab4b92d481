package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"
)

// The profiling listener (SEATFLOW_PPROF_ADDR): Go's runtime profiles of
// the running server (CPU, heap, goroutines, mutex waits), for finding
// where a busy instance spends its time, as BENCHMARKS.md does under load.
// It is a listener of its own, off by default and loopback only: a profile
// shows the process's internals, so it never shares the public address.

// validLoopbackAddr is validAddr on a loopback host.
func validLoopbackAddr(v string) error {
	if err := validAddr(v); err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(v)
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("want a loopback host:port such as 127.0.0.1:6060: profiles show the process's internals")
	}
	return nil
}

// pprofHandler serves the runtime's profiles under /debug/pprof/.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index) // and every named profile: heap, goroutine, mutex, ...
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return loopbackHostOnly(mux)
}

// loopbackHostOnly refuses requests whose Host is not a loopback name or
// address. A loopback listener alone is not enough: a page on another site
// can point its own name at 127.0.0.1 (DNS rebinding) and have a browser
// on this host read the profiles; such requests carry that name as Host.
func loopbackHostOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "profiles answer only to a loopback Host such as 127.0.0.1 or localhost", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header ("name[:port]") names this
// host's loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// servePprof answers profile requests on ln until stop, which returns once
// the listener is closed.
func (a *App) servePprof(ctx context.Context, ln net.Listener) (stop func()) {
	srv := &http.Server{Handler: pprofHandler(), ReadHeaderTimeout: 10 * time.Second}
	a.logger.InfoContext(ctx, "profiles listening", "addr", "http://"+ln.Addr().String()+"/debug/pprof/")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.ErrorContext(ctx, "profiles listener stopped", "err", err)
		}
	}()
	return func() {
		_ = srv.Close()
		<-done
	}
}
