package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/seats"
	"seatflow/core/store"
)

// stackConfig is one server configuration under test.
type stackConfig struct {
	mode    core.DelayMode // "" leaves the server's default (timer embedded, levels on RocketMQ)
	holdTTL time.Duration
	// addressLimits keeps the server's per-address limits (rate and holds):
	// in the rush every buyer names an address of its own, as a
	// storefront's visitors do. Off, the load of one address is allowed.
	addressLimits bool
	// seatMapMaxAge is the server's SEATFLOW_SEAT_MAP_MAX_AGE (0: its default).
	seatMapMaxAge time.Duration
	// overloadProtection keeps the server's adaptive limits of work in
	// flight, which the rush is about. Off (the throughput scenarios) they
	// are lifted: those measure the engine at a fixed --clients, and a
	// limit cut to its floor on a loaded machine would refuse the very
	// load being measured (shed 503s are failures there).
	overloadProtection bool
	// noFile lowers the server's descriptor limit (ulimit -n) below the
	// bench's own (0: the same), so that the buyers' connections can
	// outnumber the server's descriptors on one machine.
	noFile int
	// opsListener gives the server an operations listener
	// (SEATFLOW_OPS_LISTEN) on a free port of its own, for the rush's
	// /readyz prober.
	opsListener bool
}

// unlimitedInFlight is the limit of work in flight of a server whose
// overload protection is lifted: above any --clients the bench runs.
const unlimitedInFlight = 4096

// stack is the server under test (a child process) plus the bench's own
// connections to the same database and Redis, for setup and verification.
type stack struct {
	kind      string
	cfg       stackConfig
	dir       string // temp dir: SQLite file, server log
	dsn       string // SEATFLOW_DB of the child
	db        *store.DB
	rdb       redis.UniversalClient // real stack only: the Redis the child uses
	api       *apiClient
	opsBase   string // http://127.0.0.1:port of the server's operations listener; "": none
	child     *child
	topic     string         // real stack: the run's own RocketMQ topic
	mq        string         // real stack: SEATFLOW_MQ of the child, through the proxies with --rtt
	delays    *delayedStores // --rtt: the proxies in front of the stores
	stores    []ledgerProc   // real stack: the store processes, for the CPU ledger
	pprofAddr string         // --cpu-profile: the child's SEATFLOW_PPROF_ADDR
	shows     []int64
	dropDB    func(context.Context) error
	env       []string // the child's whole environment, to start it again
	starts    int      // children started so far, each with a log of its own
	failed    bool     // a child did not stop cleanly: keep the dir and its logs
}

// Timeouts of the child's life cycle.
const (
	readyWait = 90 * time.Second // migrations + RocketMQ client start + first route lookups
	stopWait  = 30 * time.Second // the server's own shutdown grace is 15 s
)

