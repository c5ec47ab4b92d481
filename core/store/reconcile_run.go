package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Reconcile's bookkeeping: the reconcile_run record of every run and the
// reconcile_lease that lets one instance at a time run the checks.

// ReconcileRun is one reconcile_run row. Checks is the JSON the reconcile
// package writes (a list of per-check results); the store does not read it.
type ReconcileRun struct {
	ID         int64
	Trigger    string
	Owner      string
	StartedAt  time.Time
	FinishedAt time.Time // zero while running
	DryRun     bool
	Status     string
	Checks     string
	Error      string
}

type reconcileRunRow struct {
	ID         int64  `db:"id"`
	Trigger    string `db:"run_trigger"`
	Owner      string `db:"owner"`
	StartedAt  int64  `db:"started_at"`
	FinishedAt int64  `db:"finished_at"`
	DryRun     bool   `db:"dry_run"`
	Status     string `db:"status"`
	Checks     string `db:"checks"`
	Error      string `db:"error"`
}

func (r reconcileRunRow) run() ReconcileRun {
	return ReconcileRun{ID: r.ID, Trigger: r.Trigger, Owner: r.Owner, StartedAt: fromMS(r.StartedAt),
		FinishedAt: fromMS(r.FinishedAt), DryRun: r.DryRun, Status: r.Status, Checks: r.Checks, Error: r.Error}
}

