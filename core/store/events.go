package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// Event details are stored as a JSON object in order_event.detail and read
// back with encoding/json: numbers come back as float64, nested objects as
// map[string]any. A nil Detail is stored as {} and read back as an empty map.

// AddEvent appends an event outside any transaction. Inside an InTx callback
// use Tx.AddEvent: on SQLite this one needs the writer connection the
// transaction is holding.
func (db *DB) AddEvent(ctx context.Context, ev core.Event) error {
	return addEvent(ctx, db.w, ev)
}

// AddEvent appends an event in the transaction.
func (t *tx) AddEvent(ctx context.Context, ev core.Event) error {
	return addEvent(ctx, t.x, ev)
}

func addEvent(ctx context.Context, x sqlx.ExecerContext, ev core.Event) error {
	detail := []byte("{}")
	if ev.Detail != nil {
		var err error
		if detail, err = json.Marshal(ev.Detail); err != nil {
			return fmt.Errorf("store: event %s of %s: encode detail: %w", ev.Kind, ev.OrderNo, err)
		}
	}
	_, err := x.ExecContext(ctx, `INSERT INTO order_event (order_no, at, kind, detail) VALUES (?, ?, ?, ?)`,
		ev.OrderNo, ms(ev.At), ev.Kind, string(detail))
	if err != nil {
		return dbErr(err, "add event %s of %s", ev.Kind, ev.OrderNo)
	}
	return nil
}

// Events returns the order's timeline, oldest first (by insertion).
func (db *DB) Events(ctx context.Context, orderNo string) ([]core.Event, error) {
	var rs []struct {
		ID      int64  `db:"id"`
		OrderNo string `db:"order_no"`
		At      int64  `db:"at"`
		Kind    string `db:"kind"`
		Detail  string `db:"detail"`
	}
	err := db.r.SelectContext(ctx, &rs,
		`SELECT id, order_no, at, kind, detail FROM order_event WHERE order_no = ? ORDER BY id`, orderNo)
	if err != nil {
		return nil, dbErr(err, "events of %s", orderNo)
	}
	out := make([]core.Event, len(rs))
	for i, r := range rs {
		ev := core.Event{ID: r.ID, OrderNo: r.OrderNo, At: fromMS(r.At), Kind: r.Kind, Detail: map[string]any{}}
		if err := json.Unmarshal([]byte(r.Detail), &ev.Detail); err != nil {
			return nil, fmt.Errorf("store: event %d of %s: decode detail: %w", r.ID, orderNo, err)
		}
		out[i] = ev
	}
	return out, nil
}
