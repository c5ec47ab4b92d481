// Package store is the system of record: core.Store and core.Tx on
// MySQL/MariaDB or SQLite through sqlx. All SQL of SeatFlow lives here, next
// to the function that runs it; dialect differences live in dialect.go.
//
// Times are BIGINT epoch milliseconds (UTC); 0 stands for the zero time.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"seatflow/core/access"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"seatflow/core"
	"seatflow/core/gather"
)

var _ core.Store = (*DB)(nil)

// sqliteBind teaches sqlx the placeholder style of modernc's driver name,
// which sqlx does not know; once per process, on first Open.
var sqliteBind sync.Once

// Options tunes the connection pools; zero fields take the defaults.
type Options struct {
	// MaxOpenConns caps the MySQL pool (default 32) or the SQLite read pool
	// (default 8); SQLite always has exactly one writer connection.
	MaxOpenConns int
	// MaxIdleConns defaults to 16 on MySQL and MaxOpenConns on SQLite.
	MaxIdleConns int
	// ConnMaxLifetime defaults to 5 minutes, well under MariaDB's wait_timeout.
	ConnMaxLifetime time.Duration
}

// DB is the store. On MySQL w and r are the same pool. On SQLite w is the
// single writer connection (every transaction and write) and r a pool of
// query-only connections, so reads never queue behind a write transaction
// (WAL lets them run side by side) and a read made while a transaction is
// open cannot deadlock on the one writer.
type DB struct {
	w, r    *sqlx.DB
	dialect Dialect
	// totpKeys seal second-factor secrets (totp.go); nil: none are stored.
	totpKeys *access.TOTPKeys
	// webhooksWake runs after a commit that queued webhook events (webhooks.go).
	webhooksWake atomic.Pointer[func()]
	orderReads   *gather.Batcher[*orderRead] // Order (orderreads.go)
}

// Open connects to dsn with default Options. dsn is one of
//
//	mysql://user:pass@tcp(host:port)/dbname?opts
//	sqlite://path/to/file.db (or a bare path; the parent dir is created)
//	sqlite://:memory:
//
// An in-memory SQLite database lives in one connection shared by reads and
// writes: there a Store read made inside an InTx callback blocks until the
// transaction ends, so tests that do that need a file.
func Open(ctx context.Context, dsn string) (*DB, error) {
	return OpenWith(ctx, dsn, Options{})
}

// OpenWith is Open with explicit pool Options.
func OpenWith(ctx context.Context, dsn string, opt Options) (*DB, error) {
	var (
		db  *DB
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "mysql://"):
		db, err = openMySQL(strings.TrimPrefix(dsn, "mysql://"), opt)
	case strings.HasPrefix(dsn, "sqlite://"):
		db, err = openSQLite(strings.TrimPrefix(dsn, "sqlite://"), opt)
	case strings.Contains(dsn, "://"):
		return nil, fmt.Errorf("store: unsupported DSN scheme in %q (want mysql:// or sqlite://)", redact(dsn))
	default:
		db, err = openSQLite(dsn, opt)
	}
	if err != nil {
		return nil, err
	}
	if err := db.Ping(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open %s: %w", db.dialect, err)
	}
	return db, nil
}

func openMySQL(dsn string, opt Options) (*DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: bad MySQL DSN: %w", err)
	}
	if cfg.DBName == "" {
		return nil, errors.New("store: bad MySQL DSN: no database name")
	}
	// Count matched rather than changed rows, as SQLite does: a conditional
	// UPDATE then reports 1 for "this caller won" even when it writes values
	// equal to the old ones.
	cfg.ClientFoundRows = true
	// Backstops for calls made without a deadline (every engine call has
	// one, and the driver honours it): a server that stops answering must
	// not hold a connection forever. The DSN's timeout, readTimeout and
	// writeTimeout win when set. The read timeout stays above
	// innodb_lock_wait_timeout (default 50 s), or a lock wait would read
	// as a lost connection.
	cfg.Timeout = orDefault(cfg.Timeout, 5*time.Second)
	cfg.ReadTimeout = orDefault(cfg.ReadTimeout, 60*time.Second)
	cfg.WriteTimeout = orDefault(cfg.WriteTimeout, 60*time.Second)
	// Send each statement with its arguments in one round trip instead of
	// a server-side prepare plus an execute (the driver escapes the values
	// for the connection's charset): measured 25-40 % off a placement.
	cfg.InterpolateParams = true
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("store: bad MySQL DSN: %w", err)
	}
	x := sqlx.NewDb(sql.OpenDB(conn), "mysql")
	maxOpen := orDefault(opt.MaxOpenConns, 32)
	x.SetMaxOpenConns(maxOpen)
	// As many idle as open: under load, fewer idle slots means closing and
	// redialling connections between bursts.
	x.SetMaxIdleConns(orDefault(opt.MaxIdleConns, maxOpen))
	x.SetConnMaxLifetime(orDefault(opt.ConnMaxLifetime, 5*time.Minute))
	return newDB(x, x, MySQL), nil
}

