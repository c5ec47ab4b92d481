package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"seatflow/core"
)

// Retention: order_event grows by several rows per order forever. The events
// of orders closed long ago are deleted in bounded batches: each batch is one
// autocommit DELETE over a primary-key range of at most `batch` ids, so it
// locks at most that many rows for as long as one short statement takes,
// and placements (which append at the end of the id range) never wait on it.
// Money records (payment, refund, discrepancy) and the audit log are never
// touched here.

// EventBatch is the outcome of one pruning batch.
type EventBatch struct {
	Deleted int
	// Next is the first id of the next batch; Done reports that the range
	// reached events younger than the cut-off (or the table's end).
	Next int64
	Done bool
	Took time.Duration // how long the DELETE (and so its locks) lasted
}

// pruneEventsSQL deletes the events in [lo, hi) older than the cut-off of
// orders closed (paid, cancelled, refunded) before it. The correlated
// EXISTS is one uk_order_no lookup per row of the range.
const pruneEventsSQL = `DELETE FROM order_event WHERE id >= ? AND id < ? AND at < ?
 AND EXISTS (SELECT 1 FROM order_info o WHERE o.order_no = order_event.order_no
   AND o.status <> 0 AND o.closed_at > 0 AND o.closed_at < ?)`

// PruneOrderEvents deletes one batch of closed orders' events older than
// before, starting at id from (0: the oldest event). Call it again with
// Next until Done.
func (db *DB) PruneOrderEvents(ctx context.Context, from int64, before time.Time, batch int) (EventBatch, error) {
	if batch <= 0 {
		return EventBatch{}, fmt.Errorf("store: prune order events: batch %d must be positive", batch)
	}
	var first struct {
		ID int64 `db:"id"`
		At int64 `db:"at"`
	}
	err := db.w.GetContext(ctx, &first, `SELECT id, at FROM order_event WHERE id >= ? ORDER BY id LIMIT 1`, from)
	if errors.Is(err, sql.ErrNoRows) {
		return EventBatch{Next: from, Done: true}, nil
	}
	if err != nil {
		return EventBatch{}, dbErr(err, "prune order events: first id")
	}
	// Ids grow with time: once the range starts at a young event, every
	// later one is young too.
	if first.At >= ms(before) {
		return EventBatch{Next: first.ID, Done: true}, nil
	}
	hi := first.ID + int64(batch)
	start := time.Now()
	res, err := db.w.ExecContext(ctx, pruneEventsSQL, first.ID, hi, ms(before), ms(before))
	took := time.Since(start)
	if err != nil {
		return EventBatch{}, dbErr(err, "prune order events [%d, %d)", first.ID, hi)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return EventBatch{}, dbErr(err, "prune order events [%d, %d)", first.ID, hi)
	}
	return EventBatch{Deleted: int(n), Next: hi, Took: took}, nil
}

// ShowsEndedBefore returns the ids of the shows that started before before
// and have no pending order: the shows whose seat-store state retention
// deletes. No show sells past its start (Show.SalesEndAt), so none of
// these can take a new order; a pending one (a timeout chain running late)
// keeps its show's holds and counters until it ends. Deleting gone keys
// again is cheap, so no mark is kept of the shows done already.
func (db *DB) ShowsEndedBefore(ctx context.Context, before time.Time) ([]int64, error) {
	var ids []int64
	if err := db.r.SelectContext(ctx, &ids, `SELECT id FROM show_info s WHERE starts_at > 0 AND starts_at < ?
 AND NOT EXISTS (SELECT 1 FROM order_info o WHERE o.show_id = s.id AND o.status = ?) ORDER BY id`,
		ms(before), int(core.StatusPending)); err != nil {
		return nil, dbErr(err, "shows ended before %s", before.Format(time.RFC3339))
	}
	return ids, nil
}
