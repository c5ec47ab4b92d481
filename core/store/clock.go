package store

import (
	"context"
	"time"
)

// DBNow reads the database server's clock, to the microsecond on MariaDB
// (SQLite runs in this process: its clock is ours, to the millisecond).
func (db *DB) DBNow(ctx context.Context) (time.Time, error) {
	q := `SELECT CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)`
	if db.dialect == SQLite {
		q = `SELECT CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)`
	}
	var us int64
	if err := db.r.GetContext(ctx, &us, q); err != nil {
		return time.Time{}, unavailable("read the database clock", err)
	}
	return time.UnixMicro(us).UTC(), nil
}
