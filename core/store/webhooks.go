package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/webhook"
)

// The storefront's webhook outbox (migrations 00030): the engine's
// transactions insert events, core/webhook's dispatchers claim, send and
// mark them. A row is due while delivered_at is NULL and next_attempt_at
// has passed; a claim moves next_attempt_at past the claimer's requests.

var (
	_ core.WebhookTx = (*tx)(nil)
	_ webhook.Outbox = (*DB)(nil)
)

// maxWebhookError is the width of webhook_outbox.last_error.
const maxWebhookError = 512

// AddWebhookEvents queues evs in the transaction (core.WebhookTx), in one
// multi-row INSERT; once it commits, InTx tells OnWebhooksCommitted's
// function. A malformed event, or an id queued before, fails the call.
func (t *tx) AddWebhookEvents(ctx context.Context, evs []core.WebhookEvent) error {
	if len(evs) == 0 {
		return nil
	}
	args := make([]any, 0, 4*len(evs))
	for _, ev := range evs {
		body, err := webhook.Encode(ev)
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		args = append(args, ev.ID, ev.Kind, string(body), ms(ev.At))
	}
	_, err := t.x.ExecContext(ctx, `INSERT INTO webhook_outbox (event_id, kind, payload, created_at) VALUES `+
		placeholders(len(evs), 4), args...)
	if err != nil {
		return dbErr(err, "add webhook events %s… (%d in all)", evs[0].ID, len(evs))
	}
	t.webhooks = true
	return nil
}

// OnWebhooksCommitted has InTx call wake after each commit of a transaction
// that queued webhook events, so the dispatcher sends them at once rather
// than at its next poll, whichever engine path wrote them. nil: none.
func (db *DB) OnWebhooksCommitted(wake func()) { db.webhooksWake.Store(&wake) }

// webhooksCommitted runs OnWebhooksCommitted's function, if any.
func (db *DB) webhooksCommitted() {
	if wake := db.webhooksWake.Load(); wake != nil && *wake != nil {
		(*wake)()
	}
}

type pendingRow struct {
	ID       int64  `db:"id"`
	EventID  string `db:"event_id"`
	Kind     string `db:"kind"`
	Payload  string `db:"payload"`
	Attempts int    `db:"attempts"`
}

// ClaimWebhooks implements webhook.Outbox. Both dialects claim atomically,
// as the DB delay queue does: SQLite in one UPDATE ... RETURNING (its one
// writer takes the write lock before the subquery reads), MySQL by locking
// the due rows while skipping those another claim is locking right now.
func (db *DB) ClaimWebhooks(ctx context.Context, now, until time.Time, n int) ([]webhook.Pending, error) {
	var rows []pendingRow
	var err error
	if db.dialect == SQLite {
		err = db.w.SelectContext(ctx, &rows, `UPDATE webhook_outbox SET next_attempt_at = ?
 WHERE id IN (SELECT id FROM webhook_outbox WHERE delivered_at IS NULL AND next_attempt_at <= ? ORDER BY id LIMIT ?)
 RETURNING id, event_id, kind, payload, attempts`, ms(until), ms(now), n)
		// RETURNING has no defined order.
		slices.SortFunc(rows, func(a, b pendingRow) int { return cmp.Compare(a.ID, b.ID) })
	} else {
		rows, err = db.claimWebhooksMySQL(ctx, now, until, n)
	}
	if err != nil {
		return nil, dbErr(err, "claim webhook events")
	}
	out := make([]webhook.Pending, len(rows))
	for i, r := range rows {
		out[i] = webhook.Pending{ID: r.ID, EventID: r.EventID, Kind: r.Kind, Body: []byte(r.Payload), Attempts: r.Attempts}
	}
	return out, nil
}

