package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/access"
)

// Second factors and the sign-ins waiting for their code.

type totpRow struct {
	StaffID     int64  `db:"staff_id"`
	Secret      string `db:"secret"`
	CreatedAt   int64  `db:"created_at"`
	ConfirmedAt int64  `db:"confirmed_at"`
	LastStep    int64  `db:"last_step"`
}

func (r totpRow) totp() access.TOTP {
	return access.TOTP{StaffID: r.StaffID, Secret: r.Secret, CreatedAt: fromMS(r.CreatedAt),
		ConfirmedAt: fromMS(r.ConfirmedAt), LastStep: r.LastStep}
}

// OfferTOTP stores a new, unconfirmed secret for the account, replacing an
// earlier offer; access.ErrTOTPEnrolled when it has a confirmed one.
func (db *DB) OfferTOTP(ctx context.Context, staffID int64, secret string, now time.Time) error {
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		var confirmed int64
		err := x.GetContext(ctx, &confirmed, `SELECT confirmed_at FROM staff_totp WHERE staff_id = ?`+db.dialect.forUpdate(), staffID)
		switch {
		case err == nil && confirmed > 0:
			return access.ErrTOTPEnrolled
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if _, err := x.ExecContext(ctx, `DELETE FROM staff_totp WHERE staff_id = ?`, staffID); err != nil {
			return err
		}
		_, err = x.ExecContext(ctx, `INSERT INTO staff_totp (staff_id, secret, created_at) VALUES (?, ?, ?)`, staffID, secret, ms(now))
		return err
	})
	if err != nil {
		return dbErr(err, "offer second factor to staff %d", staffID)
	}
	return nil
}

// TOTP returns the account's second factor, confirmed or offered, and
// whether it has one.
func (db *DB) TOTP(ctx context.Context, staffID int64) (access.TOTP, bool, error) {
	var r totpRow
	err := db.r.GetContext(ctx, &r, `SELECT staff_id, secret, created_at, confirmed_at, last_step FROM staff_totp WHERE staff_id = ?`, staffID)
	if errors.Is(err, sql.ErrNoRows) {
		return access.TOTP{}, false, nil
	}
	if err != nil {
		return access.TOTP{}, false, dbErr(err, "second factor of staff %d", staffID)
	}
	return r.totp(), true, nil
}

// TOTPEnrolled returns the ids of the accounts with a confirmed second factor.
func (db *DB) TOTPEnrolled(ctx context.Context) (map[int64]bool, error) {
	var ids []int64
	if err := db.r.SelectContext(ctx, &ids, `SELECT staff_id FROM staff_totp WHERE confirmed_at > 0`); err != nil {
		return nil, dbErr(err, "second factors")
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// UseTOTPStep accepts a code of step for the account: once confirmed
// (confirm=false) or confirming the offer (confirm=true). It reports false
// when the step is not newer than the last one accepted (a replayed code)
// or there is no such factor; the audit line is written only on success.
func (db *DB) UseTOTPStep(ctx context.Context, staffID, step int64, confirm bool, now time.Time, audit *core.AuditEntry) (bool, error) {
	q := `UPDATE staff_totp SET last_step = ? WHERE staff_id = ? AND confirmed_at > 0 AND last_step < ?`
	args := []any{step, staffID, step}
	if confirm {
		q = `UPDATE staff_totp SET last_step = ?, confirmed_at = ? WHERE staff_id = ? AND confirmed_at = 0 AND last_step < ?`
		args = []any{step, ms(now), staffID, step}
	}
	var won bool
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		res, err := x.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if won, err = oneRow(res, "use second factor"); err != nil || !won || audit == nil {
			return err
		}
		return addAudit(ctx, x, *audit)
	})
	if err != nil {
		return false, dbErr(err, "use second factor of staff %d", staffID)
	}
	return won, nil
}

// DeleteTOTP removes the account's second factor (offered or confirmed)
// and reports whether it had one; the audit line goes with it.
func (db *DB) DeleteTOTP(ctx context.Context, staffID int64, audit core.AuditEntry) (bool, error) {
	var had bool
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		res, err := x.ExecContext(ctx, `DELETE FROM staff_totp WHERE staff_id = ?`, staffID)
		if err != nil {
			return err
		}
		if had, err = oneRow(res, "delete second factor"); err != nil || !had {
			return err
		}
		return addAudit(ctx, x, audit)
	})
	if err != nil {
		return false, dbErr(err, "delete second factor of staff %d", staffID)
	}
	return had, nil
}

// LoginChallenge is a sign-in whose password was right, waiting for its code.
type LoginChallenge struct {
	StaffID int64  `db:"staff_id"`
	Next    string `db:"next_url"`
	Tries   int    `db:"tries"`
}

// CreateLoginChallenge stores a sign-in waiting for its code until
// expiresAt, and purges the expired ones.
func (db *DB) CreateLoginChallenge(ctx context.Context, tokenHash string, c LoginChallenge, now, expiresAt time.Time) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM login_challenge WHERE expires_at <= ?`, ms(now)); err != nil {
		return dbErr(err, "purge login challenges")
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO login_challenge (token_hash, staff_id, next_url, expires_at) VALUES (?, ?, ?, ?)`,
		tokenHash, c.StaffID, c.Next, ms(expiresAt)); err != nil {
		return dbErr(err, "create login challenge")
	}
	return nil
}

// TryLoginChallenge counts one code tried for the live challenge and
// returns it with that try counted; access.ErrNoChallenge when there is none
// or it has used up maxTries (it is then deleted).
func (db *DB) TryLoginChallenge(ctx context.Context, tokenHash string, now time.Time, maxTries int) (LoginChallenge, error) {
	var c LoginChallenge
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		res, err := x.ExecContext(ctx, `UPDATE login_challenge SET tries = tries + 1 WHERE token_hash = ? AND expires_at > ? AND tries < ?`,
			tokenHash, ms(now), maxTries)
		if err != nil {
			return err
		}
		if found, err := oneRow(res, "try login challenge"); err != nil {
			return err
		} else if !found {
			return access.ErrNoChallenge
		}
		return x.GetContext(ctx, &c, `SELECT staff_id, next_url, tries FROM login_challenge WHERE token_hash = ?`, tokenHash)
	})
	if errors.Is(err, access.ErrNoChallenge) {
		// Used up or expired: gone for good (after the rollback above).
		return LoginChallenge{}, errors.Join(err, db.DeleteLoginChallenge(ctx, tokenHash))
	}
	if err != nil {
		return LoginChallenge{}, dbErr(err, "login challenge")
	}
	return c, nil
}

// DeleteLoginChallenge ends a challenge once its sign-in is done.
func (db *DB) DeleteLoginChallenge(ctx context.Context, tokenHash string) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM login_challenge WHERE token_hash = ?`, tokenHash); err != nil {
		return dbErr(err, "delete login challenge")
	}
	return nil
}

// StaffByID returns the account with id, disabled ones included, or
// access.ErrStaffNotFound: the sign-in's second step knows the account by id.
func (db *DB) StaffByID(ctx context.Context, id int64) (access.Staff, error) {
	var r staffRow
	err := db.r.GetContext(ctx, &r, `SELECT `+staffCols+` FROM staff WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return access.Staff{}, access.ErrStaffNotFound
	}
	if err != nil {
		return access.Staff{}, dbErr(err, "staff %d", id)
	}
	return r.staff(), nil
}
