package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/access"
)

// SetStaffTimeZone sets the zone an account's console times are shown in
// (an IANA name the caller checked with core.TimeZone, or "" for the
// server's) and writes audit, with the zone before and after, in the same
// transaction.
func (db *DB) SetStaffTimeZone(ctx context.Context, staffID int64, zone string, audit core.AuditEntry) error {
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		var before string
		err := x.GetContext(ctx, &before, `SELECT time_zone FROM staff WHERE id = ?`+db.dialect.forUpdate(), staffID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("staff %d: %w", staffID, access.ErrStaffNotFound)
		}
		if err != nil {
			return err
		}
		if _, err := x.ExecContext(ctx, `UPDATE staff SET time_zone = ? WHERE id = ?`, zone, staffID); err != nil {
			return err
		}
		audit.Detail = map[string]any{"previous_time_zone": before, "time_zone": zone}
		return addAudit(ctx, x, audit)
	})
	if err != nil {
		return dbErr(err, "set time zone of staff %d", staffID)
	}
	return nil
}
