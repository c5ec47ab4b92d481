package store

import (
	"context"
	"time"

	"seatflow/core"
)

var _ core.SeatExchangeTx = (*tx)(nil)

// AddPlacedSeats adds seats an exchange gave the order to the seat search
// (order_placed_seat), at the exchange's time, so searching a new seat
// finds the order as searching a seat it was placed with does.
func (t *tx) AddPlacedSeats(ctx context.Context, orderNo string, seatIDs []string, at time.Time) error {
	ids := sortedSeatIDs(seatIDs)
	var id int64
	if err := t.x.GetContext(ctx, &id, `SELECT id FROM order_info WHERE order_no = ?`, orderNo); err != nil {
		return dbErr(err, "order %s", orderNo)
	}
	args := make([]any, 0, 3*len(ids))
	for _, s := range ids {
		args = append(args, s, ms(at), id)
	}
	if _, err := t.x.ExecContext(ctx, `INSERT INTO order_placed_seat (seat_id, created_at, order_id) VALUES `+
		placeholders(len(ids), 3), args...); err != nil {
		return dbErr(err, "placed seats of order %s", orderNo)
	}
	return nil
}
