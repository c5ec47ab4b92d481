package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

var _ core.ShowStore = (*DB)(nil)

// defaultCurrency is the currency of shows made without one (demo, tests),
// as the migration's column default.
const defaultCurrency = "EUR"

// planInsertChunk bounds the rows of one multi-row seat INSERT: 14 values a
// row stays far below SQLite's 32766 placeholders and MariaDB's packet size,
// and a 20,000-seat plan takes 20 statements.
const planInsertChunk = 1000

// CreateShowPlan implements core.ShowStore. Rows and Cols default to the
// plan's largest row and column.
func (db *DB) CreateShowPlan(ctx context.Context, show core.Show, cats []core.PriceCategory, seats []core.Seat) (core.Show, error) {
	if len(seats) == 0 {
		return core.Show{}, core.Invalidf("show %q needs seats", show.Name)
	}
	for _, s := range seats {
		show.Rows = max(show.Rows, s.Row)
		show.Cols = max(show.Cols, s.Col)
	}
	if show.Status != core.ShowDraft {
		show.Status = core.ShowOnSale
	}
	show.PlanVersion, show.SeatCount = 1, len(seats)
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		res, err := x.ExecContext(ctx, `INSERT INTO show_info (name, venue, starts_at, row_count, col_count, created_at,
 currency, sales_end, status, plan_version, seat_count, best_focal_set, best_focal_x, best_focal_y, best_allow_singles)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			show.Name, show.Venue, ms(show.StartsAt), show.Rows, show.Cols, time.Now().UnixMilli(),
			show.Currency, ms(show.SalesEnd), int(show.Status), show.PlanVersion, show.SeatCount,
			digit(show.Best.FocalSet), show.Best.FocalX, show.Best.FocalY, digit(show.Best.AllowSingles))
		if err != nil {
			return fmt.Errorf("insert show: %w", err)
		}
		if show.ID, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("show id: %w", err)
		}
		return insertPlan(ctx, x, show.ID, cats, seats)
	})
	if err != nil {
		return core.Show{}, dbErr(err, "create show %q", show.Name)
	}
	return show, nil
}

// insertPlan writes a plan's categories and seats in multi-row INSERTs.
func insertPlan(ctx context.Context, x *sqlx.Tx, showID int64, cats []core.PriceCategory, seats []core.Seat) error {
	if len(cats) > 0 {
		args := make([]any, 0, 4*len(cats))
		for _, c := range cats {
			args = append(args, showID, c.Code, c.Name, c.PriceCents)
		}
		if _, err := x.ExecContext(ctx, `INSERT INTO price_category (show_id, code, name, price_cents) VALUES `+
			placeholders(len(cats), 4), args...); err != nil {
			return dbErr(err, "insert price categories")
		}
	}
	for chunk := range slices.Chunk(seats, planInsertChunk) {
		args := make([]any, 0, 14*len(chunk))
		for _, s := range chunk {
			args = append(args, showID, s.SeatID, s.Row, s.Col, s.PriceCents, s.Section, s.RowLabel, s.Number,
				s.Category, s.X, s.Y, s.Accessible, s.Rank, digit(s.AisleAfter))
		}
		if _, err := x.ExecContext(ctx, `INSERT INTO seat (`+seatCols+`) VALUES `+placeholders(len(chunk), 14), args...); err != nil {
			if isDuplicate(err) {
				return core.Invalidf("a seat id appears twice in the plan")
			}
			return dbErr(err, "insert seats")
		}
	}
	return nil
}

// lockShow reads a show's status under an exclusive row lock, the lock
// that CheckShowSale's shared one waits for.
func lockShow(ctx context.Context, x *sqlx.Tx, d Dialect, showID int64) (core.ShowStatus, error) {
	var status int
	err := x.GetContext(ctx, &status, `SELECT status FROM show_info WHERE id = ?`+d.forUpdate(), showID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("show %d: %w", showID, core.ErrShowNotFound)
	}
	if err != nil {
		return 0, dbErr(err, "lock show %d", showID)
	}
	return core.ShowStatus(status), nil
}

// showInTx reads the show as the transaction x sees it (after its own
// changes).
func showInTx(ctx context.Context, x *sqlx.Tx, showID int64) (core.Show, error) {
	var r showRow
	if err := x.GetContext(ctx, &r, `SELECT `+showCols+` FROM show_info WHERE id = ?`, showID); err != nil {
		return core.Show{}, dbErr(err, "show %d", showID)
	}
	return r.show(), nil
}

// refuseOnceSold is the rule of a show's plan and details, run with the
// show row locked: none changes on a cancelled show or once it has an
// order (a locking read, so it sees the latest rows).
func refuseOnceSold(ctx context.Context, x *sqlx.Tx, d Dialect, showID int64, status core.ShowStatus) error {
	if status == core.ShowCancelled {
		return core.ErrShowCancelled
	}
	var orders []int
	if err := x.SelectContext(ctx, &orders, `SELECT 1 FROM order_info WHERE show_id = ? LIMIT 1`+d.forUpdate(), showID); err != nil {
		return dbErr(err, "orders of show %d", showID)
	}
	if len(orders) > 0 {
		return core.ErrShowOnSale
	}
	return nil
}

// ReplacePlan implements core.ShowStore. The show row is locked first, so a
// placement's CheckShowSale either committed its order before (and the
// order check below sees it: a locking read reads the latest rows) or
// waits and then finds the new plan_version.
func (db *DB) ReplacePlan(ctx context.Context, showID int64, cats []core.PriceCategory, seats []core.Seat) (core.Show, error) {
	var show core.Show
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		status, err := lockShow(ctx, x, db.dialect, showID)
		if err != nil {
			return err
		}
		if err := refuseOnceSold(ctx, x, db.dialect, showID, status); err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM price_category WHERE show_id = ?`, `DELETE FROM seat WHERE show_id = ?`} {
			if _, err := x.ExecContext(ctx, q, showID); err != nil {
				return dbErr(err, "clear plan of show %d", showID)
			}
		}
		if err := insertPlan(ctx, x, showID, cats, seats); err != nil {
			return err
		}
		if _, err := x.ExecContext(ctx, `DELETE FROM seat_block WHERE show_id = ?
 AND seat_id NOT IN (SELECT seat_id FROM seat WHERE show_id = ?)`, showID, showID); err != nil {
			return dbErr(err, "drop blocks of removed seats of show %d", showID)
		}
		rows, cols := 0, 0
		for _, s := range seats {
			rows, cols = max(rows, s.Row), max(cols, s.Col)
		}
		if _, err := x.ExecContext(ctx, `UPDATE show_info SET plan_version = plan_version + 1, row_count = ?, col_count = ?,
 seat_count = ? WHERE id = ?`, rows, cols, len(seats), showID); err != nil {
			return dbErr(err, "update show %d", showID)
		}
		show, err = showInTx(ctx, x, showID)
		return err
	})
	if err != nil {
		return core.Show{}, err
	}
	return show, nil
}

