package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/admission"
	"seatflow/core/checkin"
	"seatflow/core/delay/dbqueue"
	"seatflow/core/delay/rocketmq"
	"seatflow/core/reconcile"
	"seatflow/core/seats"
	"seatflow/core/store"
	"seatflow/core/webhook"
)

// App is one running SeatFlow: its stores, the engine, the timeout consumer
// and the HTTP server. All wiring of adapters happens in NewApp.
type App struct {
	cfg    Config
	logger *slog.Logger

	DB      *store.DB
	engine  *core.Engine
	Handler *Server

	hub     *SeatHub
	seats   seats.Interface       // in process with SEATFLOW_REDIS=embedded
	redis   redis.UniversalClient // nil with the embedded seat store
	queue   core.DelayQueue
	metrics *core.Metrics
	room    *admission.Room // the waiting rooms; their Store is the seat store's
	// overloaded says whether the API sheds work now (the limiter): mode
	// overload engages a queue only then. nil: never.
	overloaded func() bool
	Reconciler *reconcile.Reconciler
	Refunds    *core.Refunds
	// Checkins admits tickets at the door (API and console).
	Checkins *checkin.Desk
	registry *prometheus.Registry
	http     *http.Server
	conns    *connLimit // caps http's connections (connlimit.go)

	// webhooks sends the storefront's webhook events (nil without
	// SEATFLOW_WEBHOOK_URL); its counters exist either way, at 0.
	webhooks       *webhook.Dispatcher
	webhookMetrics *webhook.Metrics

	stopReconcile context.CancelFunc
	reconcileDone <-chan struct{}
	pruningDone   <-chan struct{} // the retention job; stopped by stopReconcile too
	roomDone      chan struct{}   // the admission loop; stopped by stopReconcile too

	relay      *RedisRelay // nil with the embedded seat store: one process, no one to relay to
	clock      core.Clock
	skew       *clockSkew // nil until NewApp
	health     *storeHealth
	stopHealth context.CancelFunc
	healthDone chan struct{}
}