// startStack prepares a fresh database, starts `seatflow serve` on it and
// waits for /readyz.
func startStack(ctx context.Context, o Options, cfg stackConfig, getenv func(string) string, p *progress) (_ *stack, err error) {
	s := &stack{kind: o.Stack, cfg: cfg}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.close(context.WithoutCancel(ctx)))
		}
	}()
	if s.dir, err = os.MkdirTemp("", "seatflow-bench-"); err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	id := randHex(4)
	env := []string{
		"SEATFLOW_HOLD_TTL=" + cfg.holdTTL.String(),
		// 4xx answers (conflicts) are logged at info: at warn the log stays small.
		"SEATFLOW_LOG_LEVEL=warn",
		// The load comes from one key by design: the bench measures the
		// engine, not the abuse limits (server/abuse.go).
		"SEATFLOW_RATE_PER_KEY=0",
	}
	if !cfg.addressLimits {
		env = append(env, "SEATFLOW_RATE_PER_CLIENT=0", "SEATFLOW_MAX_HOLDS_PER_CLIENT=0")
	}
	if !cfg.overloadProtection {
		env = append(env, fmt.Sprintf("SEATFLOW_MAX_INFLIGHT=%d", max(unlimitedInFlight, o.Clients)),
			"SEATFLOW_LATENCY_OBJECTIVE=1h")
	}
	if cfg.seatMapMaxAge > 0 {
		env = append(env, "SEATFLOW_SEAT_MAP_MAX_AGE="+cfg.seatMapMaxAge.String())
	}
	if cfg.mode != "" {
		env = append(env, "SEATFLOW_DELAY_MODE="+string(cfg.mode))
	}
	if o.Stack == StackEmbedded {
		s.dsn = "sqlite://" + filepath.Join(s.dir, "seatflow.db")
		env = append(env, "SEATFLOW_REDIS=embedded", "SEATFLOW_MQ=embedded")
	} else {
		if s.dsn, s.dropDB, err = freshMySQL(ctx, o.MySQL, "seatflow_bench_"+id); err != nil {
			return nil, err
		}
		redisURL := o.Redis
		s.mq = o.RocketMQ
		if o.Proxied {
			// Everything after the database's creation goes through the
			// proxies: the child, the bench's setup and its raw limits.
			s.delays = newDelayedStores(o.RTT)
			if s.dsn, err = s.delays.mysqlDSN(s.dsn); err != nil {
				return nil, err
			}
			if redisURL, err = s.delays.redisURL(o.Redis); err != nil {
				return nil, err
			}
			if s.mq, err = s.delays.rocketmqURL(o.RocketMQ); err != nil {
				return nil, err
			}
			p.logf("MariaDB, Redis and RocketMQ behind delay proxies adding %v per round trip", o.RTT)
		}
		if s.rdb, err = seats.Dial(ctx, redisURL); err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
		s.topic = "SEATFLOW_BENCH_" + id
		env = append(env, "SEATFLOW_REDIS="+redisURL, "SEATFLOW_MQ="+s.mq,
			"SEATFLOW_ROCKETMQ_TOPIC="+s.topic, "SEATFLOW_ROCKETMQ_GROUP=seatflow-bench-"+id)
	}
	if o.DBPool > 0 {
		env = append(env, fmt.Sprintf("SEATFLOW_DB_MAX_OPEN=%d", o.DBPool))
	}
	if cfg.opsListener {
		ops, err := freeAddr()
		if err != nil {
			return nil, err
		}
		env = append(env, "SEATFLOW_OPS_LISTEN="+ops)
		s.opsBase = "http://" + ops
	}
	if o.CPUProfile != "" {
		if s.pprofAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		env = append(env, "SEATFLOW_PPROF_ADDR="+s.pprofAddr)
	}
	// The same pool as the server's, so the raw commit limit is measured
	// through the same number of connections.
	if s.db, err = store.OpenWith(ctx, s.dsn, store.Options{MaxOpenConns: o.DBPool}); err != nil {
		return nil, fmt.Errorf("bench connection to %s: %w", o.Stack, err)
	}
	if err = s.db.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if o.Stack == StackReal {
		// Show ids key the shared Redis: start them at a random base so this
		// run never touches another run's (or a test's) seats.
		base := mrand.Int64N(1<<40) + 1_000_000
		if _, err = s.db.X().ExecContext(ctx, fmt.Sprintf("ALTER TABLE show_info AUTO_INCREMENT = %d", base)); err != nil {
			return nil, fmt.Errorf("show id base: %w", err)
		}
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	token, secret := randHex(24), randHex(24)
	env = append(env, "SEATFLOW_ADDR="+addr, "SEATFLOW_DB="+s.dsn,
		"SEATFLOW_API_TOKEN="+token, "SEATFLOW_PAYMENT_SECRET="+secret)
	// Only what a Go program needs from the bench's environment: a stray
	// SEATFLOW_* in the shell must not change the server under test.
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "GOMAXPROCS", "GOGC", "GOMEMLIMIT"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	s.api = newAPIClient("http://"+addr, token, secret, o.Clients)
	s.env = env
	if o.Stack == StackReal {
		s.stores = storeProcesses(ctx, o)
		p.logf("CPU ledger: %s", describeProcs(s.stores))
	}
	p.logf("starting seatflow serve (%s stack, delay mode %q, hold TTL %v) on %s", o.Stack, orDefault(string(cfg.mode), "default"), cfg.holdTTL, addr)
	if err = s.startServer(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// startServer starts the child on the stack's database, queue and port, and
// waits until it is ready.
func (s *stack) startServer(ctx context.Context) (err error) {
	s.starts++
	logName := "server.log"
	if s.starts > 1 {
		logName = fmt.Sprintf("server-%d.log", s.starts)
	}
	if s.child, err = startChild(filepath.Join(s.dir, logName), s.env, s.cfg.noFile); err != nil {
		return err
	}
	return s.waitReady(ctx)
}

// stopServer stops the child as an orchestrator would (SIGTERM); what it
// left in the database and the queue waits for startServer.
func (s *stack) stopServer() error {
	err := s.child.stop()
	if err != nil {
		err = fmt.Errorf("%w (server log: %s)", err, s.child.logPath)
		s.failed = true
	}
	s.child = nil
	return err
}

// waitReady polls /readyz until it answers 200, the child exits or readyWait passes.
func (s *stack) waitReady(ctx context.Context) error { return waitReady(ctx, s.api, s.child) }

// waitReady polls c's /readyz until it answers 200, the child serving it
// exits or readyWait passes.
func waitReady(ctx context.Context, api *apiClient, c *child) error {
	ctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	var last error
	for {
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		last = api.ready(rctx)
		rcancel()
		if last == nil {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("seatflow serve exited before it was ready: %v\n%s", c.waitErr, c.logTail())
		case <-ctx.Done():
			return fmt.Errorf("seatflow serve not ready after %v: %v\n%s", readyWait, last, c.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startCPULedger starts following where the machine's CPU goes: the
// server child, the bench itself (with --rtt, its proxies too) and the
// store processes.
func (s *stack) startCPULedger() *cpuLedger {
	procs := []ledgerProc{{Label: procServer, PID: s.child.cmd.Process.Pid}, {Label: procBench, PID: os.Getpid()}}
	return startCPULedger(append(procs, s.stores...))
}

// newShow creates a show of rows×cols seats directly in the database: the
// API has no call for it, and the bench shares the server's database.
func (s *stack) newShow(ctx context.Context, rows, cols int) (core.Show, []core.Seat, error) {
	plan := store.DemoSeats(rows, cols, 5000)
	show, err := s.db.CreateShow(ctx, core.Show{Name: "bench " + randHex(3), Venue: "bench",
		StartsAt: time.Now().Add(24 * time.Hour).UTC()}, plan)
	if err != nil {
		return core.Show{}, nil, fmt.Errorf("create show: %w", err)
	}
	s.shows = append(s.shows, show.ID)
	return show, plan, nil
}

// close stops the child with SIGTERM and removes what the run created:
// Redis keys of its shows, its database, its temp dir (kept, with the
// server log, when the child failed).
func (s *stack) close(ctx context.Context) error {
	var errs []error
	keepDir := s.failed
	if s.child != nil {
		if err := s.child.stop(); err != nil {
			errs = append(errs, fmt.Errorf("%w (server log: %s)", err, s.child.logPath))
			keepDir = true
		}
	}
	if s.api != nil {
		s.api.close()
	}
	if s.rdb != nil {
		for _, id := range s.shows {
			if err := s.rdb.Unlink(ctx, seats.KeySeats(id), seats.KeyLimit(id), seats.KeyBest(id), seats.KeyBestBounds(id)).Err(); err != nil {
				errs = append(errs, fmt.Errorf("remove redis keys of show %d: %w", id, err))
			}
		}
		errs = append(errs, s.rdb.Close())
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	if s.dropDB != nil {
		errs = append(errs, s.dropDB(ctx))
	}
	if s.delays != nil { // after everything that used them
		errs = append(errs, s.delays.close())
	}
	if s.dir != "" && !keepDir {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}

// freshMySQL creates database name next to the one adminDSN names and
// returns its DSN and how to drop it.
func freshMySQL(ctx context.Context, adminDSN, name string) (string, func(context.Context) error, error) {
	cfg, err := mysql.ParseDSN(strings.TrimPrefix(adminDSN, "mysql://"))
	if err != nil {
		return "", nil, fmt.Errorf("--mysql: %w", err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return "", nil, fmt.Errorf("--mysql: %w", err)
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, errors.Join(fmt.Errorf("create database %s: %w", name, err), admin.Close())
	}
	drop := func(ctx context.Context) error {
		_, err := admin.ExecContext(ctx, "DROP DATABASE "+name)
		if err != nil {
			err = fmt.Errorf("drop database %s: %w", name, err)
		}
		return errors.Join(err, admin.Close())
	}
	cfg.DBName = name
	return "mysql://" + cfg.FormatDSN(), drop, nil
}

// freeAddr finds a free loopback port. Another process could take it before
// the child binds it; the child then fails to start, which is reported.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// child is `seatflow serve` running as a child process of the bench.
type child struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
	waitErr error
	mem     *procSampler
	stopMem context.CancelFunc
}

// startChild runs this same binary's serve command with env as its whole
// environment, its output going to logPath; with noFile above 0 under a
// shell that lowers its descriptor limit to that first.
func startChild(logPath string, env []string, noFile int) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the seatflow binary: %w", err)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("server log: %w", err)
	}
	cmd := exec.Command(exe, "serve")
	if noFile > 0 {
		cmd = exec.Command("/bin/sh", "-c", `ulimit -n "$1" && exec "$0" serve`, exe, strconv.Itoa(noFile))
	}
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("start seatflow serve: %w", err), logf.Close())
	}
	c := &child{cmd: cmd, logPath: logPath, done: make(chan struct{}), mem: &procSampler{pid: cmd.Process.Pid}}
	go func() {
		c.waitErr = cmd.Wait()
		_ = logf.Close()
		close(c.done)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	c.stopMem = cancel
	go c.mem.run(ctx, 100*time.Millisecond)
	return c, nil
}

// stop sends SIGTERM, as an orchestrator would, and waits for a clean exit;
// after stopWait the child is killed and that is an error.
func (c *child) stop() error {
	c.stopMem()
	select {
	case <-c.done:
		return fmt.Errorf("seatflow serve had already exited: %v", c.waitErr)
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal seatflow serve: %w", err)
	}
	select {
	case <-c.done:
		if c.waitErr != nil {
			return fmt.Errorf("seatflow serve exited after SIGTERM: %w", c.waitErr)
		}
		return nil
	case <-time.After(stopWait):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("seatflow serve still running %v after SIGTERM: killed", stopWait)
	}
}

// logTail returns the end of the child's log, for an error message.
func (c *child) logTail() string {
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return ""
	}
	const tail = 4000
	if len(b) > tail {
		b = b[len(b)-tail:]
	}
	return string(b)
}
