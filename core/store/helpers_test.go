package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/testenv"
)

// backend opens a fresh, migrated store for one test.
type backend struct {
	name string
	open func(t testing.TB) *DB
}

// backends lists every database the contract suite runs against.
func backends() []backend {
	return []backend{{"sqlite", openTestSQLite}, {"mariadb", openTestMySQL}}
}

// eachBackend runs fn against a fresh store of every backend.
func eachBackend(t *testing.T, fn func(t *testing.T, db *DB)) {
	t.Helper()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { fn(t, b.open(t)) })
	}
}

func openTestSQLite(t testing.TB) *DB {
	t.Helper()
	return openMigrated(t, "sqlite://"+filepath.Join(t.TempDir(), "sub", "seatflow.db"))
}

// openTestMySQL opens a migrated database of the test's own.
func openTestMySQL(t testing.TB) *DB {
	t.Helper()
	return openMigrated(t, testenv.NewMySQLDatabase(t))
}

func openMigrated(t testing.TB, dsn string) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
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

// t0 is a millisecond-precise instant: what the store keeps.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 8e6, time.UTC)

// mkShow creates a show with a rows×cols demo plan at 1000 cents.
func mkShow(t *testing.T, db *DB, rows, cols int) core.Show {
	t.Helper()
	s, err := db.CreateShow(context.Background(), core.Show{Name: "Show", Venue: "Hall", StartsAt: t0.Add(48 * time.Hour)},
		DemoSeats(rows, cols, 1000))
	if err != nil {
		t.Fatalf("create show: %v", err)
	}
	return s
}

// pending is a pending order of user on show for seats, placed at at.
func pending(no string, showID, user int64, at time.Time, seats ...string) core.Order {
	return core.Order{OrderNo: no, ShowID: showID, UserID: user, Status: core.StatusPending,
		AmountCents: int64(len(seats)) * 1000, SeatIDs: seats, CreatedAt: at, ExpireAt: at.Add(15 * time.Minute)}
}

// place inserts the order and its seats in one transaction.
func place(ctx context.Context, db *DB, o core.Order) error {
	return db.InTx(ctx, func(tx core.Tx) error {
		if err := tx.InsertOrder(ctx, o); err != nil {
			return err
		}
		return tx.InsertOrderSeats(ctx, o)
	})
}

func mustPlace(t *testing.T, db *DB, o core.Order) {
	t.Helper()
	if err := place(context.Background(), db, o); err != nil {
		t.Fatalf("place %s: %v", o.OrderNo, err)
	}
}

// transition runs one TransitionPending in its own transaction.
func transition(ctx context.Context, db *DB, no string, to core.OrderStatus, tr core.Transition) (bool, error) {
	var won bool
	err := db.InTx(ctx, func(tx core.Tx) error {
		var err error
		won, err = tx.TransitionPending(ctx, no, to, tr)
		return err
	})
	return won, err
}

func count(t *testing.T, db *DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.X().GetContext(context.Background(), &n, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func seatIDsOf(holds []core.SeatHold) string {
	parts := make([]string, len(holds))
	for i, h := range holds {
		parts[i] = fmt.Sprintf("%s:%s:%s", h.SeatID, h.State, h.OrderNo)
	}
	return strings.Join(parts, " ")
}
