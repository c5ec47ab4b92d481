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
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	if db.dialect == MySQL {
		opts = append(opts, goose.WithSessionLocker(mysqlMigrateLock{}))
	}
	p, err := goose.NewProvider(db.dialect.gooseDialect(), db.w.DB, dir, opts...)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return nil
}

// mysqlMigrateLock is a goose session locker on GET_LOCK: the lock belongs
// to the connection, so a crashed migrator releases it by disconnecting.
type mysqlMigrateLock struct{}

const migrateLockName = "seatflow_migrate"

func (mysqlMigrateLock) SessionLock(ctx context.Context, conn *sql.Conn) error {
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 120)", migrateLockName).Scan(&got); err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	if !got.Valid || got.Int64 != 1 {
		return errors.New("migration lock: timed out waiting for another migrator")
	}
	return nil
}

func (mysqlMigrateLock) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "SELECT RELEASE_LOCK(?)", migrateLockName); err != nil {
		return fmt.Errorf("migration unlock: %w", err)
	}
	return nil
}
