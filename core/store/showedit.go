package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

var _ core.ShowEditStore = (*DB)(nil)

// EditShow implements core.ShowEditStore. The show row is locked first, as
// ReplacePlan does, so a placement's CheckShowSale either committed its
// order before (and the locking order read below sees it) or waits and then
// reads the new times.
func (db *DB) EditShow(ctx context.Context, showID int64, edit func(core.Show) (core.ShowEdit, error)) (core.Show, error) {
	var show core.Show
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		var r showRow
		err := x.GetContext(ctx, &r, `SELECT `+showCols+` FROM show_info WHERE id = ?`+db.dialect.forUpdate(), showID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("show %d: %w", showID, core.ErrShowNotFound)
		}
		if err != nil {
			return dbErr(err, "lock show %d", showID)
		}
		if err := refuseOnceSold(ctx, x, db.dialect, showID, core.ShowStatus(r.Status)); err != nil {
			return err
		}
		ed, err := edit(r.show())
		if err != nil {
			return err
		}
		if _, err := x.ExecContext(ctx, `UPDATE show_info SET name = ?, venue = ?, starts_at = ?, sales_end = ? WHERE id = ?`,
			ed.Name, ed.Venue, ms(ed.StartsAt), ms(ed.SalesEnd), showID); err != nil {
			return dbErr(err, "edit show %d", showID)
		}
		r.Name, r.Venue, r.StartsAt, r.SalesEnd = ed.Name, ed.Venue, ms(ed.StartsAt), ms(ed.SalesEnd)
		show = r.show()
		return nil
	})
	if err != nil {
		return core.Show{}, err
	}
	return show, nil
}
