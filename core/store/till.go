package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/till"
)

var (
	_ till.Store       = (*DB)(nil)
	_ till.Tx          = (*tx)(nil)
	_ core.ShiftReader = (*DB)(nil)
)

const shiftCols = `id, clerk, currency, float_cents, opened_at, closed_at, counted_cents, expected_cents,
 difference_cents, case_id`

type shiftRow struct {
	ID              int64  `db:"id"`
	Clerk           string `db:"clerk"`
	Currency        string `db:"currency"`
	FloatCents      int64  `db:"float_cents"`
	OpenedAt        int64  `db:"opened_at"`
	ClosedAt        int64  `db:"closed_at"`
	CountedCents    int64  `db:"counted_cents"`
	ExpectedCents   int64  `db:"expected_cents"`
	DifferenceCents int64  `db:"difference_cents"`
	CaseID          int64  `db:"case_id"`
}

func (r shiftRow) shift() till.Shift {
	return till.Shift{ID: r.ID, Clerk: r.Clerk, Currency: r.Currency, FloatCents: r.FloatCents,
		OpenedAt: fromMS(r.OpenedAt), ClosedAt: fromMS(r.ClosedAt), CountedCents: r.CountedCents,
		ExpectedCents: r.ExpectedCents, DifferenceCents: r.DifferenceCents, CaseID: r.CaseID}
}

// openShift reads clerk's open shift (uk_open_clerk) with lock, a suffix.
func openShift(ctx context.Context, x sqlx.QueryerContext, clerk, lock string) (till.Shift, bool, error) {
	var r shiftRow
	err := sqlx.GetContext(ctx, x, &r, `SELECT `+shiftCols+` FROM till_shift WHERE open_clerk = ?`+lock, clerk)
	if errors.Is(err, sql.ErrNoRows) {
		return till.Shift{}, false, nil
	}
	if err != nil {
		return till.Shift{}, false, dbErr(err, "open shift of %s", clerk)
	}
	return r.shift(), true, nil
}

// OpenShift implements core.ShiftTx: a shared lock, so payments of one
// shift never wait on each other, only on its close.
func (t *tx) OpenShift(ctx context.Context, clerk string) (core.ShiftRef, bool, error) {
	s, ok, err := openShift(ctx, t.x, clerk, t.d.forShare())
	return core.ShiftRef{ID: s.ID, Currency: s.Currency}, ok, err
}

// OpenShiftOf implements core.ShiftReader.
func (db *DB) OpenShiftOf(ctx context.Context, clerk string) (core.ShiftRef, bool, error) {
	s, ok, err := openShift(ctx, db.r, clerk, "")
	return core.ShiftRef{ID: s.ID, Currency: s.Currency}, ok, err
}

// CurrentShift implements till.Store.
func (db *DB) CurrentShift(ctx context.Context, clerk string) (till.Shift, bool, error) {
	return openShift(ctx, db.r, clerk, "")
}

// InTillTx implements till.Store on InTx (the same retries).
func (db *DB) InTillTx(ctx context.Context, fn func(till.Tx) error) error {
	return db.InTx(ctx, func(t core.Tx) error { return fn(t.(*tx)) })
}

// InsertShift implements till.Tx.
func (t *tx) InsertShift(ctx context.Context, s till.Shift) (int64, error) {
	res, err := t.x.ExecContext(ctx, `INSERT INTO till_shift (clerk, open_clerk, currency, float_cents, opened_at)
 VALUES (?, ?, ?, ?, ?)`, s.Clerk, s.Clerk, s.Currency, s.FloatCents, ms(s.OpenedAt))
	if isDuplicate(err) {
		return 0, till.ErrShiftOpen
	}
	if err != nil {
		return 0, dbErr(err, "open shift of %s", s.Clerk)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, dbErr(err, "open shift of %s: id", s.Clerk)
	}
	return id, nil
}

// OpenShiftForUpdate implements till.Tx.
func (t *tx) OpenShiftForUpdate(ctx context.Context, clerk string) (till.Shift, bool, error) {
	return openShift(ctx, t.x, clerk, t.d.forUpdate())
}

// ledgerQueries sum a shift's money by tender: its payment rows (each one
// money a clerk took, applied or left as a case) and its refunds done.
var ledgerQueries = []struct {
	refund bool
	q      string
}{
	{false, `SELECT shift_id, tender, COUNT(*) AS n, SUM(amount_cents) AS cents FROM payment
 WHERE shift_id IN (?) GROUP BY shift_id, tender`},
	{true, `SELECT shift_id, tender, COUNT(*) AS n, SUM(amount_cents) AS cents FROM refund
 WHERE shift_id IN (?) AND state = '` + string(core.RefundDone) + `' GROUP BY shift_id, tender`},
}

