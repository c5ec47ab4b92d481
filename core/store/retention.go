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
// of orders settled long ago are deleted in bounded batches: each batch is one
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

// pruneEventsSQL deletes the events in [lo, hi) older than the cut-off
// whose order number has nothing still going on since it: no order that is
// pending or closed (paid, cancelled) after it, no refund requested or
// decided after it or still waiting, and no discrepancy case still open or
// resolved after it. A refund keeps closed_at at the payment's time, so
// its own row dates it. A number no order has (a payment for an unknown
// order, a repaired orphan lock) goes by its events' own age. Each NOT
// EXISTS is one lookup of an order_no index per row of the range.
const pruneEventsSQL = `DELETE FROM order_event WHERE id >= ? AND id < ? AND at < ?
 AND NOT EXISTS (SELECT 1 FROM order_info o WHERE o.order_no = order_event.order_no
   AND (o.status = 0 OR o.closed_at = 0 OR o.closed_at >= ?))
 AND NOT EXISTS (SELECT 1 FROM refund r WHERE r.order_no = order_event.order_no
   AND (r.state = ? OR r.created_at >= ? OR r.decided_at >= ?))
 AND NOT EXISTS (SELECT 1 FROM discrepancy d WHERE d.order_no = order_event.order_no
   AND (d.status = ? OR d.resolved_at >= ?))`

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
	cut := ms(before)
	res, err := db.w.ExecContext(ctx, pruneEventsSQL, first.ID, hi, cut, cut,
		string(core.RefundRequested), cut, cut, DiscrepancyOpen, cut)
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
