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
	KeyID       string `db:"key_id"`
	CreatedAt   int64  `db:"created_at"`
	ConfirmedAt int64  `db:"confirmed_at"`
	LastStep    int64  `db:"last_step"`
	LockedUntil int64  `db:"locked_until"`
	Lockouts    int    `db:"lockouts"`
}

const totpCols = `staff_id, secret, key_id, created_at, confirmed_at, last_step, locked_until, lockouts`

// SetTOTPKeys gives the keys second-factor secrets are sealed with; call
// it before serving. Without keys no second factor can be offered.
func (db *DB) SetTOTPKeys(k *access.TOTPKeys) { db.totpKeys = k }

// totp opens the row's secret: one stored before secrets were sealed
// (an empty key_id) is read as it is, until SealTOTPSecrets seals it.
func (db *DB) totp(r totpRow) (access.TOTP, error) {
	secret := r.Secret
	if r.KeyID != "" {
		if db.totpKeys == nil {
			return access.TOTP{}, access.ErrTOTPNoKey
		}
		var err error
		if secret, err = db.totpKeys.Open(r.StaffID, r.KeyID, r.Secret); err != nil {
			return access.TOTP{}, err
		}
	}
	return access.TOTP{StaffID: r.StaffID, Secret: secret, CreatedAt: fromMS(r.CreatedAt),
		ConfirmedAt: fromMS(r.ConfirmedAt), LastStep: r.LastStep, LockedUntil: fromMS(r.LockedUntil), Lockouts: r.Lockouts}, nil
}

// OfferTOTP stores a new, unconfirmed secret for the account, sealed,
// replacing an earlier offer; access.ErrTOTPEnrolled when it has a
// confirmed one, access.ErrTOTPNoKey when there is no key to seal it with.
func (db *DB) OfferTOTP(ctx context.Context, staffID int64, secret string, now time.Time) error {
	if db.totpKeys == nil {
		return access.ErrTOTPNoKey
	}
	keyID, sealed := db.totpKeys.Seal(staffID, secret)
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
		_, err = x.ExecContext(ctx, `INSERT INTO staff_totp (staff_id, secret, key_id, created_at) VALUES (?, ?, ?, ?)`,
			staffID, sealed, keyID, ms(now))
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
	err := db.r.GetContext(ctx, &r, `SELECT `+totpCols+` FROM staff_totp WHERE staff_id = ?`, staffID)
	if errors.Is(err, sql.ErrNoRows) {
		return access.TOTP{}, false, nil
	}
	if err != nil {
		return access.TOTP{}, false, dbErr(err, "second factor of staff %d", staffID)
	}
	f, err := db.totp(r)
	if err != nil {
		return access.TOTP{}, false, dbErr(err, "second factor of staff %d", staffID)
	}
	return f, true, nil
}

// SealTOTPSecrets seals every secret not sealed under the current key:
// the ones stored in clear before secrets were sealed, and the ones of a
// previous key after a rotation. It returns how many it sealed. Each row
// is rewritten only if nobody changed it meanwhile, so instances starting
// together do not clash.
func (db *DB) SealTOTPSecrets(ctx context.Context) (int, error) {
	if db.totpKeys == nil {
		return 0, access.ErrTOTPNoKey
	}
	var rows []totpRow
	if err := db.r.SelectContext(ctx, &rows, `SELECT `+totpCols+` FROM staff_totp WHERE key_id <> ?`, db.totpKeys.Current()); err != nil {
		return 0, dbErr(err, "second factors to seal")
	}
	n := 0
	for _, r := range rows {
		f, err := db.totp(r)
		if err != nil {
			return n, dbErr(err, "seal second factors")
		}
		keyID, sealed := db.totpKeys.Seal(r.StaffID, f.Secret)
		res, err := db.w.ExecContext(ctx, `UPDATE staff_totp SET secret = ?, key_id = ? WHERE staff_id = ? AND key_id = ? AND secret = ?`,
			sealed, keyID, r.StaffID, r.KeyID, r.Secret)
		if err != nil {
			return n, dbErr(err, "seal second factor of staff %d", r.StaffID)
		}
		if won, err := oneRow(res, "seal second factor"); err != nil {
			return n, dbErr(err, "seal second factor of staff %d", r.StaffID)
		} else if won {
			n++
		}
	}
	return n, nil
}

