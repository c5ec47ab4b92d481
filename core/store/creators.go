package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"seatflow/core"
)

// ActorCreator returns who created actor's staff account (staff:<name>) or
// minted its API key (api:<prefix>), for four eyes on money
// (core.Creators); "" for an actor of another kind, one not found, or an
// account older than the record.
func (db *DB) ActorCreator(ctx context.Context, actor string) (string, error) {
	var query, arg string
	if name, ok := strings.CutPrefix(actor, core.ActorStaffPrefix); ok {
		query, arg = `SELECT created_by FROM staff WHERE username = ?`, name
	} else if prefix, ok := strings.CutPrefix(actor, core.ActorAPIPrefix); ok {
		// A prefix has 48 random bits: two keys sharing one is not a case.
		query, arg = `SELECT created_by FROM api_key WHERE prefix = ? ORDER BY id LIMIT 1`, prefix
	} else {
		return "", nil
	}
	var by string
	err := db.r.GetContext(ctx, &by, query, arg)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", dbErr(err, "creator of %s", actor)
	}
	return by, nil
}