// NewApp opens and migrates the database, connects the seat store and the
// delay queue chosen by cfg, builds the engine, starts consuming timeout
// messages and the reconcile scheduler. The caller must Close the App; on
// error, whatever was opened is closed already.
func NewApp(ctx context.Context, cfg Config, logger *slog.Logger) (_ *App, err error) {
	a, err := OpenApp(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.Close())
		}
	}()
	// A clock that is off judges every expiry wrong: refuse to serve.
	a.skew = newClockSkew(a.DB, a.clock, cfg.MaxClockSkew, a.registry, logger)
	if err = a.skew.checkAtStart(ctx); err != nil {
		return nil, err
	}
	queueName := core.DeadLetterRocketMQ // the label of the handling-time histogram
	if cfg.IsEmbeddedMQ() {
		queueName = core.DeadLetterDBQueue
	}
	if err = a.queue.Consume(ctx, a.engine.TimeoutHandler(queueName)); err != nil {
		return nil, fmt.Errorf("start timeout consumer: %w", err)
	}
	// The scheduler lives as long as the App, not as the ctx that built it.
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	a.stopReconcile, a.reconcileDone = stop, a.Reconciler.Start(rctx)
	a.pruningDone = a.Reconciler.StartPruning(rctx, cfg.retentionPolicy())
	if cfg.Webhook.URL != "" {
		if a.webhooks, err = webhook.New(a.DB, webhook.Options{URL: cfg.Webhook.URL, Secret: cfg.Webhook.Secret.Reveal(),
			Clock: a.clock, Logger: logger, Metrics: a.webhookMetrics}); err != nil {
			return nil, fmt.Errorf("SEATFLOW_WEBHOOK_URL: %w", err)
		}
		// Every commit that wrote events wakes it, whichever engine path
		// wrote them; events of other instances come with its poll.
		a.DB.OnWebhooksCommitted(a.webhooks.Wake)
		a.webhooks.Start(rctx)
	}
	if a.relay != nil {
		if err = a.relay.Start(ctx, a.hub.Deliver, a.hub.Resync); err != nil {
			return nil, fmt.Errorf("SEATFLOW_REDIS: %w", err)
		}
	}
	// Like the scheduler, the health watcher outlives ctx: Close stops it.
	a.health = newStoreHealth()
	storeDown := newStoreDownGauge(a.registry)
	hctx, stopHealth := context.WithCancel(context.WithoutCancel(ctx))
	a.stopHealth, a.healthDone = stopHealth, make(chan struct{})
	go func() {
		defer close(a.healthDone)
		var wg sync.WaitGroup
		wg.Go(func() { a.skew.watch(hctx) })
		a.health.watch(hctx, func(ctx context.Context) []string {
			down := a.probeStores(ctx)
			storeDown.set(down)
			return down
		})
		wg.Wait()
	}()

	a.Handler = NewServer(cfg, Deps{Engine: a.engine, DB: a.DB, Hub: a.hub, Reconciler: a.Reconciler,
		Refunds: a.Refunds, Checkins: a.Checkins, Room: a.room, Registry: a.registry, Logger: logger, health: a.health, skew: a.skew})
	a.http = newHTTPServer(cfg.Addr, a.Handler, logger)
	nofile, err := descriptorLimit()
	if err != nil {
		return nil, err
	}
	maxConns, err := connCap(cfg.MaxConns, nofile, storeDescriptors(a.DB, a.redis))
	if err != nil {
		return nil, err
	}
	a.conns = newConnLimit(maxConns, a.Handler.overload.shed.WithLabelValues(shedConnections), a.registry)
	a.http.ConnState = a.conns.track
	// The waiting rooms read the API's limiter: mode overload engages a
	// queue only while it sheds. One step before serving: which shows need
	// an admission is known before the first order arrives (Room.Required).
	a.overloaded = (&overloadSignal{limiters: []*admission.Limiter{a.Handler.overload.limiter, a.Handler.overload.place}, now: time.Now}).Overloaded
	if err := a.room.Step(ctx, a.clock.Now()); err != nil {
		logger.WarnContext(ctx, "waiting room step", "err", err)
	}
	room, roomDone := a.room, make(chan struct{})
	a.roomDone = roomDone
	go func() {
		defer close(roomDone)
		room.Run(rctx)
	}()
	// Live seat-map streams never finish on their own: end them when the
	// shutdown starts, or it would wait for them until its timeout.
	a.http.RegisterOnShutdown(a.hub.Close)
	return a, nil
}

