package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core/access"
)

type staffRow struct {
	ID           int64  `db:"id"`
	Username     string `db:"username"`
	PasswordHash string `db:"password_hash"`
	Role         string `db:"role"`
	CreatedAt    int64  `db:"created_at"`
	Disabled     bool   `db:"disabled"`
	TimeZone     string `db:"time_zone"`
	CreatedBy    string `db:"created_by"`
}

func (r staffRow) staff() access.Staff {
	return access.Staff{ID: r.ID, Username: r.Username, Role: access.Role(r.Role),
		CreatedAt: fromMS(r.CreatedAt), Disabled: r.Disabled, TimeZone: r.TimeZone, CreatedBy: r.CreatedBy}
}

const staffCols = `id, username, password_hash, role, created_at, disabled, time_zone, created_by`

// CreateStaff adds an account with an already hashed password; a taken
// username is access.ErrStaffExists.
func (db *DB) CreateStaff(ctx context.Context, s access.Staff, passwordHash string) (access.Staff, error) {
	res, err := db.w.ExecContext(ctx,
		`INSERT INTO staff (username, password_hash, role, created_at, disabled, created_by) VALUES (?, ?, ?, ?, ?, ?)`,
		s.Username, passwordHash, string(s.Role), ms(s.CreatedAt), s.Disabled, s.CreatedBy)
	if isDuplicate(err) {
		return access.Staff{}, fmt.Errorf("staff %q: %w", s.Username, access.ErrStaffExists)
	}
	if err != nil {
		return access.Staff{}, dbErr(err, "create staff %q", s.Username)
	}
	if s.ID, err = res.LastInsertId(); err != nil {
		return access.Staff{}, dbErr(err, "create staff %q: id", s.Username)
	}
	return s, nil
}

// StaffLogin returns the account and its password hash for the login check,
// disabled accounts included (the caller refuses them), or
// access.ErrStaffNotFound.
func (db *DB) StaffLogin(ctx context.Context, username string) (access.Staff, string, error) {
	var r staffRow
	err := db.r.GetContext(ctx, &r, `SELECT `+staffCols+` FROM staff WHERE username = ?`, username)
	if err == nil && r.Username != username {
		// MariaDB's collation matched another spelling ('ÁNN ' = 'ann'):
		// only the name itself stands for the account.
		err = sql.ErrNoRows
	}
	if errors.Is(err, sql.ErrNoRows) {
		return access.Staff{}, "", fmt.Errorf("staff %q: %w", username, access.ErrStaffNotFound)
	}
	if err != nil {
		return access.Staff{}, "", dbErr(err, "staff %q", username)
	}
	return r.staff(), r.PasswordHash, nil
}

// StaffList returns every account, by username.
func (db *DB) StaffList(ctx context.Context) ([]access.Staff, error) {
	var rs []staffRow
	if err := db.r.SelectContext(ctx, &rs, `SELECT `+staffCols+` FROM staff ORDER BY username`); err != nil {
		return nil, dbErr(err, "staff list")
	}
	out := make([]access.Staff, len(rs))
	for i, r := range rs {
		out[i] = r.staff()
	}
	return out, nil
}

// SetStaffDisabled disables or re-enables an account and returns it.
// Disabling also ends every session of the account in the same transaction,
// so a disabled member of staff is logged out everywhere at once.
func (db *DB) SetStaffDisabled(ctx context.Context, id int64, disabled bool) (access.Staff, error) {
	var s access.Staff
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		res, err := x.ExecContext(ctx, `UPDATE staff SET disabled = ? WHERE id = ?`, disabled, id)
		if err != nil {
			return err
		}
		if found, err := oneRow(res, "disable staff"); err != nil {
			return err
		} else if !found {
			return fmt.Errorf("staff %d: %w", id, access.ErrStaffNotFound)
		}
		if disabled {
			if err := deleteAccountSessions(ctx, x, id, ""); err != nil {
				return err
			}
		}
		var r staffRow
		if err := x.GetContext(ctx, &r, `SELECT `+staffCols+` FROM staff WHERE id = ?`, id); err != nil {
			return err
		}
		s = r.staff()
		return nil
	})
	if err != nil {
		return access.Staff{}, dbErr(err, "set staff %d disabled=%t", id, disabled)
	}
	return s, nil
}

// CreateSession stores a new login. Without a LastSeenAt it counts as used
// when it was created. The user agent is the browser's own text, kept to
// show on the sessions page: bytes that are not UTF-8 become U+FFFD, or
// MySQL's utf8mb4 column would refuse the login.
func (db *DB) CreateSession(ctx context.Context, s access.Session) error {
	if s.LastSeenAt.IsZero() {
		s.LastSeenAt = s.CreatedAt
	}
	s.UserAgent = strings.ToValidUTF8(s.UserAgent, "\uFFFD")
	_, err := db.w.ExecContext(ctx,
		`INSERT INTO staff_session (token_hash, staff_id, csrf_token, created_at, expires_at, last_seen_at, ip, user_agent)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		s.TokenHash, s.StaffID, s.CSRFToken, ms(s.CreatedAt), ms(s.ExpiresAt), ms(s.LastSeenAt), s.IP, s.UserAgent)
	if err != nil {
		return dbErr(err, "create session")
	}
	return nil
}

type sessionRow struct {
	TokenHash  string `db:"token_hash"`
	CSRFToken  string `db:"csrf_token"`
	CreatedAt  int64  `db:"session_created_at"`
	ExpiresAt  int64  `db:"expires_at"`
	LastSeenAt int64  `db:"last_seen_at"`
	IP         string `db:"ip"`
	UserAgent  string `db:"user_agent"`
	staffRow
}

// Session returns the session with this token hash and its account:
// access.ErrNoSession when there is none, it has expired at now, or the
// account is disabled. Whether it has been idle too long is the caller's
// rule (access.Session.Live).
func (db *DB) Session(ctx context.Context, tokenHash string, now time.Time) (access.Session, access.Staff, error) {
	var r sessionRow
	err := db.r.GetContext(ctx, &r, `
		SELECT s.token_hash, s.csrf_token, s.created_at AS session_created_at, s.expires_at, s.last_seen_at, s.ip, s.user_agent,
		       st.id, st.username, st.password_hash, st.role, st.created_at, st.disabled, st.time_zone, st.created_by
		FROM staff_session s JOIN staff st ON st.id = s.staff_id
		WHERE s.token_hash = ? AND s.expires_at > ? AND st.disabled = 0`, tokenHash, ms(now))
	if errors.Is(err, sql.ErrNoRows) {
		return access.Session{}, access.Staff{}, access.ErrNoSession
	}
	if err != nil {
		return access.Session{}, access.Staff{}, dbErr(err, "session")
	}
	return r.session(), r.staff(), nil
}

// DeleteSession ends one login; deleting a missing session is not an error.
func (db *DB) DeleteSession(ctx context.Context, tokenHash string) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM staff_session WHERE token_hash = ?`, tokenHash); err != nil {
		return dbErr(err, "delete session")
	}
	return nil
}

// DeleteExpiredSessions purges sessions that ended before now and reports
// how many went.
func (db *DB) DeleteExpiredSessions(ctx context.Context, now time.Time) (int64, error) {
	res, err := db.w.ExecContext(ctx, `DELETE FROM staff_session WHERE expires_at <= ?`, ms(now))
	if err != nil {
		return 0, dbErr(err, "delete expired sessions")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbErr(err, "delete expired sessions")
	}
	return n, nil
}
