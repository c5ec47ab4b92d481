package store

import (
	"context"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// Reprice implements core.ShowStore: the show row locked first, as
// ReplacePlan does, so a placement either committed its order before
// (and the rule refuses) or waits and then finds the new plan_version.
func (db *DB) Reprice(ctx context.Context, showID int64, prices map[string]int64) (core.Show, error) {
	var show core.Show
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		status, err := lockShow(ctx, x, db.dialect, showID)
		if err != nil {
			return err
		}
		if err := refuseOnceSold(ctx, x, db.dialect, showID, status); err != nil {
			return err
		}
		for code, cents := range prices {
			if _, err := x.ExecContext(ctx, `UPDATE price_category SET price_cents = ? WHERE show_id = ? AND code = ?`,
				cents, showID, code); err != nil {
				return dbErr(err, "price category %s of show %d", code, showID)
			}
			if _, err := x.ExecContext(ctx, `UPDATE seat SET price_cents = ? WHERE show_id = ? AND category = ?`,
				cents, showID, code); err != nil {
				return dbErr(err, "price seats of category %s of show %d", code, showID)
			}
		}
		if _, err := x.ExecContext(ctx, `UPDATE show_info SET plan_version = plan_version + 1 WHERE id = ?`, showID); err != nil {
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