// OpenApp connects every store and builds the engine and the reconciler,
// but consumes nothing and serves nothing: what one-shot commands need.
func OpenApp(ctx context.Context, cfg Config, logger *slog.Logger) (_ *App, err error) {
	a := &App{cfg: cfg, logger: logger, clock: cfg.Clock}
	if a.clock == nil {
		a.clock = core.SystemClock{}
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.Close())
		}
	}()

	if a.DB, err = store.OpenWith(ctx, cfg.DB, store.Options{MaxOpenConns: cfg.DBMaxOpen}); err != nil {
		return nil, fmt.Errorf("SEATFLOW_DB: %w", err)
	}
	if err = a.DB.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("SEATFLOW_DB: migrate: %w", err)
	}
	if err = a.openTOTPKeys(ctx); err != nil {
		return nil, err
	}

	// The embedded stack keeps seat state in this process: the Redis
	// store's rules without a Redis protocol, its scripts or its client.
	if cfg.Redis == Embedded {
		a.seats = seats.NewMemory()
	} else {
		if a.redis, err = seats.DialWith(ctx, cfg.Redis, seats.DialOptions{PoolSize: cfg.RedisPool,
			AllowEviction: cfg.RedisAllowEviction, Logger: logger}); err != nil {
			return nil, fmt.Errorf("SEATFLOW_REDIS: %w", err)
		}
		a.seats = seats.New(a.redis)
	}

	// The queues count their dead letters, so the metrics come first.
	a.registry = prometheus.NewRegistry()
	metrics := core.NewMetrics(a.registry)
	a.metrics = metrics
	if a.queue, err = openQueue(ctx, cfg, a.DB, logger, metrics.TimeoutDeadLetters); err != nil {
		return nil, err
	}

	// A real Redis may be shared by several instances: seat changes go
	// through its pub/sub, so every instance's browsers see every change.
	// The embedded seat store serves this process only: changes stay in it.
	var relay SeatRelay // a nil *RedisRelay in it would not be a nil SeatRelay
	if cfg.Redis != Embedded {
		// A single node or Sentinel's master is a *redis.Client; a cluster
		// has database 0 only.
		db := 0
		if c, ok := a.redis.(*redis.Client); ok {
			db = c.Options().DB
		}
		a.relay = NewRedisRelay(a.redis, SeatChannel(db), logger)
		relay = a.relay
	}
	a.hub = NewSeatHub(relay, logger)
	a.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		core.NewOverdueCollector(func(ctx context.Context) (int, error) {
			// Late only past what the delay levels allow (OverdueAfter): at
			// thousands of holds a second some are always a few
			// milliseconds past their expiry, and the alert must not see them.
			return a.DB.OverdueCount(ctx, time.Now().Add(-cfg.Engine.Delay.OverdueAfter()))
		}),
		webhook.NewBacklogCollector(a.DB.WebhookBacklog))
	a.webhookMetrics = webhook.NewMetrics(a.registry)
	a.engine, err = core.NewEngine(cfg.Engine, core.Deps{
		Store:    a.DB,
		Seats:    a.seats,
		Queue:    a.queue,
		Clock:    a.clock,
		Logger:   logger,
		Metrics:  metrics,
		Notifier: a.hub,
	})
	if err != nil {
		return nil, err
	}
	// Retention deletes a show's waiting room with its seat keys.
	if err = a.openRoom(cfg, logger); err != nil {
		return nil, err
	}
	a.Reconciler, err = reconcile.New(reconcile.Deps{Engine: a.engine, DB: a.DB, Seats: a.seats, Queues: a.room.Store(),
		Clock: a.clock, Logger: logger, Metrics: a.registry},
		reconcile.Options{Every: cfg.Reconcile.Every, SweepEvery: cfg.Reconcile.SweepEvery, Grace: cfg.Reconcile.Grace})
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	if a.Refunds, err = core.NewRefunds(a.engine, a.DB, cfg.RefundApprovalCents); err != nil {
		return nil, err
	}
	a.Checkins = checkin.New(a.DB, a.clock, a.registry)

	// The embedded seat store starts empty every time. A real Redis keeps its
	// state and may be shared with other instances placing orders right
	// now, so it is never wiped here; reconcile repairs its drift.
	// Only the shows whose keys retention keeps: not every show ever created.
	if cfg.Redis == Embedded {
		onSale, err := a.DB.ShowsOnSale(ctx, a.clock.Now().Add(-cfg.retentionPolicy().ShowGrace))
		if err == nil {
			err = a.engine.RebuildShows(ctx, onSale)
		}
		if err != nil {
			return nil, fmt.Errorf("rebuild seat state from the database: %w", err)
		}
	}
	return a, nil
}

// openRoom builds the waiting rooms: in process on the embedded stack, in
// the seat store's Redis otherwise (every instance shares the queue), with
// the admission keys of the configuration.
func (a *App) openRoom(cfg Config, logger *slog.Logger) error {
	keys, err := cfg.AdmissionKeys()
	if err != nil {
		return fmt.Errorf("SEATFLOW_ADMISSION_KEY: %w", err)
	}
	var store admission.Store = admission.NewMemory()
	if a.redis != nil {
		store = admission.NewRedis(a.redis)
	}
	q := cfg.queueConfig()
	backlog := newExpiryBacklog(a.metrics.CancelLateness, cfg.Engine.Delay.Slack, int64(q.BacklogBound))
	a.room = admission.NewRoom(store, keys, admission.RoomConfig{Tick: q.Tick, Controller: admission.ControllerConfig{
		Objective: q.Objective, MinRate: float64(q.MinRate), MaxRate: float64(q.MaxRate), InitialRate: float64(q.InitialRate)}},
		admission.Signals{Backlog: backlog.Backlog, Overloaded: func() bool { return a.overloaded != nil && a.overloaded() }},
		a.registry, logger)
	return nil
}

