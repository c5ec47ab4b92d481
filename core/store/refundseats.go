package store

import (
	"context"
	"strings"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

var _ core.SeatRefundTx = (*tx)(nil)

// DeleteOrderSeatsOf deletes the named order_seat rows of the order (a
// partial refund) and returns the seat ids it deleted, in seat order. The
// rows are read with a lock first, as DeleteOrderSeats does.
func (t *tx) DeleteOrderSeatsOf(ctx context.Context, orderNo string, seatIDs []string) ([]string, error) {
	if len(seatIDs) == 0 {
		return nil, nil
	}
	q, args, err := sqlx.In(`SELECT seat_id FROM order_seat WHERE order_no = ? AND seat_id IN (?)`+t.d.forUpdate(),
		orderNo, seatIDs)
	if err != nil {
		return nil, dbErr(err, "seats of order %s", orderNo)
	}
	var ids []string
	if err := t.x.SelectContext(ctx, &ids, t.x.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "seats of order %s", orderNo)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	q, args, err = sqlx.In(`DELETE FROM order_seat WHERE order_no = ? AND seat_id IN (?)`, orderNo, ids)
	if err != nil {
		return nil, dbErr(err, "delete seats of order %s", orderNo)
	}
	if _, err := t.x.ExecContext(ctx, t.x.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "delete seats of order %s", orderNo)
	}
	return sortedSeatIDs(ids), nil
}

// KeepPaidSeats shrinks a paid order to the seats it keeps and their
// amount. order_placed_seat keeps every seat the order was placed with, so
// a search by a refunded seat still finds the order.
func (t *tx) KeepPaidSeats(ctx context.Context, orderNo string, seatIDs []string, amountCents int64) (bool, error) {
	ids := sortedSeatIDs(seatIDs)
	res, err := t.x.ExecContext(ctx, `UPDATE order_info SET seat_ids = ?, seat_count = ?, amount_cents = ?
 WHERE order_no = ? AND status = ?`, strings.Join(ids, ","), len(ids), amountCents, orderNo, int(core.StatusPaid))
	if err != nil {
		return false, dbErr(err, "keep seats of order %s", orderNo)
	}
	return oneRow(res, "keep seats of "+orderNo)
}
