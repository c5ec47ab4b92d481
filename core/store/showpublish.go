package store

import (
	"context"
	"fmt"

	"seatflow/core"
)

var _ core.ShowPublishStore = (*DB)(nil)

// PublishShow implements core.ShowPublishStore: one conditional UPDATE,
// which waits for the shared locks of placements in flight (CheckShowSale)
// as CancelShow does.
func (db *DB) PublishShow(ctx context.Context, showID int64) (bool, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE show_info SET status = ? WHERE id = ? AND status = ?`,
		int(core.ShowOnSale), showID, int(core.ShowDraft))
	if err != nil {
		return false, dbErr(err, "publish show %d", showID)
	}
	won, err := oneRow(res, fmt.Sprintf("publish show %d", showID))
	if err != nil || won {
		return won, err
	}
	show, err := db.Show(ctx, showID)
	if err != nil {
		return false, err
	}
	if show.Status == core.ShowCancelled {
		return false, core.ErrShowCancelled
	}
	return false, nil
}
