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

type showRow struct {
	ID       int64  `db:"id"`
	Name     string `db:"name"`
	Venue    string `db:"venue"`
	StartsAt int64  `db:"starts_at"`
	Rows     int    `db:"row_count"`
	Cols     int    `db:"col_count"`
}

func (r showRow) show() core.Show {
	return core.Show{ID: r.ID, Name: r.Name, Venue: r.Venue, StartsAt: fromMS(r.StartsAt), Rows: r.Rows, Cols: r.Cols}
}

const showCols = `id, name, venue, starts_at, row_count, col_count`

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

// CreateShow inserts the show and its seat plan in one transaction and
// returns the show with its new ID. Rows and Cols default to the plan's
// largest row and column.
func (db *DB) CreateShow(ctx context.Context, show core.Show, seats []core.Seat) (core.Show, error) {
	if show.Name == "" {
		return core.Show{}, core.Invalidf("show needs a name")
	}
	if len(seats) == 0 {
		return core.Show{}, core.Invalidf("show %q needs seats", show.Name)
	}
	for _, s := range seats {
		show.Rows = max(show.Rows, s.Row)
		show.Cols = max(show.Cols, s.Col)
	}
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		res, err := x.ExecContext(ctx,
			`INSERT INTO show_info (name, venue, starts_at, row_count, col_count, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			show.Name, show.Venue, ms(show.StartsAt), show.Rows, show.Cols, time.Now().UnixMilli())
		if err != nil {
			return fmt.Errorf("insert show: %w", err)
		}
		if show.ID, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("show id: %w", err)
		}
		for chunk := range slices.Chunk(seats, insertChunk) {
			args := make([]any, 0, 5*len(chunk))
			for _, s := range chunk {
				args = append(args, show.ID, s.SeatID, s.Row, s.Col, s.PriceCents)
			}
			q := `INSERT INTO seat (show_id, seat_id, row_no, col_no, price_cents) VALUES ` + placeholders(len(chunk), 5)
			if _, err := x.ExecContext(ctx, q, args...); err != nil {
				if isDuplicate(err) {
					return core.Invalidf("show %q: a seat id appears twice", show.Name)
				}
				return fmt.Errorf("insert seats: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return core.Show{}, dbErr(err, "create show %q", show.Name)
	}
	return show, nil
}
