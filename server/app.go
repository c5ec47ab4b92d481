package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/delay/dbqueue"
	"seatflow/core/delay/rocketmq"
	"seatflow/core/seats"
	"seatflow/core/store"
)

// App is one running SeatFlow: its stores, the engine, the timeout consumer
// and the HTTP server. All wiring of adapters happens in NewApp.
type App struct {
	cfg    Config
	logger *slog.Logger

	DB      *store.DB
	engine  *core.Engine
	Handler *Server

	hub      *SeatHub
	embedded *seats.Embedded // nil with a real Redis
	redis    redis.UniversalClient
	queue    core.DelayQueue
	http     *http.Server
}

// NewApp opens and migrates the database, connects the seat store and the
// delay queue chosen by cfg, builds the engine and starts consuming timeout
// messages. The caller must Close the App; on error, whatever was opened is
// closed already.
func NewApp(ctx context.Context, cfg Config, logger *slog.Logger) (_ *App, err error) {
	a := &App{cfg: cfg, logger: logger}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.Close())
		}
	}()

	if a.DB, err = store.Open(ctx, cfg.DB); err != nil {
		return nil, fmt.Errorf("SEATFLOW_DB: %w", err)
	}
	if err = a.DB.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("SEATFLOW_DB: migrate: %w", err)
	}

	redisURL := cfg.Redis
	if redisURL == Embedded {
		if a.embedded, err = seats.StartEmbedded(); err != nil {
			return nil, err
		}
		redisURL = a.embedded.URL()
	}
	if a.redis, err = seats.Dial(ctx, redisURL); err != nil {
		return nil, fmt.Errorf("SEATFLOW_REDIS: %w", err)
	}

	if a.queue, err = openQueue(ctx, cfg, a.DB, logger); err != nil {
		return nil, fmt.Errorf("SEATFLOW_MQ: %w", err)
	}

	// One instance: seat changes reach only this process's browsers. Several
	// instances need a SeatRelay (Redis pub/sub) here.
	a.hub = NewSeatHub(nil, logger)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.engine, err = core.NewEngine(cfg.Engine, core.Deps{
		Store:    a.DB,
		Seats:    seats.New(a.redis),
		Queue:    a.queue,
		Clock:    core.SystemClock{},
		Logger:   logger,
		Metrics:  core.NewMetrics(reg),
		Notifier: a.hub,
	})
	if err != nil {
		return nil, err
	}

	// The in-process Redis starts empty every time. A real Redis keeps its
	// state and may be shared with other instances placing orders right
	// now, so it is never wiped here; reconcile repairs its drift.
	if cfg.Redis == Embedded {
		if err = a.engine.RebuildAllSeats(ctx); err != nil {
			return nil, fmt.Errorf("rebuild seat state from the database: %w", err)
		}
	}
	if err = a.queue.Consume(ctx, a.engine.HandleTimeout); err != nil {
		return nil, fmt.Errorf("start timeout consumer: %w", err)
	}

	a.Handler = NewServer(cfg, Deps{Engine: a.engine, DB: a.DB, Hub: a.hub, Registry: reg, Logger: logger})
	a.http = newHTTPServer(cfg.Addr, a.Handler, logger)
	// Live seat-map streams never finish on their own: end them when the
	// shutdown starts, or it would wait for them until its timeout.
	a.http.RegisterOnShutdown(a.hub.Close)
	return a, nil
}

// openQueue returns the DB-backed queue for "embedded", RocketMQ otherwise.
func openQueue(ctx context.Context, cfg Config, db *store.DB, logger *slog.Logger) (core.DelayQueue, error) {
	if cfg.IsEmbeddedMQ() {
		return dbqueue.New(db.X(), string(db.Dialect()), dbqueue.Options{
			Levels: cfg.Engine.Delay.Levels,
			Logger: logger,
		})
	}
	nameServer, err := rocketmq.ParseURL(cfg.MQ)
	if err != nil {
		return nil, err
	}
	return rocketmq.New(ctx, rocketmq.Config{
		NameServer: nameServer,
		Topic:      cfg.RocketMQTopic,
		Group:      cfg.RocketMQGroup,
		Logger:     logger,
	})
}

// Serve answers HTTP on cfg.Addr until ctx ends, then stops accepting and
// lets in-flight requests finish for up to cfg.ShutdownTimeout.
func (a *App) Serve(ctx context.Context) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", a.cfg.Addr)
	if err != nil {
		return fmt.Errorf("SEATFLOW_ADDR: %w", err)
	}
	a.logger.InfoContext(ctx, "listening", "addr", "http://"+ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- a.http.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	a.logger.Info("shutting down", "grace", a.cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.ShutdownTimeout)
	defer cancel()
	if err := a.http.Shutdown(sctx); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	return nil
}

// Close stops everything in dependency order: HTTP (no new work), the
// timeout consumer and queue, the seat store, then the database they all
// write to. It is safe on a partly built App.
func (a *App) Close() error {
	var errs []error
	if a.http != nil {
		errs = append(errs, a.http.Close())
	}
	if a.hub != nil {
		a.hub.Close()
	}
	if a.queue != nil {
		errs = append(errs, a.queue.Close())
	}
	if a.redis != nil {
		errs = append(errs, a.redis.Close())
	}
	if a.embedded != nil {
		a.embedded.Close()
	}
	if a.DB != nil {
		errs = append(errs, a.DB.Close())
	}
	return errors.Join(errs...)
}
