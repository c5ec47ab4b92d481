package store

import (
	"context"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/gather"
)

// Reads of single orders that arrive together (a payment's read-back after
// marking its seats sold, the API's and console's order lookups) go as one
// SELECT … IN: at 2,000 payment callbacks a second the read-backs were
// half of MariaDB's statements. A read arriving alone is the same one-row
// SELECT as ever.
const (
	orderReadRunners  = 4  // SELECTs in flight at once
	orderReadMaxBatch = 64 // orders per SELECT
)

// orderRead is one Order call on its way to the database.
type orderRead struct {
	orderNo string
	o       core.Order
	err     error
}

func (db *DB) newOrderReads() *gather.Batcher[*orderRead] {
	return gather.New(orderReadRunners, orderReadMaxBatch, db.runOrderReads)
}

// Order returns the order with SeatIDs: the seats it was placed with, in
// seat order. They come from order_info.seat_ids, so a cancelled order still
// lists its seats although its order_seat rows are gone; whether a seat is
// taken is only ever decided by order_seat (TakenSeats).
func (db *DB) Order(ctx context.Context, orderNo string) (core.Order, error) {
	r := &orderRead{orderNo: orderNo}
	db.orderReads.Do(ctx, r)
	return r.o, r.err
}

// runOrderReads answers a batch of order reads with one query.
func (db *DB) runOrderReads(ctx context.Context, batch []*orderRead) {
	if len(batch) == 1 {
		r := batch[0]
		r.o, r.err = getOrder(ctx, db.r, r.orderNo, "")
		return
	}
	nos := make([]string, len(batch))
	for i, r := range batch {
		nos[i] = r.orderNo
	}
	q, args, err := sqlx.In(`SELECT `+orderCols+` FROM order_info WHERE order_no IN (?)`, nos)
	var rows []orderRow
	if err == nil {
		err = sqlx.SelectContext(ctx, db.r, &rows, db.r.Rebind(q), args...)
	}
	if err != nil {
		for _, r := range batch {
			r.err = dbErr(err, "order %s", r.orderNo)
		}
		return
	}
	found := make(map[string]*orderRow, len(rows))
	for i := range rows {
		found[rows[i].OrderNo] = &rows[i]
	}
	for _, r := range batch {
		if row, ok := found[r.orderNo]; ok {
			r.o = row.order()
			continue
		}
		// Not found by its exact spelling: asked alone, so that a number
		// the column's collation matches otherwise reads as it always did.
		r.o, r.err = getOrder(ctx, db.r, r.orderNo, "")
	}
}