// CancelShow implements core.ShowStore: one conditional UPDATE (a draft
// too), which waits
// for the shared locks of placements in flight (CheckShowSale).
func (db *DB) CancelShow(ctx context.Context, showID int64, at time.Time) (bool, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE show_info SET status = ?, cancelled_at = ? WHERE id = ? AND status IN (?, ?)`,
		int(core.ShowCancelled), ms(at), showID, int(core.ShowOnSale), int(core.ShowDraft))
	if err != nil {
		return false, dbErr(err, "cancel show %d", showID)
	}
	won, err := oneRow(res, fmt.Sprintf("cancel show %d", showID))
	if err != nil || won {
		return won, err
	}
	if _, err := db.Show(ctx, showID); err != nil {
		return false, err
	}
	return false, nil
}

// CheckShowSale implements core.Tx.
func (t *tx) CheckShowSale(ctx context.Context, showID, planVersion int64, now time.Time) error {
	var r struct {
		Status   int   `db:"status"`
		StartsAt int64 `db:"starts_at"`
		SalesEnd int64 `db:"sales_end"`
		Version  int64 `db:"plan_version"`
	}
	err := t.x.GetContext(ctx, &r, `SELECT status, starts_at, sales_end, plan_version FROM show_info WHERE id = ?`+t.d.forShare(), showID)
	end := core.Show{StartsAt: fromMS(r.StartsAt), SalesEnd: fromMS(r.SalesEnd)}.SalesEndAt()
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("show %d: %w", showID, core.ErrShowNotFound)
	case err != nil:
		return dbErr(err, "show %d on sale", showID)
	case core.ShowStatus(r.Status) == core.ShowCancelled:
		return core.ErrShowCancelled
	case core.ShowStatus(r.Status) == core.ShowDraft:
		return core.ErrShowDraft
	case !end.IsZero() && !now.Before(end):
		return core.ErrSalesEnded
	case r.Version != planVersion:
		return core.ErrPlanChanged
	}
	return nil
}

// PriceCategories implements core.ShowStore, by code.
func (db *DB) PriceCategories(ctx context.Context, showID int64) ([]core.PriceCategory, error) {
	var rs []struct {
		Code  string `db:"code"`
		Name  string `db:"name"`
		Price int64  `db:"price_cents"`
	}
	if err := db.r.SelectContext(ctx, &rs, `SELECT code, name, price_cents FROM price_category WHERE show_id = ? ORDER BY code`, showID); err != nil {
		return nil, dbErr(err, "price categories of show %d", showID)
	}
	out := make([]core.PriceCategory, len(rs))
	for i, r := range rs {
		out[i] = core.PriceCategory{Code: r.Code, Name: r.Name, PriceCents: r.Price}
	}
	return out, nil
}

// Seat kinds of showCountsSQL.
const (
	countLocked  = 1
	countSold    = 2
	countBlocked = 3
)

// showCountsSQL counts taken seats (order_seat: a paid order's are sold,
// any other's held) and blocked seats nobody holds, per show, in one
// grouped query over the primary keys; %s is the per-show filter.
const showCountsSQL = `SELECT t.show_id, t.kind, COUNT(*) AS n FROM (
 SELECT os.show_id, CASE WHEN o.status = 1 THEN 2 ELSE 1 END AS kind
  FROM order_seat os LEFT JOIN order_info o ON o.order_no = os.order_no %s
 UNION ALL
 SELECT b.show_id, 3 AS kind FROM seat_block b
  WHERE NOT EXISTS (SELECT 1 FROM order_seat x WHERE x.show_id = b.show_id AND x.seat_id = b.seat_id) %s
) t GROUP BY t.show_id, t.kind`

// ShowCounts implements core.ShowStore.
func (db *DB) ShowCounts(ctx context.Context, showID int64) (map[int64]core.ShowSummary, error) {
	q := fmt.Sprintf(showCountsSQL, "", "")
	revQ := `SELECT show_id, SUM(amount_cents) AS n FROM order_info WHERE status = 1 GROUP BY show_id`
	var args []any
	if showID != 0 {
		q = fmt.Sprintf(showCountsSQL, "WHERE os.show_id = ?", "AND b.show_id = ?")
		revQ = `SELECT show_id, SUM(amount_cents) AS n FROM order_info WHERE show_id = ? AND status = 1 GROUP BY show_id`
		args = []any{showID, showID}
	}
	var rs []struct {
		ShowID int64 `db:"show_id"`
		Kind   int   `db:"kind"`
		N      int   `db:"n"`
	}
	if err := db.r.SelectContext(ctx, &rs, q, args...); err != nil {
		return nil, dbErr(err, "seat counts")
	}
	out := make(map[int64]core.ShowSummary)
	for _, r := range rs {
		s := out[r.ShowID]
		switch r.Kind {
		case countLocked:
			s.Counts.Locked = r.N
		case countSold:
			s.Counts.Sold = r.N
		case countBlocked:
			s.Counts.Blocked = r.N
		}
		out[r.ShowID] = s
	}
	var revs []struct {
		ShowID int64 `db:"show_id"`
		N      int64 `db:"n"`
	}
	if err := db.r.SelectContext(ctx, &revs, revQ, args[:min(len(args), 1)]...); err != nil {
		return nil, dbErr(err, "revenue")
	}
	for _, r := range revs {
		s := out[r.ShowID]
		s.RevenueCents = r.N
		out[r.ShowID] = s
	}
	return out, nil
}

// BlockSeats implements core.ShowStore. The order_seat read locks (and so
// reads the latest rows) on MySQL.
func (db *DB) BlockSeats(ctx context.Context, showID int64, seatIDs []string, reason string, at time.Time) error {
	return db.withTx(ctx, func(x *sqlx.Tx) error {
		q, args, err := sqlx.In(`SELECT seat_id FROM order_seat WHERE show_id = ? AND seat_id IN (?)`+db.dialect.forUpdate(), showID, seatIDs)
		if err != nil {
			return fmt.Errorf("store: taken seats: %w", err)
		}
		var taken []string
		if err := x.SelectContext(ctx, &taken, x.Rebind(q), args...); err != nil {
			return dbErr(err, "taken seats of show %d", showID)
		}
		if len(taken) > 0 {
			return core.SeatsUnavailable(sortedSeatIDs(taken))
		}
		if q, args, err = sqlx.In(`DELETE FROM seat_block WHERE show_id = ? AND seat_id IN (?)`, showID, seatIDs); err != nil {
			return fmt.Errorf("store: delete blocks: %w", err)
		}
		if _, err := x.ExecContext(ctx, x.Rebind(q), args...); err != nil {
			return dbErr(err, "replace blocks of show %d", showID)
		}
		for chunk := range slices.Chunk(seatIDs, insertChunk) {
			args := make([]any, 0, 4*len(chunk))
			for _, id := range chunk {
				args = append(args, showID, id, reason, ms(at))
			}
			if _, err := x.ExecContext(ctx, `INSERT INTO seat_block (show_id, seat_id, reason, created_at) VALUES `+
				placeholders(len(chunk), 4), args...); err != nil {
				return dbErr(err, "insert blocks of show %d", showID)
			}
		}
		return nil
	})
}

// Blocks implements core.ShowStore, in seat order.
func (db *DB) Blocks(ctx context.Context, showID int64) ([]core.SeatBlock, error) {
	var rs []struct {
		SeatID string `db:"seat_id"`
		Reason string `db:"reason"`
		At     int64  `db:"created_at"`
	}
	if err := db.r.SelectContext(ctx, &rs, `SELECT seat_id, reason, created_at FROM seat_block WHERE show_id = ?`, showID); err != nil {
		return nil, dbErr(err, "blocks of show %d", showID)
	}
	out := make([]core.SeatBlock, len(rs))
	for i, r := range rs {
		out[i] = core.SeatBlock{SeatID: r.SeatID, Reason: r.Reason, BlockedAt: fromMS(r.At)}
	}
	slices.SortFunc(out, func(a, b core.SeatBlock) int { return core.CompareSeatIDs(a.SeatID, b.SeatID) })
	return out, nil
}

// OrdersOfShow implements core.ShowStore (idx_show_status).
func (db *DB) OrdersOfShow(ctx context.Context, showID int64, status core.OrderStatus) ([]core.Order, error) {
	var rs []orderRow
	if err := db.r.SelectContext(ctx, &rs, `SELECT `+orderCols+` FROM order_info WHERE show_id = ? AND status = ? ORDER BY id`,
		showID, int(status)); err != nil {
		return nil, dbErr(err, "%s orders of show %d", status, showID)
	}
	return orderRows(rs), nil
}

// digit stores a flag as 0 or 1, the same in both dialects.
func digit(b bool) int {
	if b {
		return 1
	}
	return 0
}