// CountTOTP returns how many accounts have a second factor, offered or
// confirmed: a server without a key must not start over them.
func (db *DB) CountTOTP(ctx context.Context) (int, error) {
	var n int
	if err := db.r.GetContext(ctx, &n, `SELECT COUNT(*) FROM staff_totp`); err != nil {
		return 0, dbErr(err, "count second factors")
	}
	return n, nil
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
// when the step is not newer than the last one accepted (a replayed code),
// the factor is locked at now, or there is no such factor; the audit line
// is written only on success, which also clears the count of wrong codes.
func (db *DB) UseTOTPStep(ctx context.Context, staffID, step int64, confirm bool, now time.Time, audit *core.AuditEntry) (bool, error) {
	const reset = `failed_codes = 0, failed_since = 0, lockouts = 0`
	q := `UPDATE staff_totp SET last_step = ?, ` + reset + ` WHERE staff_id = ? AND confirmed_at > 0 AND last_step < ? AND locked_until <= ?`
	args := []any{step, staffID, step, ms(now)}
	if confirm {
		q = `UPDATE staff_totp SET last_step = ?, confirmed_at = ?, ` + reset + ` WHERE staff_id = ? AND confirmed_at = 0 AND last_step < ?`
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

// FailTOTPCode counts a wrong code for the account's factor. The count is
// kept in the database, so it is shared by every instance: the
// access.TOTPMaxFailures-th within access.TOTPFailureWindow locks the
// factor (for access.TOTPLockFor its earlier lockouts) and writes
// lockAudit with it. It returns when the lock it set ends, or zero.
func (db *DB) FailTOTPCode(ctx context.Context, staffID int64, now time.Time, lockAudit core.AuditEntry) (time.Time, error) {
	var until time.Time
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		var c struct {
			Failed   int   `db:"failed_codes"`
			Since    int64 `db:"failed_since"`
			Lockouts int   `db:"lockouts"`
		}
		err := x.GetContext(ctx, &c, `SELECT failed_codes, failed_since, lockouts FROM staff_totp WHERE staff_id = ?`+db.dialect.forUpdate(), staffID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // the factor was removed meanwhile: nothing to count
		}
		if err != nil {
			return err
		}
		if now.Sub(fromMS(c.Since)) >= access.TOTPFailureWindow {
			c.Failed, c.Since = 0, ms(now)
		}
		c.Failed++
		locked := int64(0)
		if c.Failed >= access.TOTPMaxFailures {
			until = now.Add(access.TOTPLockFor(c.Lockouts))
			locked, c.Failed, c.Since = ms(until), 0, 0
			c.Lockouts++
		}
		if _, err := x.ExecContext(ctx, `UPDATE staff_totp SET failed_codes = ?, failed_since = ?, lockouts = ?,
  locked_until = CASE WHEN ? > 0 THEN ? ELSE locked_until END WHERE staff_id = ?`,
			c.Failed, c.Since, c.Lockouts, locked, locked, staffID); err != nil {
			return err
		}
		if locked == 0 {
			return nil
		}
		return addAudit(ctx, x, lockAudit)
	})
	if err != nil {
		return time.Time{}, dbErr(err, "count a wrong code of staff %d", staffID)
	}
	return until, nil
}

// UnlockTOTP lifts the account's lock and forgets its wrong codes; it
// reports whether the factor was locked at now (the audit line goes with it).
func (db *DB) UnlockTOTP(ctx context.Context, staffID int64, now time.Time, audit core.AuditEntry) (bool, error) {
	var was bool
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		res, err := x.ExecContext(ctx, `UPDATE staff_totp SET locked_until = 0, failed_codes = 0, failed_since = 0, lockouts = 0
  WHERE staff_id = ? AND locked_until > ?`, staffID, ms(now))
		if err != nil {
			return err
		}
		if was, err = oneRow(res, "unlock second factor"); err != nil || !was {
			return err
		}
		return addAudit(ctx, x, audit)
	})
	if err != nil {
		return false, dbErr(err, "unlock second factor of staff %d", staffID)
	}
	return was, nil
}

// TOTPLocked returns the accounts whose factor is locked at now, with
// when the lock ends.
func (db *DB) TOTPLocked(ctx context.Context, now time.Time) (map[int64]time.Time, error) {
	var rows []struct {
		StaffID int64 `db:"staff_id"`
		Until   int64 `db:"locked_until"`
	}
	if err := db.r.SelectContext(ctx, &rows, `SELECT staff_id, locked_until FROM staff_totp WHERE locked_until > ?`, ms(now)); err != nil {
		return nil, dbErr(err, "locked second factors")
	}
	out := make(map[int64]time.Time, len(rows))
	for _, r := range rows {
		out[r.StaffID] = fromMS(r.Until)
	}
	return out, nil
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