// Room is the App's waiting rooms, for one-shot commands and tests.
func (a *App) Room() *admission.Room { return a.room }

// probeStores returns the names of the backing stores that do not answer.
func (a *App) probeStores(ctx context.Context) []string {
	var down []string
	if a.DB.Ping(ctx) != nil {
		down = append(down, storeDatabase)
	}
	if a.seats.Ping(ctx) != nil {
		down = append(down, storeSeats)
	}
	if a.queue.Ping(ctx) != nil {
		down = append(down, storeDelayQueue)
	}
	return down
}

// Engine is the App's engine, for one-shot commands.
func (a *App) Engine() *core.Engine { return a.engine }

// openQueue returns the DB-backed queue for "embedded", RocketMQ otherwise.
// Its errors name the setting to fix. A failed New returns a typed nil,
// which must not reach the core.DelayQueue that Close later calls.
func openQueue(ctx context.Context, cfg Config, db *store.DB, logger *slog.Logger, deadLetters prometheus.Counter) (core.DelayQueue, error) {
	if cfg.IsEmbeddedMQ() {
		q, err := dbqueue.New(db.X(), string(db.Dialect()), dbqueue.Options{
			Levels:       cfg.Engine.Delay.Levels,
			Logger:       logger,
			MaxAttempts:  cfg.TimeoutMaxAttempts,
			Workers:      cfg.TimeoutWorkers,
			OnDeadLetter: func(core.DeadLetter) { deadLetters.Inc() },
		})
		if err != nil {
			return nil, fmt.Errorf("SEATFLOW_MQ=%s: %w", Embedded, err)
		}
		return q, nil
	}
	mqCfg, err := rocketmq.ParseURL(cfg.MQ)
	if err != nil {
		return nil, fmt.Errorf("SEATFLOW_MQ=%q: %w", redactURL(cfg.MQ), err)
	}
	mqCfg.Cluster = cfg.RocketMQCluster
	mqCfg.NoCreateTopics = !cfg.RocketMQCreateTopics
	mqCfg.Topic, mqCfg.Group, mqCfg.Logger = cfg.RocketMQTopic, cfg.RocketMQGroup, logger
	mqCfg.MaxAttempts = cfg.TimeoutMaxAttempts
	mqCfg.Workers = cfg.TimeoutWorkers
	// The broker's dead letters go to the same table as the DB queue's.
	mqCfg.OnDeadLetter = func(ctx context.Context, d core.DeadLetter) error {
		added, err := db.AddDeadLetter(ctx, d)
		if added {
			deadLetters.Inc()
		}
		return err
	}
	q, err := rocketmq.New(ctx, mqCfg)
	switch {
	case err == nil:
		return q, nil
	case errors.Is(err, rocketmq.ErrUnknownCluster):
		return nil, fmt.Errorf("SEATFLOW_ROCKETMQ_CLUSTER=%q: %w", cfg.RocketMQCluster, err)
	case errors.Is(err, rocketmq.ErrTopicMissing):
		return nil, fmt.Errorf("SEATFLOW_ROCKETMQ_CREATE_TOPICS=false: %w", err)
	}
	return nil, fmt.Errorf("SEATFLOW_MQ=%q: %w", redactURL(cfg.MQ), err)
}

