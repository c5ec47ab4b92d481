package store

import (
	"context"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

var _ core.BestRulesStore = (*DB)(nil)

// SetBestRules implements core.BestRulesStore. The show row is locked
// first, as ReplacePlan does, so a placement's CheckShowSale either
// committed before or finds the new plan_version.
func (db *DB) SetBestRules(ctx context.Context, showID int64, r core.BestRules) (core.Show, error) {
	var show core.Show
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		status, err := lockShow(ctx, x, db.dialect, showID)
		if err != nil {
			return err
		}
		if status == core.ShowCancelled {
			return core.ErrShowCancelled
		}
		if _, err := x.ExecContext(ctx, `UPDATE show_info SET best_focal_set = ?, best_focal_x = ?, best_focal_y = ?,
 best_allow_singles = ?, plan_version = plan_version + 1 WHERE id = ?`,
			digit(r.FocalSet), r.FocalX, r.FocalY, digit(r.AllowSingles), showID); err != nil {
			return dbErr(err, "best-available rules of show %d", showID)
		}
		show, err = showInTx(ctx, x, showID)
		return err
	})
	if err != nil {
		return core.Show{}, err
	}
	return show, nil
}
