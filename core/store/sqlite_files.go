package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// sqliteFileMode is the mode of a SQLite database we create: it holds staff
// password hashes and customers' orders, so only the server's user reads it.
// SQLite gives its -wal and -shm files the database file's mode.
const sqliteFileMode = 0o600

// prepareSQLiteFile creates the database file with sqliteFileMode when it is
// missing, and refuses one (or a -wal/-shm beside it) that other users can
// read or write, naming the chmod that fixes it.
func prepareSQLiteFile(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, sqliteFileMode)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("store: create sqlite file: %w", err)
	}
	for _, p := range []string{name, name + "-wal", name + "-shm"} {
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store: sqlite file: %w", err)
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			return fmt.Errorf("store: %s is readable by other users (mode %04o); run: chmod 600 %s", p, perm, p)
		}
	}
	return nil
}