func openSQLite(path string, opt Options) (*DB, error) {
	sqliteBind.Do(func() { sqlx.BindDriver("sqlite", sqlx.QUESTION) })
	name, query, _ := strings.Cut(path, "?")
	if name == "" {
		return nil, errors.New("store: bad SQLite DSN: empty path")
	}
	// synchronous(FULL): in WAL mode NORMAL lets the last commits before a
	// power loss roll back, and an acknowledged payment must not.
	const pragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(0)&_pragma=synchronous(FULL)"
	extra := ""
	if query != "" {
		extra = "&" + query
	}
	if name != ":memory:" {
		if dir := filepath.Dir(name); dir != "." {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("store: create sqlite dir: %w", err)
			}
		}
		if err := prepareSQLiteFile(name); err != nil {
			return nil, err
		}
	}
	// BEGIN IMMEDIATE takes the write lock at the start, so two transactions
	// (in this or another process) can never both read and then deadlock
	// upgrading to write.
	w, err := sqlx.Open("sqlite", name+"?"+pragmas+"&_txlock=immediate"+extra)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	// One connection, never recycled: the single writer, and for :memory:
	// the database itself (each connection to :memory: is its own).
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if name == ":memory:" {
		return newDB(w, w, SQLite), nil
	}
	r, err := sqlx.Open("sqlite", name+"?"+pragmas+"&_pragma=query_only(1)"+extra)
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	n := orDefault(opt.MaxOpenConns, 8)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(orDefault(opt.MaxIdleConns, n))
	r.SetConnMaxLifetime(orDefault(opt.ConnMaxLifetime, 5*time.Minute))
	return newDB(w, r, SQLite), nil
}

func newDB(w, r *sqlx.DB, d Dialect) *DB {
	db := &DB{w: w, r: r, dialect: d}
	db.orderReads = db.newOrderReads()
	return db
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// redact hides a password in a DSN quoted in an error.
func redact(dsn string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return dsn
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if user, _, hasPass := strings.Cut(rest[:at], ":"); hasPass {
			return scheme + "://" + user + ":***" + rest[at:]
		}
	}
	return dsn
}

// Close closes every pool.
func (db *DB) Close() error {
	err := db.w.Close()
	if db.r != db.w {
		err = errors.Join(err, db.r.Close())
	}
	return err
}

// X is the pool that takes writes (the only one on MySQL), for packages that
// keep their own tables in this database (the embedded delay queue).
func (db *DB) X() *sqlx.DB { return db.w }

// PoolSize is how many connections the pool that reads use may open (on
// MySQL the only pool, on SQLite the read pool beside its one writer):
// what the server sizes its limit of API work in flight by.
func (db *DB) PoolSize() int { return db.r.Stats().MaxOpenConnections }

// Dialect says which database this is.
func (db *DB) Dialect() Dialect { return db.dialect }

// Ping checks every pool; failures are core.ErrStoreUnavailable.
func (db *DB) Ping(ctx context.Context) error {
	err := db.w.PingContext(ctx)
	if err == nil && db.r != db.w {
		err = db.r.PingContext(ctx)
	}
	if err != nil {
		return unavailable("ping", err)
	}
	return nil
}

// unavailable classifies a failure to reach the database at all.
func unavailable(op string, err error) error {
	return &core.Error{Kind: core.KindUnavailable, Code: core.ErrStoreUnavailable.Code,
		Message: "store: " + op + ": database unavailable", Err: err}
}