// InsertReconcileRun records a run as it starts and returns its id.
func (db *DB) InsertReconcileRun(ctx context.Context, r ReconcileRun) (int64, error) {
	res, err := db.w.ExecContext(ctx, `INSERT INTO reconcile_run
 (run_trigger, owner, started_at, finished_at, dry_run, status, checks, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Trigger, r.Owner, ms(r.StartedAt), ms(r.FinishedAt), r.DryRun, r.Status, r.Checks, r.Error)
	if err != nil {
		return 0, fmt.Errorf("store: insert reconcile run: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("store: reconcile run id: %w", err)
	}
	return id, nil
}

// FinishReconcileRun writes a run's outcome (finished_at, status, checks,
// error) on its row.
func (db *DB) FinishReconcileRun(ctx context.Context, r ReconcileRun) error {
	_, err := db.w.ExecContext(ctx,
		`UPDATE reconcile_run SET finished_at = ?, status = ?, checks = ?, error = ? WHERE id = ?`,
		ms(r.FinishedAt), r.Status, r.Checks, r.Error, r.ID)
	if err != nil {
		return fmt.Errorf("store: finish reconcile run %d: %w", r.ID, err)
	}
	return nil
}

const (
	reconcileRunColumns = `SELECT id, run_trigger, owner, started_at, finished_at, dry_run, status, checks, error
 FROM reconcile_run`
	reconcileRunsSQL    = reconcileRunColumns + ` ORDER BY id DESC LIMIT ?`
	reconcileRunByIDSQL = reconcileRunColumns + ` WHERE id = ?`
	lastRunExceptSQL    = reconcileRunColumns + ` WHERE run_trigger <> ? ORDER BY id DESC LIMIT 1`
)

// ReconcileRuns returns the newest runs first, at most limit of them: the
// last inserted, as a run is inserted when it starts. Backward read of the
// primary key that stops after limit rows.
func (db *DB) ReconcileRuns(ctx context.Context, limit int) ([]ReconcileRun, error) {
	var rs []reconcileRunRow
	if err := db.r.SelectContext(ctx, &rs, reconcileRunsSQL, limit); err != nil {
		return nil, fmt.Errorf("store: reconcile runs: %w", err)
	}
	out := make([]ReconcileRun, len(rs))
	for i, r := range rs {
		out[i] = r.run()
	}
	return out, nil
}

// LastReconcileRunExcept returns the newest run whose trigger is not
// trigger, and false if there is none: the last full run behind the sweeps.
// Backward read of the primary key that stops at the first such row, so
// it costs the sweeps since (one every 30 s, a full run every 5 min by
// default), however many runs are kept.
func (db *DB) LastReconcileRunExcept(ctx context.Context, trigger string) (ReconcileRun, bool, error) {
	var r reconcileRunRow
	err := db.r.GetContext(ctx, &r, lastRunExceptSQL, trigger)
	if errors.Is(err, sql.ErrNoRows) {
		return ReconcileRun{}, false, nil
	}
	if err != nil {
		return ReconcileRun{}, false, fmt.Errorf("store: last reconcile run but %s: %w", trigger, err)
	}
	return r.run(), true, nil
}

// ErrRunNotFound means no reconcile run has the id asked for.
var ErrRunNotFound = errors.New("store: no such reconcile run")

// ReconcileRunByID returns one run by its id: a primary-key lookup.
func (db *DB) ReconcileRunByID(ctx context.Context, id int64) (ReconcileRun, error) {
	var r reconcileRunRow
	err := db.r.GetContext(ctx, &r, reconcileRunByIDSQL, id)
	if errors.Is(err, sql.ErrNoRows) {
		return ReconcileRun{}, fmt.Errorf("store: reconcile run %d: %w", id, ErrRunNotFound)
	}
	if err != nil {
		return ReconcileRun{}, fmt.Errorf("store: reconcile run %d: %w", id, err)
	}
	return r.run(), nil
}

const abandonRunsSQL = `UPDATE reconcile_run SET status = 'abandoned', finished_at = ?,
 error = 'the instance running it stopped' WHERE status = 'running'`

// AbandonReconcileRuns marks runs still recorded as running as abandoned:
// called by the lease holder, whose lease proves their runner is gone.
// Range on idx_status_started.
func (db *DB) AbandonReconcileRuns(ctx context.Context, at time.Time) (int, error) {
	res, err := db.w.ExecContext(ctx, abandonRunsSQL, ms(at))
	if err != nil {
		return 0, fmt.Errorf("store: abandon reconcile runs: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: abandon reconcile runs: %w", err)
	}
	return int(n), nil
}

const pruneRunsSQL = `DELETE FROM reconcile_run WHERE started_at < ?`

// PruneReconcileRuns deletes the runs started before before. Range on
// idx_started; run after every full run, so each call deletes a few rows.
func (db *DB) PruneReconcileRuns(ctx context.Context, before time.Time) (int, error) {
	res, err := db.w.ExecContext(ctx, pruneRunsSQL, ms(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune reconcile runs: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: prune reconcile runs: %w", err)
	}
	return int(n), nil
}

// The lease. Its expiry is computed by the database's own clock (dbNowMS),
// never the callers': instances whose clocks disagree still agree on when a
// lease ends. A holder that dies simply stops renewing and the lease lapses
// at expires_at; a holder that loses touch with the database must stop by
// itself (the reconcile package cancels its run at send time + TTL, which is
// never later than the expires_at the database wrote).

// ErrLeaseRow means the lease name has no row: the migration seeds the row
// of the one lease reconcile uses.
var ErrLeaseRow = errors.New("store: no such lease row")

// dbNowMS is the database's current time in epoch milliseconds. It lives here
// rather than in dialect.go because only the lease needs the database's
// clock. On MySQL UTC_TIMESTAMP is independent of the session time zone.
func (db *DB) dbNowMS() string {
	if db.dialect == MySQL {
		return `(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)`
	}
	return `CAST(unixepoch('subsec') * 1000 AS INTEGER)`
}

// AcquireLease takes the named lease for owner with token if it is free or
// expired, until the database's now + ttl. It reports whether it took it.
func (db *DB) AcquireLease(ctx context.Context, name, owner, token string, ttl time.Duration) (bool, error) {
	now := db.dbNowMS()
	res, err := db.w.ExecContext(ctx, `UPDATE reconcile_lease SET owner = ?, token = ?, expires_at = `+now+` + ?
 WHERE name = ? AND expires_at < `+now, owner, token, ttl.Milliseconds(), name)
	if err != nil {
		return false, fmt.Errorf("store: acquire lease %s: %w", name, err)
	}
	got, err := oneRow(res, "acquire lease "+name)
	if err != nil || got {
		return got, err
	}
	var exists int
	err = db.w.GetContext(ctx, &exists, `SELECT 1 FROM reconcile_lease WHERE name = ?`, name)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("store: acquire lease %s: %w", name, ErrLeaseRow)
	}
	if err != nil {
		return false, fmt.Errorf("store: acquire lease %s: %w", name, err)
	}
	return false, nil
}

// RenewLease moves the lease's expiry to the database's now + ttl while
// token still holds it and it has not expired; false means it was lost.
func (db *DB) RenewLease(ctx context.Context, name, token string, ttl time.Duration) (bool, error) {
	now := db.dbNowMS()
	res, err := db.w.ExecContext(ctx, `UPDATE reconcile_lease SET expires_at = `+now+` + ?
 WHERE name = ? AND token = ? AND expires_at >= `+now, ttl.Milliseconds(), name, token)
	if err != nil {
		return false, fmt.Errorf("store: renew lease %s: %w", name, err)
	}
	return oneRow(res, "renew lease "+name)
}

// ReleaseLease frees the lease if token still holds it, so the next run
// need not wait for the expiry.
func (db *DB) ReleaseLease(ctx context.Context, name, token string) error {
	_, err := db.w.ExecContext(ctx,
		`UPDATE reconcile_lease SET owner = '', token = '', expires_at = 0 WHERE name = ? AND token = ?`, name, token)
	if err != nil {
		return fmt.Errorf("store: release lease %s: %w", name, err)
	}
	return nil
}

// LeaseHolder returns who holds the named lease and until when (by the
// database's clock); owner is "" when it is free.
func (db *DB) LeaseHolder(ctx context.Context, name string) (owner string, until time.Time, err error) {
	var r struct {
		Owner     string `db:"owner"`
		ExpiresAt int64  `db:"expires_at"`
		Live      bool   `db:"live"`
	}
	err = db.r.GetContext(ctx, &r, `SELECT owner, expires_at, expires_at >= `+db.dbNowMS()+` AS live
 FROM reconcile_lease WHERE name = ?`, name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, fmt.Errorf("store: lease %s: %w", name, ErrLeaseRow)
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("store: lease %s: %w", name, err)
	}
	if !r.Live {
		return "", time.Time{}, nil
	}
	return r.Owner, fromMS(r.ExpiresAt), nil
}