type ledgerRow struct {
	ShiftID int64  `db:"shift_id"`
	Tender  string `db:"tender"`
	N       int    `db:"n"`
	Cents   int64  `db:"cents"`
}

type rebindQueryer interface {
	sqlx.QueryerContext
	Rebind(string) string
}

func ledger(ctx context.Context, x rebindQueryer, ids []int64, lock string) (map[int64]till.Totals, error) {
	out := make(map[int64]till.Totals, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	for _, lq := range ledgerQueries {
		q, args, err := sqlx.In(lq.q+lock, ids)
		if err != nil {
			return nil, fmt.Errorf("store: shift ledger: %w", err)
		}
		var rows []ledgerRow
		if err := sqlx.SelectContext(ctx, x, &rows, x.Rebind(q), args...); err != nil {
			return nil, dbErr(err, "ledger of %d shifts", len(ids))
		}
		for _, r := range rows {
			tot := out[r.ShiftID]
			tot.Add(core.Tender(r.Tender), lq.refund, r.N, r.Cents)
			out[r.ShiftID] = tot
		}
	}
	return out, nil
}

// LedgerTotals implements till.Tx. The shift row is locked exclusively
// first, so every row of it has committed; the sums read with a shared lock
// see the latest committed rows, not the transaction's snapshot.
func (t *tx) LedgerTotals(ctx context.Context, shiftID int64) (till.Totals, error) {
	tots, err := ledger(ctx, t.x, []int64{shiftID}, t.d.forShare())
	return tots[shiftID], err
}

// CloseShift implements till.Tx.
func (t *tx) CloseShift(ctx context.Context, s till.Shift) error {
	res, err := t.x.ExecContext(ctx, `UPDATE till_shift SET open_clerk = NULL, closed_at = ?, counted_cents = ?,
 expected_cents = ?, difference_cents = ?, case_id = ? WHERE id = ? AND open_clerk IS NOT NULL`,
		ms(s.ClosedAt), s.CountedCents, s.ExpectedCents, s.DifferenceCents, s.CaseID, s.ID)
	if err != nil {
		return dbErr(err, "close shift %d", s.ID)
	}
	if ok, err := oneRow(res, fmt.Sprintf("close shift %d", s.ID)); err != nil {
		return err
	} else if !ok {
		return core.ErrNoOpenShift
	}
	return nil
}

// DiscrepancyID implements till.Tx (uk_txn_kind).
func (t *tx) DiscrepancyID(ctx context.Context, txnID, kind string) (int64, error) {
	var id int64
	if err := t.x.GetContext(ctx, &id, `SELECT id FROM discrepancy WHERE txn_id = ? AND kind = ?`, txnID, kind); err != nil {
		return 0, dbErr(err, "discrepancy %s/%s", txnID, kind)
	}
	return id, nil
}

// Shift implements till.Store.
func (db *DB) Shift(ctx context.Context, id int64) (till.Shift, error) {
	var r shiftRow
	err := db.r.GetContext(ctx, &r, `SELECT `+shiftCols+` FROM till_shift WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return till.Shift{}, fmt.Errorf("shift %d: %w", id, till.ErrShiftNotFound)
	}
	if err != nil {
		return till.Shift{}, dbErr(err, "shift %d", id)
	}
	return r.shift(), nil
}

// Shifts implements till.Store (idx_opened, idx_clerk_opened).
func (db *DB) Shifts(ctx context.Context, from, to time.Time, clerk string) ([]till.Shift, error) {
	q, args := `SELECT `+shiftCols+` FROM till_shift WHERE opened_at >= ? AND opened_at < ?`, []any{ms(from), ms(to)}
	if clerk != "" {
		q, args = q+` AND clerk = ?`, append(args, clerk)
	}
	var rows []shiftRow
	if err := db.r.SelectContext(ctx, &rows, q+` ORDER BY opened_at, id`, args...); err != nil {
		return nil, dbErr(err, "shifts")
	}
	out := make([]till.Shift, len(rows))
	for i, r := range rows {
		out[i] = r.shift()
	}
	return out, nil
}

// ShiftTotals implements till.Store.
func (db *DB) ShiftTotals(ctx context.Context, ids []int64) (map[int64]till.Totals, error) {
	return ledger(ctx, db.r, ids, "")
}
