package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"

	"seatflow/migrations"
)

// Migrate brings the schema up to date; a no-op when it already is. On
// MySQL, instances starting together take turns through a named lock.
func (db *DB) Migrate(ctx context.Context) error {
	dir, err := fs.Sub(migrations.FS, string(db.dialect))
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	p, err := goose.NewProvider(db.dialect.gooseDialect(), db.w.DB, dir, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	up := func() error {
		_, err := p.Up(ctx)
		return err
	}
	if db.dialect == MySQL {
		err = db.withMySQLLock(ctx, "seatflow_migrate", up)
	} else {
		err = up()
	}
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return nil
}

// withMySQLLock runs fn holding GET_LOCK(name). The lock covers all of
// goose's Up, not only the part goose's own session locker guards: its
// first-run check of the version table runs unlocked, and on MySQL the
// table's CREATE commits before the zero version row is inserted, so two
// instances migrating an empty database at once could otherwise fail. The
// lock belongs to the connection: a crashed migrator releases it.
func (db *DB) withMySQLLock(ctx context.Context, name string, fn func() error) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return unavailable("lock", err)
	}
	defer conn.Close()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 120)", name).Scan(&got); err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	if !got.Valid || got.Int64 != 1 {
		return fmt.Errorf("lock %s: timed out waiting for another holder", name)
	}
	ferr := fn()
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK(?)", name); err != nil {
		return errors.Join(ferr, fmt.Errorf("unlock %s: %w", name, err))
	}
	return ferr
}
