package dbqueue

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// taskRow is the part of a delay_task row a delivery needs.
type taskRow struct {
	ID       int64  `db:"id"`
	OrderNo  string `db:"order_no"`
	Hop      int    `db:"hop"`
	TraceID  string `db:"trace_id"`
	DueAt    int64  `db:"due_at"`
	Attempts int    `db:"attempts"`
}

func (r taskRow) msg() core.TimeoutMsg {
	return core.TimeoutMsg{OrderNo: r.OrderNo, Hop: r.Hop, DueAt: time.UnixMilli(r.DueAt).UTC(), TraceID: r.TraceID}
}

// claim stamps up to n tasks that are due at now (unix ms) and not under a
// live lease with this queue's owner and a lease ending at until, and
// returns them oldest due first. Both dialects claim atomically: a row is
// never handed to two owners while its lease lasts.
func (q *Queue) claim(ctx context.Context, now, until int64, n int) ([]taskRow, error) {
	var rows []taskRow
	var err error
	if q.dialect == SQLite {
		rows, err = q.claimSQLite(ctx, now, until, n)
	} else {
		rows, err = q.claimMySQL(ctx, now, until, n)
	}
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	return rows, nil
}

// claimSQLite is one statement: SQLite has one writer, and an UPDATE takes
// the write lock before it reads, so its subquery cannot race another claim.
func (q *Queue) claimSQLite(ctx context.Context, now, until int64, n int) ([]taskRow, error) {
	var rows []taskRow
	err := q.db.SelectContext(ctx, &rows, `
		UPDATE delay_task SET claimed_by = ?, claimed_until = ?
		WHERE id IN (SELECT id FROM delay_task WHERE due_at <= ? AND claimed_until < ? ORDER BY due_at LIMIT ?)
		RETURNING id, order_no, hop, trace_id, due_at, attempts`,
		q.opts.Owner, until, now, now, n)
	if err != nil {
		return nil, err
	}
	// RETURNING has no defined order.
	slices.SortFunc(rows, func(a, b taskRow) int {
		return cmp.Or(cmp.Compare(a.DueAt, b.DueAt), cmp.Compare(a.ID, b.ID))
	})
	return rows, nil
}

// claimMySQL locks the due rows, skipping rows another instance is claiming
// right now, then stamps them. READ COMMITTED keeps InnoDB from taking gap
// locks that would hold up Send's inserts while the claim runs.
func (q *Queue) claimMySQL(ctx context.Context, now, until int64, n int) ([]taskRow, error) {
	tx, err := q.db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var rows []taskRow
	err = tx.SelectContext(ctx, &rows, `
		SELECT id, order_no, hop, trace_id, due_at, attempts FROM delay_task
		WHERE due_at <= ? AND claimed_until < ?
		ORDER BY due_at LIMIT ?
		FOR UPDATE SKIP LOCKED`, now, now, n)
	if err != nil {
		return nil, fmt.Errorf("select: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	query, args, err := sqlx.In(`UPDATE delay_task SET claimed_by = ?, claimed_until = ? WHERE id IN (?)`,
		q.opts.Owner, until, ids)
	if err != nil {
		return nil, fmt.Errorf("build update: %w", err)
	}
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return rows, nil
}

// nextDue is the earliest due time (unix ms) after from, or math.MaxInt64
// when there is none: one seek on the due_at index.
func (q *Queue) nextDue(ctx context.Context, from int64) (int64, error) {
	var next sql.NullInt64
	if err := q.db.GetContext(ctx, &next, `SELECT MIN(due_at) FROM delay_task WHERE due_at > ?`, from); err != nil {
		return 0, fmt.Errorf("next due: %w", err)
	}
	if !next.Valid {
		return math.MaxInt64, nil
	}
	return next.Int64, nil
}

// deleteDone deletes handled tasks this queue still owns; a task whose
// lease ran out and was claimed by another owner is that owner's now.
func (q *Queue) deleteDone(ctx context.Context, ids []int64) error {
	return q.execIDs(ctx, `DELETE FROM delay_task WHERE claimed_by = ? AND id IN (?)`, ids)
}

// unclaim hands tasks this queue claimed but never started back at once.
func (q *Queue) unclaim(ctx context.Context, ids []int64) error {
	return q.execIDs(ctx, `UPDATE delay_task SET claimed_by = '', claimed_until = 0 WHERE claimed_by = ? AND id IN (?)`, ids)
}

func (q *Queue) execIDs(ctx context.Context, stmt string, ids []int64) error {
	query, args, err := sqlx.In(stmt, q.opts.Owner, ids)
	if err != nil {
		return fmt.Errorf("build statement: %w", err)
	}
	_, err = q.db.ExecContext(ctx, query, args...)
	return err
}

// reschedule makes a failed task due again at due (unix ms) and unclaimed.
func (q *Queue) reschedule(ctx context.Context, id, due int64) error {
	_, err := q.db.ExecContext(ctx, `
		UPDATE delay_task SET due_at = ?, attempts = attempts + 1, claimed_by = '', claimed_until = 0
		WHERE id = ? AND claimed_by = ?`, due, id, q.opts.Owner)
	return err
}

// bury deletes task id, still claimed by this queue, and stores d in
// dead_letter, in one transaction: the task is never both retried and
// dead, nor lost between the two. False when another owner has the task.
func (q *Queue) bury(ctx context.Context, id int64, d core.DeadLetter) (bool, error) {
	tx, err := q.db.BeginTxx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("bury: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	res, err := tx.ExecContext(ctx, `DELETE FROM delay_task WHERE id = ? AND claimed_by = ?`, id, q.opts.Owner)
	if err != nil {
		return false, fmt.Errorf("bury: delete task: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO dead_letter
 (msg_key, source, order_no, hop, trace_id, payload, attempts, last_error, created_at)
 VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.Source, d.Msg.OrderNo, d.Msg.Hop, d.Msg.TraceID, d.Payload, d.Attempts, d.LastError, d.At.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("bury: insert dead letter: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("bury: commit: %w", err)
	}
	return true, nil
}
