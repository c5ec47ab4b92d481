package dbqueue

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"seatflow/core/store"
	"seatflow/core/testenv"
)

// testDB is one migrated database; open gives another store connection on
// it (on SQLite: its own single writer, as in production), standing in for
// another process.
type testDB struct {
	dialect string
	open    func(t testing.TB) *sqlx.DB
}

// eachDialect runs fn on a fresh SQLite file and a fresh MariaDB database.
func eachDialect(t *testing.T, fn func(t *testing.T, tdb testDB)) {
	for _, dialect := range []string{SQLite, MySQL} {
		t.Run(dialect, func(t *testing.T) { fn(t, newTestDB(t, dialect)) })
	}
}

func newTestDB(t testing.TB, dialect string) testDB {
	t.Helper()
	var dsn string
	switch dialect {
	case SQLite:
		dsn = "sqlite://" + filepath.Join(t.TempDir(), "seatflow.db")
	case MySQL:
		dsn = testenv.NewMySQLDatabase(t)
	default:
		t.Fatalf("dialect %q", dialect)
	}
	openStore := func(t testing.TB) *store.DB {
		t.Helper()
		db, err := store.Open(context.Background(), dsn)
		if err != nil {
			t.Fatalf("open %s: %v", dialect, err)
		}
		t.Cleanup(func() { db.Close() })
		if got := string(db.Dialect()); got != dialect {
			t.Fatalf("store dialect %q, want %q", got, dialect)
		}
		return db
	}
	if err := openStore(t).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return testDB{dialect: dialect, open: func(t testing.TB) *sqlx.DB { return openStore(t).X() }}
}

// newQueue builds a queue on its own pool and closes it at cleanup.
func newQueue(t testing.TB, tdb testDB, opts Options) (*Queue, *sqlx.DB) {
	t.Helper()
	db := tdb.open(t)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(t.Output(), nil)) // shown only with -v or on failure
	}
	q, err := New(db, tdb.dialect, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { q.Close() })
	return q, db
}

// insertDue inserts n unclaimed tasks order_no prefix-0 ... due at dueMs,
// many rows per statement: faster than n Sends when a test needs a burst.
func insertDue(t testing.TB, db *sqlx.DB, prefix string, n int, dueMs int64) {
	t.Helper()
	const chunk = 500
	for start := 0; start < n; start += chunk {
		end := min(start+chunk, n)
		var sb strings.Builder
		args := make([]any, 0, 3*(end-start))
		sb.WriteString("INSERT INTO delay_task (order_no, hop, due_at, created_at) VALUES ")
		for i := start; i < end; i++ {
			if i > start {
				sb.WriteString(", ")
			}
			sb.WriteString("(?, 1, ?, ?)")
			args = append(args, fmt.Sprintf("%s-%d", prefix, i), dueMs, dueMs)
		}
		if _, err := db.Exec(sb.String(), args...); err != nil {
			t.Fatalf("insert tasks: %v", err)
		}
	}
}

func countRows(t testing.TB, db *sqlx.DB, where string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Get(&n, "SELECT COUNT(*) FROM delay_task WHERE "+where, args...); err != nil {
		t.Fatalf("count delay_task: %v", err)
	}
	return n
}