// claimWebhooksMySQL runs in READ COMMITTED, so InnoDB takes no gap locks
// that would hold up the engine's inserts while the claim runs.
func (db *DB) claimWebhooksMySQL(ctx context.Context, now, until time.Time, n int) ([]pendingRow, error) {
	sx, err := db.w.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, err
	}
	defer sx.Rollback() //nolint:errcheck // a no-op after Commit
	var rows []pendingRow
	if err := sx.SelectContext(ctx, &rows, `SELECT id, event_id, kind, payload, attempts FROM webhook_outbox
 WHERE delivered_at IS NULL AND next_attempt_at <= ? ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`, ms(now), n); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	query, args, err := sqlx.In(`UPDATE webhook_outbox SET next_attempt_at = ? WHERE id IN (?)`, ms(until), ids)
	if err != nil {
		return nil, err
	}
	if _, err := sx.ExecContext(ctx, query, args...); err != nil {
		return nil, err
	}
	return rows, sx.Commit()
}

// MarkWebhookDelivered implements webhook.Outbox. Delivered is final: a
// claim that ran out and is recorded late changes nothing after it.
func (db *DB) MarkWebhookDelivered(ctx context.Context, id int64, at time.Time) error {
	_, err := db.w.ExecContext(ctx, `UPDATE webhook_outbox SET delivered_at = ?, attempts = attempts + 1
 WHERE id = ? AND delivered_at IS NULL`, ms(at), id)
	if err != nil {
		return dbErr(err, "mark webhook event %d delivered", id)
	}
	return nil
}

// MarkWebhookFailed implements webhook.Outbox: the claim's end, which only
// that claim wrote into next_attempt_at, says it still holds the row.
func (db *DB) MarkWebhookFailed(ctx context.Context, id int64, claimedUntil, next time.Time, lastErr string) error {
	if len(lastErr) > maxWebhookError {
		// Cut on a rune boundary: MySQL refuses invalid UTF-8.
		lastErr = strings.ToValidUTF8(lastErr[:maxWebhookError], "")
	}
	_, err := db.w.ExecContext(ctx, `UPDATE webhook_outbox SET next_attempt_at = ?, attempts = attempts + 1, last_error = ?
 WHERE id = ? AND delivered_at IS NULL AND next_attempt_at = ?`, ms(next), lastErr, id, ms(claimedUntil))
	if err != nil {
		return dbErr(err, "mark webhook event %d failed", id)
	}
	return nil
}

// WebhookBacklog implements webhook.Outbox: one range of idx_due.
func (db *DB) WebhookBacklog(ctx context.Context) (webhook.Backlog, error) {
	var r struct {
		N      int   `db:"n"`
		Oldest int64 `db:"oldest"`
	}
	if err := db.r.GetContext(ctx, &r, `SELECT COUNT(*) AS n, COALESCE(MIN(created_at), 0) AS oldest
 FROM webhook_outbox WHERE delivered_at IS NULL`); err != nil {
		return webhook.Backlog{}, dbErr(err, "webhook backlog")
	}
	return webhook.Backlog{Undelivered: r.N, Oldest: fromMS(r.Oldest)}, nil
}

// PruneWebhookOutbox deletes up to batch events delivered before before,
// oldest first, and returns how many and how long the DELETE took.
// Undelivered events are never deleted.
func (db *DB) PruneWebhookOutbox(ctx context.Context, before time.Time, batch int) (int, time.Duration, error) {
	// SQLite has no DELETE ... LIMIT and MariaDB no LIMIT in an IN
	// subquery: the ids first, then their DELETE.
	var ids []int64
	if err := db.w.SelectContext(ctx, &ids, `SELECT id FROM webhook_outbox WHERE delivered_at < ?
 ORDER BY delivered_at LIMIT ?`, ms(before), batch); err != nil {
		return 0, 0, dbErr(err, "prune webhook outbox")
	}
	if len(ids) == 0 {
		return 0, 0, nil
	}
	query, args, err := sqlx.In(`DELETE FROM webhook_outbox WHERE delivered_at < ? AND id IN (?)`, ms(before), ids)
	if err != nil {
		return 0, 0, fmt.Errorf("store: prune webhook outbox: %w", err)
	}
	start := time.Now()
	res, err := db.w.ExecContext(ctx, query, args...)
	took := time.Since(start)
	if err != nil {
		return 0, 0, dbErr(err, "prune webhook outbox")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, 0, dbErr(err, "prune webhook outbox")
	}
	return int(n), took, nil
}
