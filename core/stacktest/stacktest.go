// Package stacktest builds whole SeatFlow stacks for tests: the embedded one
// (SQLite file, in-process Redis, DB delay queue) and the real one (a fresh
// MariaDB database, the real Redis, RocketMQ on a topic of its own). Suites
// that must hold on both run through Each.
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
	"seatflow/core/delay/dbqueue"
	"seatflow/core/delay/rocketmq"
	"seatflow/core/seats"
	"seatflow/core/store"
	"seatflow/core/testenv"
)

// Stack is one set of adapters behind the engine.
type Stack struct {
	Name  string // "embedded" or "real"
	DB    *store.DB
	Redis redis.UniversalClient
	Seats *seats.Store
	Queue core.DelayQueue
	// Embedded is the in-process Redis of the embedded stack (nil on real).
	Embedded *seats.Embedded
}

// Each runs fn once on the embedded stack and once on the real one.
func Each(t *testing.T, fn func(t *testing.T, s *Stack)) {
	t.Run("embedded", func(t *testing.T) { fn(t, Embedded(t)) })
	t.Run("real", func(t *testing.T) { fn(t, Real(t)) })
}

// Embedded builds the embedded stack in the test's temp dir.
func Embedded(t testing.TB) *Stack {
	t.Helper()
	ctx := context.Background()
	db := openMigrated(t, "sqlite://"+filepath.Join(t.TempDir(), "seatflow.db"))
	emb, err := seats.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	client, err := seats.Dial(ctx, emb.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	q, err := dbqueue.New(db.X(), string(db.Dialect()), dbqueue.Options{Levels: core.DefaultDelayPolicy().Levels})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return &Stack{Name: "embedded", DB: db, Redis: client, Seats: seats.New(client), Queue: q, Embedded: emb}
}

// Real builds the real stack; it skips (locally) or fails (CI) without the services.
func Real(t testing.TB) *Stack {
	t.Helper()
	mysqlURL, redisURL, mqURL := testenv.MySQL(t), testenv.Redis(t), testenv.RocketMQ(t)
	ctx := context.Background()
	db := openMigrated(t, FreshMySQL(t, mysqlURL))
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
	return &Stack{Name: "real", DB: db, Redis: client, Seats: seats.New(client), Queue: q}
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
	if s.Embedded == nil {
		t.Cleanup(func() {
			s.Redis.Del(context.Background(), seats.KeySeats(show.ID), seats.KeyLimit(show.ID), seats.KeyBlocked(show.ID))
		})
	}
	return show
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
