package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/access"
)

// Passwords and roles of console accounts. Each change and its audit line
// are one transaction, and a new password ends the account's other
// sessions in the same transaction: whoever knew the old one is out.

// SetPassword replaces the account's password hash and ends its sessions
// except keepSession (the token hash of the session making the change; ""
// ends them all).
func (db *DB) SetPassword(ctx context.Context, staffID int64, hash, keepSession string, audit core.AuditEntry) error {
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		if err := setPassword(ctx, x, staffID, hash, keepSession); err != nil {
			return err
		}
		return addAudit(ctx, x, audit)
	})
	if err != nil {
		return dbErr(err, "set password of staff %d", staffID)
	}
	return nil
}

func setPassword(ctx context.Context, x *sqlx.Tx, staffID int64, hash, keepSession string) error {
	res, err := x.ExecContext(ctx, `UPDATE staff SET password_hash = ? WHERE id = ?`, hash, staffID)
	if err != nil {
		return err
	}
	if found, err := oneRow(res, "set password"); err != nil {
		return err
	} else if !found {
		return fmt.Errorf("staff %d: %w", staffID, access.ErrStaffNotFound)
	}
	return deleteAccountSessions(ctx, x, staffID, keepSession)
}

// deleteAccountSessions ends, inside x, every session of the account but
// the one whose token hash is keep ("" keeps none).
func deleteAccountSessions(ctx context.Context, x *sqlx.Tx, staffID int64, keep string) error {
	_, err := x.ExecContext(ctx, `DELETE FROM staff_session WHERE staff_id = ? AND token_hash <> ?`, staffID, keep)
	return err
}

// SetStaffRole changes an account's role and returns the account before
// the change. Sessions carry no role (each request reads the account), so
// the new role holds from the account's next request.
func (db *DB) SetStaffRole(ctx context.Context, staffID int64, role access.Role, audit core.AuditEntry) (access.Staff, error) {
	var before access.Staff
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		var r staffRow
		err := x.GetContext(ctx, &r, `SELECT `+staffCols+` FROM staff WHERE id = ?`+db.dialect.forUpdate(), staffID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("staff %d: %w", staffID, access.ErrStaffNotFound)
		}
		if err != nil {
			return err
		}
		before = r.staff()
		if _, err := x.ExecContext(ctx, `UPDATE staff SET role = ? WHERE id = ?`, string(role), staffID); err != nil {
			return err
		}
		audit.Target = "staff:" + before.Username
		audit.Detail = map[string]any{"from": string(before.Role), "to": string(role)}
		return addAudit(ctx, x, audit)
	})
	if err != nil {
		return access.Staff{}, dbErr(err, "set role of staff %d", staffID)
	}
	return before, nil
}

// CreatePasswordReset stores a reset link's token hash for the account,
// valid until expiresAt, replacing the account's older links.
func (db *DB) CreatePasswordReset(ctx context.Context, staffID int64, tokenHash string, now, expiresAt time.Time, audit core.AuditEntry) error {
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		if _, err := x.ExecContext(ctx, `DELETE FROM password_reset WHERE staff_id = ?`, staffID); err != nil {
			return err
		}
		if _, err := x.ExecContext(ctx, `INSERT INTO password_reset (token_hash, staff_id, created_by, created_at, expires_at)
 VALUES (?, ?, ?, ?, ?)`, tokenHash, staffID, audit.Staff, ms(now), ms(expiresAt)); err != nil {
			return err
		}
		return addAudit(ctx, x, audit)
	})
	if err != nil {
		return dbErr(err, "create password reset for staff %d", staffID)
	}
	return nil
}

// PasswordReset returns the account a live reset link is for, or
// access.ErrResetLinkInvalid.
func (db *DB) PasswordReset(ctx context.Context, tokenHash string, now time.Time) (access.Staff, error) {
	return passwordReset(ctx, db.r, tokenHash, now, "")
}

func passwordReset(ctx context.Context, q sqlx.QueryerContext, tokenHash string, now time.Time, lock string) (access.Staff, error) {
	var r staffRow
	err := sqlx.GetContext(ctx, q, &r, `SELECT st.id, st.username, st.password_hash, st.role, st.created_at, st.disabled, st.time_zone, st.created_by
 FROM password_reset p JOIN staff st ON st.id = p.staff_id
 WHERE p.token_hash = ? AND p.used_at = 0 AND p.expires_at > ? AND st.disabled = 0`+lock, tokenHash, ms(now))
	if errors.Is(err, sql.ErrNoRows) {
		return access.Staff{}, access.ErrResetLinkInvalid
	}
	if err != nil {
		return access.Staff{}, dbErr(err, "password reset")
	}
	return r.staff(), nil
}

// UsePasswordReset sets the password of a live link's account, marks the
// link used and ends every session of the account, in one transaction: of
// two uses of one link, exactly one wins.
func (db *DB) UsePasswordReset(ctx context.Context, tokenHash, hash string, now time.Time, audit core.AuditEntry) (access.Staff, error) {
	var s access.Staff
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		var err error
		if s, err = passwordReset(ctx, x, tokenHash, now, db.dialect.forUpdate()); err != nil {
			return err
		}
		res, err := x.ExecContext(ctx, `UPDATE password_reset SET used_at = ? WHERE token_hash = ? AND used_at = 0`, ms(now), tokenHash)
		if err != nil {
			return err
		}
		if won, err := oneRow(res, "use password reset"); err != nil {
			return err
		} else if !won {
			return access.ErrResetLinkInvalid
		}
		if err := setPassword(ctx, x, s.ID, hash, ""); err != nil {
			return err
		}
		audit.Staff, audit.Role, audit.Target = s.Username, s.Role, "staff:"+s.Username
		return addAudit(ctx, x, audit)
	})
	if err != nil {
		return access.Staff{}, dbErr(err, "use password reset")
	}
	return s, nil
}
