package store

import (
	"context"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// EndSession ends one session of account staffID, with its audit row in
// the same transaction; false (and no audit row) when the account has no
// such session, ended meanwhile.
func (db *DB) EndSession(ctx context.Context, staffID int64, tokenHash string, audit core.AuditEntry) (bool, error) {
	var ended bool
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		res, err := x.ExecContext(ctx, `DELETE FROM staff_session WHERE staff_id = ? AND token_hash = ?`, staffID, tokenHash)
		if err != nil {
			return err
		}
		if ended, err = oneRow(res, "end a session"); err != nil || !ended {
			return err
		}
		return addAudit(ctx, x, audit)
	})
	if err != nil {
		return false, dbErr(err, "end a session of staff %d", staffID)
	}
	return ended, nil
}
