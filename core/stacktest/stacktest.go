// Package stacktest builds whole SeatFlow stacks for tests: the embedded one
// (SQLite file, in-process seat store, DB delay queue), as the server runs
// it, and the real one (a fresh MariaDB database, the real Redis, RocketMQ
// on a topic of its own). Suites that must hold on both run through Each;
// suites that reach into Redis itself (fault injection on its commands, raw
// keys) run through EachRedis, whose embedded stack has an in-process
// Redis-protocol server in place of the in-process seat store.
package stacktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/delay/dbqueue"
	"seatflow/core/delay/rocketmq"
	"seatflow/core/seats"
	"seatflow/core/store"
	"seatflow/core/testenv"
)

// Stack is one set of adapters behind the engine.
type Stack struct {
	Name  string // "embedded", "embedded-redis" or "real"
	DSN   string // DB's, for another store on the same database
	DB    *store.DB
	Seats seats.Interface
	Queue core.DelayQueue
	// Redis is the client of the Redis seat store: nil on the embedded
	// stack, whose seat store is in process.
	Redis redis.UniversalClient
	// Embedded is the in-process Redis of EmbeddedRedis (nil otherwise).
	Embedded *testenv.EmbeddedRedis
}

// Each runs fn once on the embedded stack and once on the real one.
func Each(t *testing.T, fn func(t *testing.T, s *Stack)) {
	t.Run("embedded", func(t *testing.T) { fn(t, Embedded(t)) })
	t.Run("real", func(t *testing.T) { fn(t, Real(t)) })
}

// EachRedis runs fn once on EmbeddedRedis and once on the real stack: for
// tests that need s.Redis.
func EachRedis(t *testing.T, fn func(t *testing.T, s *Stack)) {
	t.Run("embedded-redis", func(t *testing.T) { fn(t, EmbeddedRedis(t)) })
	t.Run("real", func(t *testing.T) { fn(t, Real(t)) })
}

// Embedded builds the embedded stack, as the server runs it (SEATFLOW_DB,
// SEATFLOW_REDIS and SEATFLOW_MQ all "embedded"), in the test's temp dir.
func Embedded(t testing.TB) *Stack {
	t.Helper()
	dsn, db, q := openEmbedded(t)
	return &Stack{Name: "embedded", DSN: dsn, DB: db, Seats: seats.NewMemory(), Queue: q}
}

// EmbeddedRedis is the embedded stack with its seats in an in-process
// Redis-protocol server (the Redis seat store) instead of in process.
func EmbeddedRedis(t testing.TB) *Stack {
	t.Helper()
	dsn, db, q := openEmbedded(t)
	emb, err := testenv.StartEmbeddedRedis()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	client, err := seats.Dial(context.Background(), emb.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return &Stack{Name: "embedded-redis", DSN: dsn, DB: db, Redis: client, Seats: seats.New(client), Queue: q, Embedded: emb}
}

// openEmbedded opens a migrated SQLite file in the test's temp dir and the
// DB delay queue on it.
func openEmbedded(t testing.TB) (string, *store.DB, core.DelayQueue) {
	t.Helper()
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "seatflow.db")
	db := openMigrated(t, dsn)
	q, err := dbqueue.New(db.X(), string(db.Dialect()), dbqueue.Options{Levels: core.DefaultDelayPolicy().Levels})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return dsn, db, q
}

// Real builds the real stack; it skips (locally) or fails (CI) without the services.
func Real(t testing.TB) *Stack {
	t.Helper()
	mysqlURL, redisURL, mqURL := testenv.MySQL(t), testenv.Redis(t), testenv.RocketMQ(t)
	ctx := context.Background()
	dsn := FreshMySQL(t, mysqlURL)
	db := openMigrated(t, dsn)
	client, err := seats.Dial(ctx, redisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	mq, err := rocketmq.ParseURL(mqURL)
	if err != nil {
		t.Fatal(err)
	}
	id := RandHex(6)
	mq.Topic, mq.Group, mq.InstanceName = "SEATFLOW_T_"+id, "seatflow-t-"+id, "t-"+id
	if c := testenv.RocketMQCluster(); c != "" {
		mq.Cluster = c
	}
	q, err := rocketmq.New(ctx, mq)
	if err != nil {
		t.Fatalf("rocketmq: %v", err)
	}
	t.Cleanup(func() { q.Close() })
	return &Stack{Name: "real", DSN: dsn, DB: db, Redis: client, Seats: seats.New(client), Queue: q}
}

func openMigrated(t testing.TB, dsn string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	// As the server does: second-factor secrets are sealed with a key.
	key, err := access.ParseTOTPKey(access.NewTOTPKey())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := access.NewTOTPKeys(key)
	if err != nil {
		t.Fatal(err)
	}
	db.SetTOTPKeys(keys)
	return db
}

// FreshMySQL creates a migrated database of the test's own, whose show ids
// start at a random base, and drops it at cleanup.
func FreshMySQL(t testing.TB, url string) string {
	t.Helper()
	dsn := testenv.NewMySQLDatabase(t)
	// Show ids key the shared Redis: start this database's ids at a random
	// base so tests on other databases never touch each other's seats.
	db := openMigrated(t, dsn)
	base, _ := rand.Int(rand.Reader, big.NewInt(1<<40))
	if _, err := db.X().Exec(fmt.Sprintf("ALTER TABLE show_info AUTO_INCREMENT = %d", base.Int64()+1000)); err != nil {
		t.Fatal(err)
	}
	return dsn
}

// RandHex returns n random bytes as hex.
func RandHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NewShow creates a show of rows×cols seats.
func (s *Stack) NewShow(t testing.TB, rows, cols int) core.Show {
	t.Helper()
	show, err := s.DB.CreateShow(context.Background(), core.Show{
		Name: "Test " + RandHex(3), Venue: "Hall", StartsAt: time.Now().Add(24 * time.Hour).UTC(),
		Rows: rows, Cols: cols}, store.DemoSeats(rows, cols, 5000))
	if err != nil {
		t.Fatal(err)
	}
	s.CleanupSeats(t, show.ID)
	return show
}

// CleanupSeats deletes the show's seat state at the end of the test when the
// seat store is shared (the real Redis); a private one goes with the test.
func (s *Stack) CleanupSeats(t testing.TB, showID int64) {
	if s.Redis == nil || s.Embedded != nil {
		return
	}
	t.Cleanup(func() {
		s.Redis.Del(context.Background(), seats.KeySeats(showID), seats.KeyLimit(showID), seats.KeyBlocked(showID))
	})
}

// Engine builds an engine over the stack.
func (s *Stack) Engine(t testing.TB, cfg core.Config, clock core.Clock) *core.Engine {
	t.Helper()
	if cfg.HoldTTL == 0 {
		cfg.HoldTTL = 15 * time.Minute
	}
	if cfg.Delay.Mode == "" {
		cfg.Delay = core.DefaultDelayPolicy()
	}
	e, err := core.NewEngine(cfg, core.Deps{Store: s.DB, Seats: s.Seats, Queue: s.Queue, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Clock is a test clock that moves only when told to.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts at t, truncated to the millisecond the stores keep.
func NewClock(t time.Time) *Clock { return &Clock{now: t.UTC().Truncate(time.Millisecond)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
