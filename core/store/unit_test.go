package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/testenv"
)

func TestOpenBadDSN(t *testing.T) {
	cases := []struct {
		dsn, wantErr string
	}{
		{"postgres://u:secret@h/db", "unsupported DSN scheme"},
		{"mysql://u:secret@tcp(127.0.0.1:1)/", "no database name"},
		{"mysql://u:secret@tcp(127.0.0.1/db", "bad MySQL DSN"},
		{"sqlite://", "empty path"},
		{"sqlite://x.db?_txlock=sometimes", "open sqlite"},
	}
	for _, c := range cases {
		t.Run(c.dsn, func(t *testing.T) {
			dsn := strings.Replace(c.dsn, "x.db", filepath.Join(t.TempDir(), "x.db"), 1)
			db, err := Open(context.Background(), dsn)
			if err == nil {
				db.Close()
				t.Fatalf("Open(%q) succeeded", c.dsn)
			}
			if !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error %q does not mention %q", err, c.wantErr)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error leaks the password: %v", err)
			}
		})
	}
}

func TestOpenUnreachableMySQL(t *testing.T) {
	// Port 1 on loopback refuses at once.
	_, err := Open(context.Background(), "mysql://u:p@tcp(127.0.0.1:1)/db")
	if !errors.Is(err, core.ErrStoreUnavailable) {
		t.Errorf("err = %v, want ErrStoreUnavailable", err)
	}
}

func TestOpenSQLiteForms(t *testing.T) {
	dir := t.TempDir()
	for _, dsn := range []string{"sqlite://:memory:", "sqlite://" + filepath.Join(dir, "a", "b.db"), filepath.Join(dir, "bare.db")} {
		t.Run(dsn, func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if db.Dialect() != SQLite {
				t.Errorf("dialect %q", db.Dialect())
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			// Writes through the writer are visible to reads (the same
			// connection for :memory:, the read pool otherwise).
			show, err := db.CreateShow(ctx, core.Show{Name: "S"}, DemoSeats(1, 1, 1))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Show(ctx, show.ID); err != nil {
				t.Error(err)
			}
			if dsn != "sqlite://:memory:" {
				if _, err := db.r.ExecContext(ctx, "DELETE FROM show_info"); err == nil {
					t.Error("the read pool accepted a write")
				}
			}
		})
	}
}

func TestDemoSeats(t *testing.T) {
	seats := DemoSeats(6, 3, 1000)
	if len(seats) != 18 {
		t.Fatalf("%d seats", len(seats))
	}
	cases := []struct {
		i     int
		id    string
		row   int
		col   int
		price int64
	}{
		{0, "A-1", 1, 1, 1500}, {5, "B-3", 2, 3, 1500}, {6, "C-1", 3, 1, 1250},
		{11, "D-3", 4, 3, 1250}, {12, "E-1", 5, 1, 1000}, {17, "F-3", 6, 3, 1000},
	}
	for _, c := range cases {
		s := seats[c.i]
		if s.SeatID != c.id || s.Row != c.row || s.Col != c.col || s.PriceCents != c.price || s.ShowID != 0 {
			t.Errorf("seat %d = %+v, want %s r%d c%d %d", c.i, s, c.id, c.row, c.col, c.price)
		}
	}
	if len(DemoSeats(0, 5, 1)) != 0 {
		t.Error("0 rows gave seats")
	}
}

func TestRowName(t *testing.T) {
	cases := map[int]string{1: "A", 26: "Z", 27: "AA", 28: "AB", 52: "AZ", 53: "BA", 702: "ZZ", 703: "AAA"}
	for r, want := range cases {
		if got := RowName(r); got != want {
			t.Errorf("RowName(%d) = %q, want %q", r, got, want)
		}
	}
}

func TestSortedSeatIDs(t *testing.T) {
	cases := []struct{ in, want string }{
		{"A-10 A-2 A-1", "A-1 A-2 A-10"},
		{"AA-1 Z-3 B-1", "B-1 Z-3 AA-1"},
		{"x A-1 A-x", "A-1 A-x x"},
	}
	for _, c := range cases {
		in := strings.Fields(c.in)
		got := sortedSeatIDs(in)
		if strings.Join(got, " ") != c.want {
			t.Errorf("sortedSeatIDs(%s) = %v, want %s", c.in, got, c.want)
		}
		if !slices.Equal(in, strings.Fields(c.in)) {
			t.Errorf("input modified: %v", in)
		}
	}
}

func TestRedact(t *testing.T) {
	cases := map[string]string{
		"mysql://u:p@w@tcp(h)/db": "mysql://u:***@tcp(h)/db",
		"mysql://u@tcp(h)/db":     "mysql://u@tcp(h)/db",
		"file.db":                 "file.db",
	}
	for in, want := range cases {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMigrateConcurrentMySQL: instances starting together on one empty
// database take turns through the migration lock instead of racing goose.
func TestMigrateConcurrentMySQL(t *testing.T) {
	dsn := testenv.NewMySQLDatabase(t)
	ctx := context.Background()
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			db, err := Open(ctx, dsn)
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			errs <- db.Migrate(ctx)
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("migrate: %v", err)
		}
	}
	db := openMigrated(t, dsn)
	if n := count(t, db, "SELECT COUNT(*) FROM goose_db_version WHERE version_id = 1"); n != 1 {
		t.Errorf("version 1 recorded %d times", n)
	}
}

// TestSQLiteDurable: the embedded store commits with synchronous FULL on
// its writer (WAL with NORMAL may lose the last acknowledged commits on
// power loss) and its readers; a DSN may still ask for NORMAL.
func TestSQLiteDurable(t *testing.T) {
	for _, c := range []struct {
		query string
		want  int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{{"", 2}, {"?_pragma=synchronous(NORMAL)", 1}} {
		db, err := Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "d.db")+c.query)
		if err != nil {
			t.Fatal(err)
		}
		for name, x := range map[string]interface {
			Get(dest any, query string, args ...any) error
		}{"writer": db.w, "reader": db.r} {
			var got int
			if err := x.Get(&got, "PRAGMA synchronous"); err != nil || got != c.want {
				t.Errorf("DSN query %q, %s: synchronous %d (%v), want %d", c.query, name, got, err, c.want)
			}
		}
		_ = db.Close()
	}
}
