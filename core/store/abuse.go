package store

import (
	"context"

	"seatflow/core"
)

// PendingHoldsFrom counts the pending orders placed from clientIP on the
// show: one range of idx_show_client.
func (db *DB) PendingHoldsFrom(ctx context.Context, showID int64, clientIP string) (int, error) {
	var n int
	if err := db.r.GetContext(ctx, &n, `SELECT COUNT(*) FROM order_info WHERE show_id = ? AND client_ip = ? AND status = ?`,
		showID, clientIP, int(core.StatusPending)); err != nil {
		return 0, dbErr(err, "pending holds of show %d from %s", showID, clientIP)
	}
	return n, nil
}
