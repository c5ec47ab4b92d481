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

func (r sessionRow) session() access.Session {
	return access.Session{TokenHash: r.TokenHash, StaffID: r.ID, CSRFToken: r.CSRFToken,
		CreatedAt: fromMS(r.CreatedAt), ExpiresAt: fromMS(r.ExpiresAt), LastSeenAt: fromMS(r.LastSeenAt),
		IP: r.IP, UserAgent: r.UserAgent}
}

// TouchSession records a use of the session at at, unless its last use was
// recorded less than every before: one conditional UPDATE, so instances
// racing to touch one session write it about once.
func (db *DB) TouchSession(ctx context.Context, tokenHash string, at time.Time, every time.Duration) error {
	_, err := db.w.ExecContext(ctx, `UPDATE staff_session SET last_seen_at = ? WHERE token_hash = ? AND last_seen_at <= ?`,
		ms(at), tokenHash, ms(at.Add(-every)))
	if err != nil {
		return dbErr(err, "touch session")
	}
	return nil
}

// StaffSessions returns the account's sessions not expired at now, the
// most recently used first. Idle ones are included: access.Session.Live
// tells them apart.
func (db *DB) StaffSessions(ctx context.Context, staffID int64, now time.Time) ([]access.Session, error) {
	var rs []sessionRow
	err := db.r.SelectContext(ctx, &rs, `
		SELECT s.token_hash, s.csrf_token, s.created_at AS session_created_at, s.expires_at, s.last_seen_at, s.ip, s.user_agent,
		       st.id, st.username, st.password_hash, st.role, st.created_at, st.disabled
		FROM staff_session s JOIN staff st ON st.id = s.staff_id
		WHERE s.staff_id = ? AND s.expires_at > ?
		ORDER BY s.last_seen_at DESC, s.created_at DESC`, staffID, ms(now))
	if err != nil {
		return nil, dbErr(err, "sessions of staff %d", staffID)
	}
	out := make([]access.Session, len(rs))
	for i, r := range rs {
		out[i] = r.session()
	}
	return out, nil
}

// EndSessions deletes every session of account staffID but the one whose
// token hash is keep ("" keeps none), and writes audit in the same
// transaction, its target the account and its detail how many sessions
// ended. It returns the token hashes it ended, so the caller can close
// their event streams; an unknown account is access.ErrStaffNotFound.
func (db *DB) EndSessions(ctx context.Context, staffID int64, keep string, audit core.AuditEntry) ([]string, error) {
	var ended []string
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		ended = nil // a rerun starts afresh
		var username string
		err := x.GetContext(ctx, &username, `SELECT username FROM staff WHERE id = ?`, staffID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("staff %d: %w", staffID, access.ErrStaffNotFound)
		}
		if err != nil {
			return dbErr(err, "end sessions of staff %d", staffID)
		}
		// Locked, so the count audited is the number deleted even while
		// the account logs out or in elsewhere.
		if err := x.SelectContext(ctx, &ended, `SELECT token_hash FROM staff_session WHERE staff_id = ? AND token_hash <> ?`+
			db.dialect.forUpdate(), staffID, keep); err != nil {
			return dbErr(err, "end sessions of staff %d", staffID)
		}
		if len(ended) > 0 {
			q, args, err := sqlx.In(`DELETE FROM staff_session WHERE token_hash IN (?)`, ended)
			if err != nil {
				return fmt.Errorf("store: end sessions of staff %d: %w", staffID, err)
			}
			if _, err := x.ExecContext(ctx, q, args...); err != nil {
				return dbErr(err, "end sessions of staff %d", staffID)
			}
		}
		audit.Target, audit.Detail = "staff:"+username, map[string]any{"sessions": len(ended)}
		return addAudit(ctx, x, audit)
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}