// dbErr wraps the error of one database call with what the call was doing.
// Every query and statement of this package goes through it, so a database
// that cannot be reached (down, restarting, connection cut) is always
// core.ErrStoreUnavailable: the API answers 503 and a retry may succeed,
// instead of a 500 that reads like a bug. Other errors (constraints, bad
// SQL) keep their chain, unclassified.
func dbErr(err error, format string, args ...any) error {
	op := fmt.Sprintf(format, args...)
	if connectionLost(err) {
		return unavailable(op, err)
	}
	return fmt.Errorf("store: %s: %w", op, err)
}

// MariaDB errors that mean "this server cannot serve you now", not "your
// statement is wrong".
const (
	mysqlTooManyConnections = 1040
	mysqlShutdownInProgress = 1053
	mysqlConnectionKilled   = 1927
)

// connectionLost reports whether err says the database could not be
// reached or the connection went away, as opposed to a statement failing.
func connectionLost(err error) bool {
	// The caller's own deadline or cancel is theirs to report (a context
	// deadline is also a net.Error): the database may be fine.
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	// Dial refused or timed out, connection reset: the driver returns the
	// *net.OpError (a net.Error) as is, or wrapped.
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case mysqlTooManyConnections, mysqlShutdownInProgress, mysqlConnectionKilled:
			return true
		}
	}
	return false
}

// InTx runs fn in one transaction: commit when fn returns nil, rollback when
// it returns an error or panics (the panic goes on after the rollback).
// fn's own error is returned as is, so callers' errors.Is checks keep working.
//
// A transaction InnoDB picked as a deadlock victim, or one that timed out on
// a row lock, is run again (fn must be re-runnable: it is, when it only
// reads and writes through its Tx): under concurrent payment, timeout and
// cancel of one order those are normal outcomes, not failures.
func (db *DB) InTx(ctx context.Context, fn func(core.Tx) error) error {
	const attempts = 4
	for i := 1; ; i++ {
		var t *tx
		err := db.withTx(ctx, func(sx *sqlx.Tx) error {
			t = &tx{x: sx, d: db.dialect}
			return fn(t)
		})
		if err == nil && t.webhooks {
			db.webhooksCommitted()
		}
		if err == nil || i == attempts || !isRetryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(i*i) * 5 * time.Millisecond):
		}
	}
}

// withTx is InTx for this package's own multi-statement writes.
func (db *DB) withTx(ctx context.Context, fn func(*sqlx.Tx) error) error {
	sx, err := db.w.BeginTxx(ctx, nil)
	if err != nil {
		return unavailable("begin", err)
	}
	done := false
	defer func() {
		if !done { // fn panicked
			_ = sx.Rollback()
		}
	}()
	if err := fn(sx); err != nil {
		done = true
		if rerr := sx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			return errors.Join(err, fmt.Errorf("store: rollback: %w", rerr))
		}
		return err
	}
	done = true
	if err := sx.Commit(); err != nil {
		if connectionLost(err) {
			// The COMMIT may have reached the server and landed before the
			// connection went (or the driver cannot tell it did not): the
			// caller must read what landed before writing again.
			return unavailable("commit", &core.Error{Kind: core.KindUnavailable, Code: core.ErrCommitUnknown.Code,
				Message: core.ErrCommitUnknown.Message, Err: err})
		}
		return dbErr(err, "commit")
	}
	return nil
}

// tx is core.Tx on one *sqlx.Tx.
type tx struct {
	x        *sqlx.Tx
	d        Dialect
	webhooks bool // it queued webhook events: InTx wakes their dispatcher after the commit
}

var _ core.Tx = (*tx)(nil)

// ms encodes t as epoch milliseconds; the zero time is 0.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS decodes epoch milliseconds; 0 is the zero time.
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// placeholders returns "(?, ?), (?, ?)" for rows tuples of cols values: the
// VALUES list of a multi-row INSERT.
func placeholders(rows, cols int) string {
	tuple := "(" + strings.Repeat("?, ", cols-1) + "?)"
	return strings.Repeat(tuple+", ", rows-1) + tuple
}

// SQL is the transaction itself, for an adapter that keeps its rows in the
// same database and writes them with the order (the DB queue's outbox,
// core.TxQueue).
func (t *tx) SQL() *sqlx.Tx { return t.x }
