package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/checkin"
)

var _ core.SeatTicketStore = (*DB)(nil)

// seatCodeAttempts bounds the draws of one INSERT's seat codes: at 2^50
// codes a second draw is already rare, a sixth would mean a broken
// generator.
const seatCodeAttempts = 6

// seatRowCols is how many values insertSeatRows takes per row.
const seatRowCols = 5

// insertSeatRows inserts order_seat rows (show_id, seat_id, order_no,
// user_id, created_at: seatRowCols values each) in chunks, each row with a
// fresh seat code (core.NewSeatCode). A chunk whose code another row has
// is drawn again and sent again: the failed INSERT is undone by the
// database as a statement, so the transaction goes on. Any other error,
// a taken seat's duplicate key included, is returned as the driver's.
func insertSeatRows(ctx context.Context, x sqlx.ExecerContext, args []any) error {
	for chunk := range slices.Chunk(args, insertChunk*seatRowCols) {
		rows := len(chunk) / seatRowCols
		q := `INSERT INTO order_seat (show_id, seat_id, order_no, user_id, created_at, ticket_code) VALUES ` +
			placeholders(rows, seatRowCols+1)
		coded := make([]any, 0, rows*(seatRowCols+1))
		for i := 1; ; i++ {
			coded = coded[:0]
			for r := range slices.Chunk(chunk, seatRowCols) {
				coded = append(append(coded, r...), core.NewSeatCode())
			}
			_, err := x.ExecContext(ctx, q, coded...)
			if !isDuplicateSeatCode(err) {
				if err != nil {
					return err
				}
				break
			}
			if i == seatCodeAttempts {
				return fmt.Errorf("%d draws of seat codes all taken", i)
			}
		}
	}
	return nil
}

// isDuplicateSeatCode reports a violation of order_seat's unique ticket
// code index (the two databases name the index or the column).
func isDuplicateSeatCode(err error) bool {
	if err == nil || !isDuplicate(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "uk_ticket_code") || strings.Contains(msg, "order_seat.ticket_code")
}

// SeatTickets implements core.SeatTicketStore.
func (db *DB) SeatTickets(ctx context.Context, orderNo string) ([]core.SeatTicket, error) {
	var rows []struct {
		SeatID string `db:"seat_id"`
		Code   string `db:"ticket_code"`
	}
	if err := db.r.SelectContext(ctx, &rows, `SELECT seat_id, ticket_code FROM order_seat WHERE order_no = ?`,
		orderNo); err != nil {
		return nil, dbErr(err, "seat tickets of %s", orderNo)
	}
	out := make([]core.SeatTicket, len(rows))
	for i, r := range rows {
		out[i] = core.SeatTicket{SeatID: r.SeatID, Code: r.Code}
	}
	slices.SortFunc(out, func(a, b core.SeatTicket) int { return core.CompareSeatIDs(a.SeatID, b.SeatID) })
	return out, nil
}

// TicketByCode implements checkin.Store: the seat whose normalized ticket
// code this is, by uk_ticket_code.
func (db *DB) TicketByCode(ctx context.Context, code string) (checkin.Ticket, error) {
	var r ticketRow
	err := db.r.GetContext(ctx, &r, `SELECT `+ticketCols+` FROM order_seat WHERE ticket_code = ?`, code)
	if errors.Is(err, sql.ErrNoRows) {
		return checkin.Ticket{}, fmt.Errorf("seat code %s: %w", code, core.ErrOrderNotFound)
	}
	if err != nil {
		return checkin.Ticket{}, dbErr(err, "seat code %s", code)
	}
	return tickets([]ticketRow{r})[0], nil
}
