package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"seatflow/core"
)

type showRow struct {
	ID       int64  `db:"id"`
	Name     string `db:"name"`
	Venue    string `db:"venue"`
	StartsAt int64  `db:"starts_at"`
	Rows     int    `db:"row_count"`
	Cols     int    `db:"col_count"`
	Currency string `db:"currency"`
	SalesEnd int64  `db:"sales_end"`
	Status   int    `db:"status"`
	Cancel   int64  `db:"cancelled_at"`
	Version  int64  `db:"plan_version"`
	Seats    int    `db:"seat_count"`
	FocalSet int    `db:"best_focal_set"`
	FocalX   int    `db:"best_focal_x"`
	FocalY   int    `db:"best_focal_y"`
	Singles  int    `db:"best_allow_singles"`
}

func (r showRow) show() core.Show {
	return core.Show{ID: r.ID, Name: r.Name, Venue: r.Venue, StartsAt: fromMS(r.StartsAt), Rows: r.Rows, Cols: r.Cols,
		Currency: r.Currency, SalesEnd: fromMS(r.SalesEnd), Status: core.ShowStatus(r.Status),
		CancelledAt: fromMS(r.Cancel), PlanVersion: r.Version, SeatCount: r.Seats,
		Best: core.BestRules{FocalSet: r.FocalSet == 1, FocalX: r.FocalX, FocalY: r.FocalY, AllowSingles: r.Singles == 1}}
}

const showCols = `id, name, venue, starts_at, row_count, col_count, currency, sales_end, status, cancelled_at, plan_version, seat_count,
 best_focal_set, best_focal_x, best_focal_y, best_allow_singles`

// Show returns one show or core.ErrShowNotFound.
func (db *DB) Show(ctx context.Context, id int64) (core.Show, error) {
	var r showRow
	err := db.r.GetContext(ctx, &r, `SELECT `+showCols+` FROM show_info WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return core.Show{}, fmt.Errorf("show %d: %w", id, core.ErrShowNotFound)
	}
	if err != nil {
		return core.Show{}, dbErr(err, "show %d", id)
	}
	return r.show(), nil
}

// Shows returns every show, soonest first.
func (db *DB) Shows(ctx context.Context) ([]core.Show, error) {
	var rs []showRow
	if err := db.r.SelectContext(ctx, &rs, `SELECT `+showCols+` FROM show_info ORDER BY starts_at, id`); err != nil {
		return nil, dbErr(err, "shows")
	}
	out := make([]core.Show, len(rs))
	for i, r := range rs {
		out[i] = r.show()
	}
	return out, nil
}

// CreateShow inserts a show and its seat plan (seats without a price
// category, as `seatflow demo` and the test stacks make them) in one
// transaction and returns the show with its new ID; see CreateShowPlan.
func (db *DB) CreateShow(ctx context.Context, show core.Show, seats []core.Seat) (core.Show, error) {
	if show.Name == "" {
		return core.Show{}, core.Invalidf("show needs a name")
	}
	if show.Currency == "" {
		show.Currency = defaultCurrency
	}
	return db.CreateShowPlan(ctx, show, nil, seats)
}