// Serve answers HTTP on cfg.Addr (and the operations routes on
// cfg.OpsAddr when set) until ctx ends, then stops accepting and lets
// in-flight requests finish for up to cfg.ShutdownTimeout.
func (a *App) Serve(ctx context.Context) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", a.cfg.Addr)
	if err != nil {
		return fmt.Errorf("SEATFLOW_ADDR: %w", err)
	}
	var ops, profiles net.Listener
	if a.cfg.OpsAddr != "" {
		if ops, err = (&net.ListenConfig{}).Listen(ctx, "tcp", a.cfg.OpsAddr); err != nil {
			return errors.Join(fmt.Errorf("SEATFLOW_OPS_LISTEN: %w", err), ln.Close())
		}
	}
	if a.cfg.PprofAddr != "" {
		if profiles, err = (&net.ListenConfig{}).Listen(ctx, "tcp", a.cfg.PprofAddr); err != nil {
			err = fmt.Errorf("SEATFLOW_PPROF_ADDR: %w", err)
			if ops != nil {
				err = errors.Join(err, ops.Close())
			}
			return errors.Join(err, ln.Close())
		}
	}
	return a.serveOn(ctx, ln, ops, profiles)
}

// serveOn is Serve on listeners of the caller's (tests pick free ports);
// ops is the operations listener (opslisten.go) and profiles the
// profiling listener (pprof.go), each nil when off.
// Shutdown order: stop accepting and let the requests in flight finish
// (http.Server.Shutdown, the operations server's beside the API's; the
// live seat streams are ended for it, see NewApp); the timeout consumer
// and the rest stop in Close.
func (a *App) serveOn(ctx context.Context, ln, ops, profiles net.Listener) error {
	if profiles != nil {
		defer a.servePprof(ctx, profiles)()
	}
	opsFailed, stopOps := (<-chan error)(nil), func(context.Context) error { return nil }
	if ops != nil {
		opsFailed, stopOps = a.serveOps(ctx, ops)
	}
	a.logger.InfoContext(ctx, "listening", "addr", "http://"+ln.Addr().String())
	// The lane serves probes, metrics, the callback and the console over the
	// connection cap, one request per connection (connlimit.go).
	lane := newHTTPServer(a.cfg.Addr, a.Handler, a.logger)
	lane.SetKeepAlivesEnabled(false)
	go func() { _ = lane.Serve(a.conns.laneListener(ln.Addr())) }()
	served := make(chan error, 1)
	go func() { served <- a.http.Serve(a.conns.listener(ln)) }()
	select {
	case err := <-served:
		return fmt.Errorf("http server: %w", errors.Join(err, lane.Close(), stopOps(context.WithoutCancel(ctx))))
	case err := <-opsFailed:
		// Probes can no longer reach the instance: stop, as with the API's listener.
		return errors.Join(err, a.http.Close(), lane.Close())
	case <-ctx.Done():
	}
	a.logger.Info("shutting down", "grace", a.cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.ShutdownTimeout)
	defer cancel()
	if err := errors.Join(a.http.Shutdown(sctx), lane.Shutdown(sctx), stopOps(sctx)); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	return nil
}

// Close stops everything in dependency order: HTTP (no new work; after
// Serve's graceful shutdown there is none in flight either), the reconcile
// scheduler, the webhook dispatcher (events committed after it stopped wait
// in the outbox for the next start or another instance) and the health
// watcher, the live seat streams, the timeout consumer (it waits for the
// messages being handled), the relay (after the consumer: a handled
// timeout still publishes its seat change), the seat store, then the
// database they all write to. It is safe on a partly built App.
func (a *App) Close() error {
	var errs []error
	if a.http != nil {
		errs = append(errs, a.http.Close())
	}
	if a.stopReconcile != nil {
		a.stopReconcile()
		<-a.reconcileDone
		<-a.pruningDone
		if a.roomDone != nil {
			<-a.roomDone
		}
	}
	if a.webhooks != nil {
		a.webhooks.Close() // waits for the requests in flight: before the database closes
	}
	if a.stopHealth != nil {
		a.stopHealth()
		<-a.healthDone
	}
	if a.hub != nil {
		a.hub.Close()
	}
	if a.queue != nil {
		errs = append(errs, a.queue.Close())
	}
	if a.relay != nil {
		errs = append(errs, a.relay.Close())
	}
	if a.redis != nil {
		errs = append(errs, a.redis.Close())
	}
	if a.DB != nil {
		errs = append(errs, a.DB.Close())
	}
	return errors.Join(errs...)
}
