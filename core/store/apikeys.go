package store

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/access"
)

type apiKeyRow struct {
	ID         int64  `db:"id"`
	Name       string `db:"name"`
	Prefix     string `db:"prefix"`
	KeyHash    string `db:"key_hash"`
	Scopes     string `db:"scopes"`
	CreatedBy  string `db:"created_by"`
	CreatedAt  int64  `db:"created_at"`
	LastUsedAt int64  `db:"last_used_at"`
	RevokedAt  int64  `db:"revoked_at"`
}

func (r apiKeyRow) key() access.APIKey {
	k := access.APIKey{ID: r.ID, Name: r.Name, Prefix: r.Prefix, CreatedBy: r.CreatedBy, CreatedAt: fromMS(r.CreatedAt)}
	for _, s := range strings.Split(r.Scopes, ",") {
		if s != "" {
			k.Scopes = append(k.Scopes, access.Scope(s))
		}
	}
	if r.LastUsedAt != 0 {
		k.LastUsedAt = fromMS(r.LastUsedAt)
	}
	if r.RevokedAt != 0 {
		k.RevokedAt = fromMS(r.RevokedAt)
	}
	return k
}

const apiKeyCols = `id, name, prefix, key_hash, scopes, created_by, created_at, last_used_at, revoked_at`

// CreateAPIKey stores a key by its hash and writes audit in the same
// transaction, so no key exists without its audit line.
func (db *DB) CreateAPIKey(ctx context.Context, k access.APIKey, keyHash string, audit core.AuditEntry) (access.APIKey, error) {
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		res, err := x.ExecContext(ctx, `INSERT INTO api_key (name, prefix, key_hash, scopes, created_by, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, k.Name, k.Prefix, keyHash, access.JoinScopes(k.Scopes), k.CreatedBy, ms(k.CreatedAt))
		if err != nil {
			return dbErr(err, "create API key %q", k.Name)
		}
		if k.ID, err = res.LastInsertId(); err != nil {
			return dbErr(err, "create API key %q: id", k.Name)
		}
		audit.Target = fmt.Sprintf("apikey:%d", k.ID)
		return addAudit(ctx, x, audit)
	})
	if err != nil {
		return access.APIKey{}, err
	}
	return k, nil
}

// APIKeyByHash returns the key whose hash is keyHash, revoked ones
// included (the caller refuses them), or access.ErrAPIKeyNotFound.
func (db *DB) APIKeyByHash(ctx context.Context, keyHash string) (access.APIKey, error) {
	var r apiKeyRow
	err := db.r.GetContext(ctx, &r, `SELECT `+apiKeyCols+` FROM api_key WHERE key_hash = ?`, keyHash)
	if errors.Is(err, sql.ErrNoRows) {
		return access.APIKey{}, access.ErrAPIKeyNotFound
	}
	if err != nil {
		return access.APIKey{}, dbErr(err, "API key")
	}
	// The index lookup is not constant-time; this compare is, so nothing
	// about a near-miss hash leaks through timing (belt and braces: the
	// caller only controls the hash's preimage).
	if subtle.ConstantTimeCompare([]byte(r.KeyHash), []byte(keyHash)) != 1 {
		return access.APIKey{}, access.ErrAPIKeyNotFound
	}
	return r.key(), nil
}

// APIKeys returns every key, newest first.
func (db *DB) APIKeys(ctx context.Context) ([]access.APIKey, error) {
	var rs []apiKeyRow
	if err := db.r.SelectContext(ctx, &rs, `SELECT `+apiKeyCols+` FROM api_key ORDER BY id DESC`); err != nil {
		return nil, dbErr(err, "API keys")
	}
	out := make([]access.APIKey, len(rs))
	for i, r := range rs {
		out[i] = r.key()
	}
	return out, nil
}

// RevokeAPIKey revokes key id at time at (again: no change) and writes
// audit in the same transaction; an unknown id is access.ErrAPIKeyNotFound.
func (db *DB) RevokeAPIKey(ctx context.Context, id int64, at time.Time, audit core.AuditEntry) (access.APIKey, error) {
	var r apiKeyRow
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		if _, err := x.ExecContext(ctx, `UPDATE api_key SET revoked_at = ? WHERE id = ? AND revoked_at = 0`, ms(at), id); err != nil {
			return dbErr(err, "revoke API key %d", id)
		}
		err := x.GetContext(ctx, &r, `SELECT `+apiKeyCols+` FROM api_key WHERE id = ?`, id)
		if errors.Is(err, sql.ErrNoRows) {
			return access.ErrAPIKeyNotFound
		}
		if err != nil {
			return dbErr(err, "revoke API key %d", id)
		}
		audit.Target = fmt.Sprintf("apikey:%d", id)
		return addAudit(ctx, x, audit)
	})
	if err != nil {
		return access.APIKey{}, err
	}
	return r.key(), nil
}

// TouchAPIKey records that key id was used at at, unless it was recorded
// less than every before: one cheap conditional UPDATE, no lock held.
func (db *DB) TouchAPIKey(ctx context.Context, id int64, at time.Time, every time.Duration) error {
	_, err := db.w.ExecContext(ctx, `UPDATE api_key SET last_used_at = ? WHERE id = ? AND last_used_at < ?`,
		ms(at), id, ms(at.Add(-every)))
	if err != nil {
		return dbErr(err, "touch API key %d", id)
	}
	return nil
}
