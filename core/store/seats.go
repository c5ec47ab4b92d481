package store

import (
	"context"
	"database/sql"
	"slices"
	"strconv"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// insertChunk bounds the rows of one multi-row INSERT, far below both
// dialects' placeholder limits.
const insertChunk = 500

type seatRow struct {
	ShowID     int64  `db:"show_id"`
	SeatID     string `db:"seat_id"`
	Row        int    `db:"row_no"`
	Col        int    `db:"col_no"`
	PriceCents int64  `db:"price_cents"`
	Section    string `db:"section"`
	RowLabel   string `db:"row_label"`
	Number     int    `db:"seat_number"`
	Category   string `db:"category"`
	X          int    `db:"x"`
	Y          int    `db:"y"`
	Accessible string `db:"accessible_kind"`
	Rank       int    `db:"seat_rank"`
	AisleAfter int    `db:"aisle_after"`
}

const seatCols = `show_id, seat_id, row_no, col_no, price_cents, section, row_label, seat_number, category, x, y, accessible_kind, seat_rank, aisle_after`

func (r seatRow) seat() core.Seat {
	return core.Seat{ShowID: r.ShowID, SeatID: r.SeatID, Row: r.Row, Col: r.Col, PriceCents: r.PriceCents,
		Section: r.Section, RowLabel: r.RowLabel, Number: r.Number, Category: r.Category, X: r.X, Y: r.Y,
		Accessible: r.Accessible, Rank: r.Rank, AisleAfter: r.AisleAfter == 1}
}

func seatRows(rs []seatRow) []core.Seat {
	out := make([]core.Seat, len(rs))
	for i, r := range rs {
		out[i] = r.seat()
	}
	return out
}

// Seats returns the show's seat plan ordered by row, col.
func (db *DB) Seats(ctx context.Context, showID int64) ([]core.Seat, error) {
	var rs []seatRow
	err := db.r.SelectContext(ctx, &rs,
		`SELECT `+seatCols+` FROM seat WHERE show_id = ? ORDER BY row_no, col_no`, showID)
	if err != nil {
		return nil, dbErr(err, "seats of show %d", showID)
	}
	return seatRows(rs), nil
}

// TakenSeats is the DB's view of the show's seats, one SeatHold per
// order_seat row in seat order: pending order → SeatLocked, paid → SeatSold.
// Rows whose order is cancelled or missing (reconcile's check 3 removes
// them) are reported as SeatLocked by their order_no: the seat is taken
// until the row goes. LockedAt is the order's created_at (the row's own when
// the order is missing).
func (db *DB) TakenSeats(ctx context.Context, showID int64) ([]core.SeatHold, error) {
	var rs []struct {
		SeatID    string        `db:"seat_id"`
		OrderNo   string        `db:"order_no"`
		UserID    int64         `db:"user_id"`
		CreatedAt int64         `db:"created_at"`
		Status    sql.NullInt64 `db:"status"`
		OrderAt   sql.NullInt64 `db:"order_created_at"`
	}
	err := db.r.SelectContext(ctx, &rs, `SELECT s.seat_id, s.order_no, s.user_id, s.created_at,
 o.status, o.created_at AS order_created_at
 FROM order_seat s LEFT JOIN order_info o ON o.order_no = s.order_no
 WHERE s.show_id = ?`, showID)
	if err != nil {
		return nil, dbErr(err, "taken seats of show %d", showID)
	}
	out := make([]core.SeatHold, len(rs))
	for i, r := range rs {
		h := core.SeatHold{SeatID: r.SeatID, State: core.SeatLocked, OrderNo: r.OrderNo, UserID: r.UserID,
			LockedAt: fromMS(r.CreatedAt)}
		if r.OrderAt.Valid {
			h.LockedAt = fromMS(r.OrderAt.Int64)
		}
		if r.Status.Valid && core.OrderStatus(r.Status.Int64) == core.StatusPaid {
			h.State = core.SeatSold
		}
		out[i] = h
	}
	slices.SortFunc(out, func(a, b core.SeatHold) int { return core.CompareSeatIDs(a.SeatID, b.SeatID) })
	return out, nil
}

// InsertOrderSeats inserts one order_seat row per seat of o, each with its
// own ticket code, in seat order so that concurrent transactions take key
// locks in the same order. When
// UNIQUE(show_id, seat_id) rejects a row it returns core.SeatsUnavailable
// naming the seats other orders hold; the transaction stays usable, for the
// caller to roll back.
func (t *tx) InsertOrderSeats(ctx context.Context, o core.Order) error {
	if len(o.SeatIDs) == 0 {
		return core.Invalidf("order %s has no seats", o.OrderNo)
	}
	ids := sortedSeatIDs(o.SeatIDs)
	if err := checkDistinct(ids); err != nil {
		return err
	}
	args := make([]any, 0, seatRowCols*len(ids))
	for _, id := range ids {
		args = append(args, o.ShowID, id, o.OrderNo, o.UserID, ms(o.CreatedAt))
	}
	err := insertSeatRows(ctx, t.x, args)
	if isDuplicate(err) {
		return t.seatsTaken(ctx, o, ids)
	}
	if err != nil {
		return dbErr(err, "insert seats of order %s", o.OrderNo)
	}
	return nil
}

// seatsTaken builds the seat_unavailable error after a duplicate key, naming
// the seats that other orders hold. The read locks on MySQL so it sees the
// latest committed rows, not the transaction's snapshot.
func (t *tx) seatsTaken(ctx context.Context, o core.Order, ids []string) error {
	q, args, err := sqlx.In(`SELECT seat_id FROM order_seat WHERE show_id = ? AND seat_id IN (?) AND order_no <> ?`+
		t.d.forUpdate(), o.ShowID, ids, o.OrderNo)
	if err != nil {
		return dbErr(err, "taken seats")
	}
	var taken []string
	if err := t.x.SelectContext(ctx, &taken, t.x.Rebind(q), args...); err != nil {
		return dbErr(err, "taken seats of order %s", o.OrderNo)
	}
	if len(taken) == 0 {
		// The holder let go between our insert and this read: the seats
		// were still unavailable when we tried.
		return core.SeatsUnavailable(ids)
	}
	return core.SeatsUnavailable(sortedSeatIDs(taken))
}

// DeleteOrderSeats deletes the order's order_seat rows and returns their
// seat ids in seat order.
func (t *tx) DeleteOrderSeats(ctx context.Context, orderNo string) ([]string, error) {
	var ids []string
	if err := t.x.SelectContext(ctx, &ids,
		`SELECT seat_id FROM order_seat WHERE order_no = ?`+t.d.forUpdate(), orderNo); err != nil {
		return nil, dbErr(err, "seats of order %s", orderNo)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if _, err := t.x.ExecContext(ctx, `DELETE FROM order_seat WHERE order_no = ?`, orderNo); err != nil {
		return nil, dbErr(err, "delete seats of order %s", orderNo)
	}
	return sortedSeatIDs(ids), nil
}

// DemoSeats builds a rows×cols plan with ids "A-1" … (rows A..Z, AA, AB …,
// 1-based columns). The front third of the rows costs 1.5×basePrice, the
// middle third 1.25×, the rest basePrice. ShowID is left 0 for CreateShow.
func DemoSeats(rows, cols int, basePrice int64) []core.Seat {
	seats := make([]core.Seat, 0, max(rows*cols, 0))
	for r := 1; r <= rows; r++ {
		price := basePrice
		switch {
		case (r-1)*3 < rows:
			price = basePrice * 3 / 2
		case (r-1)*3 < 2*rows:
			price = basePrice * 5 / 4
		}
		for c := 1; c <= cols; c++ {
			seats = append(seats, core.Seat{SeatID: RowName(r) + "-" + strconv.Itoa(c), Row: r, Col: c, PriceCents: price,
				RowLabel: RowName(r), Number: c, X: c, Y: r})
		}
	}
	return seats
}

// RowName is core.RowName, for the tests that name demo seats.
func RowName(r int) string { return core.RowName(r) }

// sortedSeatIDs returns a sorted copy of ids in seat order.
func sortedSeatIDs(ids []string) []string {
	out := slices.Clone(ids)
	slices.SortFunc(out, core.CompareSeatIDs)
	return out
}

// OrphanSeat names an order_seat row whose order is cancelled or missing
// (reconcile finds them with ShowSeatRows): the seat stays taken until
// DeleteOrphanSeat removes the row.
type OrphanSeat struct {
	ShowID  int64
	SeatID  string
	OrderNo string
	UserID  int64
	Missing bool // no order_info row; otherwise the order is cancelled
}

// DeleteOrphanSeat deletes the row of s only while it is still an orphan:
// false when the row is gone, belongs to another order now, or its order is
// live (pending or paid), so reconcile never frees a seat someone holds.
func (db *DB) DeleteOrphanSeat(ctx context.Context, s OrphanSeat) (bool, error) {
	res, err := db.w.ExecContext(ctx, `DELETE FROM order_seat WHERE show_id = ? AND seat_id = ? AND order_no = ?
 AND NOT EXISTS (SELECT 1 FROM order_info o WHERE o.order_no = ? AND o.status IN (?, ?))`,
		s.ShowID, s.SeatID, s.OrderNo, s.OrderNo, int(core.StatusPending), int(core.StatusPaid))
	if err != nil {
		return false, dbErr(err, "delete orphan seat %d/%s of %s", s.ShowID, s.SeatID, s.OrderNo)
	}
	return oneRow(res, "delete orphan seat "+s.SeatID)
}

// checkDistinct refuses a seat listed twice in sorted ids.
func checkDistinct(ids []string) error {
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			return core.Invalidf("seat %s requested twice", ids[i])
		}
	}
	return nil
}
