package store

import (
	"context"
	"time"
)

// ExtendHold is the conditional update behind core.Engine.Extend: it moves
// expire_at only while the order is pending and still expires at from, so
// it can neither revive an ended order nor add onto an extension it did
// not see.
func (t *tx) ExtendHold(ctx context.Context, orderNo string, from, to time.Time) (bool, error) {
	res, err := t.x.ExecContext(ctx,
		`UPDATE order_info SET expire_at = ? WHERE order_no = ? AND status = 0 AND expire_at = ?`,
		ms(to), orderNo, ms(from))
	if err != nil {
		return false, dbErr(err, "extend hold of %s", orderNo)
	}
	return oneRow(res, "extend hold "+orderNo)
}
