package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A new SQLite database is readable by its user only (dir 0700, files 0600,
// the WAL included), and one that others can read refuses to open, naming
// the chmod that fixes it.
func TestSQLiteFileModes(t *testing.T) {
	t.Run("new database", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		name := filepath.Join(dir, "seatflow.db")
		db := openMigrated(t, "sqlite://"+name)
		if _, err := db.X().Exec("CREATE TABLE mode_probe (x INTEGER)"); err != nil {
			t.Fatal(err)
		}
		for path, want := range map[string]os.FileMode{dir: 0o700, name: 0o600, name + "-wal": 0o600, name + "-shm": 0o600} {
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != want {
				t.Errorf("%s has mode %04o, want %04o", path, got, want)
			}
		}
	})
	for _, tc := range []struct {
		mode    os.FileMode
		wantErr bool
	}{{0o644, true}, {0o640, true}, {0o604, true}, {0o660, true}, {0o600, false}, {0o400, false}} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "seatflow.db")
			if err := os.WriteFile(name, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(name, tc.mode); err != nil {
				t.Fatal(err)
			}
			db, err := Open(context.Background(), "sqlite://"+name)
			if err == nil {
				db.Close()
			}
			switch {
			case tc.wantErr && err == nil:
				t.Fatalf("opened %s with mode %04o", name, tc.mode)
			case tc.wantErr && !strings.Contains(err.Error(), "chmod 600 "+name):
				t.Errorf("error %q does not say to run chmod 600 %s", err, name)
			case !tc.wantErr && err != nil:
				t.Fatalf("open with mode %04o: %v", tc.mode, err)
			}
		})
	}
}
