package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"seatflow/core"
)

var (
	_ core.DeadLetterStore = (*DB)(nil)
	_ core.DeadLetterTx    = (*tx)(nil)
)

const deadLetterCols = `id, msg_key, source, order_no, hop, trace_id, payload, attempts, last_error, created_at`

type deadLetterRow struct {
	ID        int64          `db:"id"`
	MsgKey    sql.NullString `db:"msg_key"`
	Source    string         `db:"source"`
	OrderNo   string         `db:"order_no"`
	Hop       int            `db:"hop"`
	TraceID   string         `db:"trace_id"`
	Payload   string         `db:"payload"`
	Attempts  int            `db:"attempts"`
	LastError string         `db:"last_error"`
	CreatedAt int64          `db:"created_at"`
}

// deadLetter rebuilds the message from the payload (its due time is in no
// column); a payload that is not a message keeps the columns' fields.
func (r deadLetterRow) deadLetter() core.DeadLetter {
	msg := core.TimeoutMsg{OrderNo: r.OrderNo, Hop: r.Hop, TraceID: r.TraceID}
	var decoded core.TimeoutMsg
	if json.Unmarshal([]byte(r.Payload), &decoded) == nil && decoded.OrderNo == r.OrderNo {
		msg = decoded
	}
	return core.DeadLetter{ID: r.ID, MsgKey: r.MsgKey.String, Source: r.Source, Msg: msg, Payload: r.Payload,
		Attempts: r.Attempts, LastError: r.LastError, At: fromMS(r.CreatedAt)}
}

// AddDeadLetter stores d; a second row with d.MsgKey is refused by
// uk_msg_key and reported as false.
func (db *DB) AddDeadLetter(ctx context.Context, d core.DeadLetter) (bool, error) {
	key := sql.NullString{String: d.MsgKey, Valid: d.MsgKey != ""}
	_, err := db.w.ExecContext(ctx, `INSERT INTO dead_letter
 (msg_key, source, order_no, hop, trace_id, payload, attempts, last_error, created_at)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		key, d.Source, d.Msg.OrderNo, d.Msg.Hop, d.Msg.TraceID, d.Payload, d.Attempts, d.LastError, ms(d.At))
	if isDuplicate(err) {
		return false, nil
	}
	if err != nil {
		return false, dbErr(err, "add dead letter of %s", d.Msg.OrderNo)
	}
	return true, nil
}

// DeadLetters lists dead letters, newest first.
func (db *DB) DeadLetters(ctx context.Context, limit int) ([]core.DeadLetter, error) {
	var rows []deadLetterRow
	err := db.r.SelectContext(ctx, &rows, `SELECT `+deadLetterCols+` FROM dead_letter ORDER BY created_at DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, dbErr(err, "dead letters")
	}
	out := make([]core.DeadLetter, len(rows))
	for i, r := range rows {
		out[i] = r.deadLetter()
	}
	return out, nil
}

// DeadLetterCount counts the dead letters waiting for ops (a retried or
// discarded one is deleted).
func (db *DB) DeadLetterCount(ctx context.Context) (int, error) {
	var n int
	if err := db.r.GetContext(ctx, &n, `SELECT COUNT(*) FROM dead_letter`); err != nil {
		return 0, dbErr(err, "count dead letters")
	}
	return n, nil
}

// DeadLetter returns one dead letter by id.
func (db *DB) DeadLetter(ctx context.Context, id int64) (core.DeadLetter, error) {
	var r deadLetterRow
	err := db.r.GetContext(ctx, &r, `SELECT `+deadLetterCols+` FROM dead_letter WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return core.DeadLetter{}, fmt.Errorf("dead letter %d: %w", id, core.ErrDeadLetterNotFound)
	}
	if err != nil {
		return core.DeadLetter{}, dbErr(err, "dead letter %d", id)
	}
	return r.deadLetter(), nil
}

// InDeadLetterTx implements core.DeadLetterStore on InTx (the same retries).
func (db *DB) InDeadLetterTx(ctx context.Context, fn func(core.DeadLetterTx) error) error {
	return db.InTx(ctx, func(t core.Tx) error { return fn(t.(*tx)) })
}

// DeleteDeadLetter deletes one dead letter; false when it is gone already.
func (t *tx) DeleteDeadLetter(ctx context.Context, id int64) (bool, error) {
	res, err := t.x.ExecContext(ctx, `DELETE FROM dead_letter WHERE id = ?`, id)
	if err != nil {
		return false, dbErr(err, "delete dead letter %d", id)
	}
	return oneRow(res, fmt.Sprintf("delete dead letter %d", id))
}
