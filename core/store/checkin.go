package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/checkin"
)

var _ checkin.Store = (*DB)(nil)

const ticketCols = `show_id, order_no, seat_id, checked_in_at, checkin_gate, checkin_actor, checkin_scan`

type ticketRow struct {
	ShowID  int64  `db:"show_id"`
	OrderNo string `db:"order_no"`
	SeatID  string `db:"seat_id"`
	At      int64  `db:"checked_in_at"`
	Gate    string `db:"checkin_gate"`
	Actor   string `db:"checkin_actor"`
	Scan    string `db:"checkin_scan"`
}

func tickets(rs []ticketRow) []checkin.Ticket {
	out := make([]checkin.Ticket, len(rs))
	for i, r := range rs {
		out[i] = checkin.Ticket{ShowID: r.ShowID, OrderNo: r.OrderNo, SeatID: r.SeatID, At: fromMS(r.At),
			Gate: r.Gate, Actor: r.Actor, Scan: r.Scan}
	}
	return out
}

// AdmitTickets is check-in's one conditional update: only seats not yet
// admitted (checked_in_at = 0) of an order still paid. Two scans of one
// ticket block on its row; the later finds it admitted and matches none.
// A refund or cancel deletes the rows, so it and a scan also meet there.
func (db *DB) AdmitTickets(ctx context.Context, s checkin.Scan) ([]checkin.Ticket, error) {
	var rows []ticketRow
	err := db.InTx(ctx, func(t core.Tx) error {
		x := t.(*tx).x
		q, args, err := sqlx.In(`UPDATE order_seat SET checked_in_at = ?, checkin_gate = ?, checkin_actor = ?, checkin_scan = ?
 WHERE order_no = ? AND seat_id IN (?) AND checked_in_at = 0
 AND EXISTS (SELECT 1 FROM order_info o WHERE o.order_no = ? AND o.status = ?)`,
			ms(s.At), s.Gate, s.Actor, s.ID, s.OrderNo, s.SeatIDs, s.OrderNo, int(core.StatusPaid))
		if err != nil {
			return err
		}
		if _, err := x.ExecContext(ctx, x.Rebind(q), args...); err != nil {
			return dbErr(err, "check in %s", s.OrderNo)
		}
		// A locking read: the latest committed admissions (other gates'),
		// not a snapshot of before them.
		rows = nil
		if err := x.SelectContext(ctx, &rows, `SELECT `+ticketCols+` FROM order_seat WHERE order_no = ? ORDER BY seat_id`+
			db.dialect.forShare(), s.OrderNo); err != nil {
			return dbErr(err, "tickets of %s", s.OrderNo)
		}
		return nil
	})
	return tickets(rows), err
}

// UndoTickets clears the admissions of the order's seats among seatIDs and
// writes entry's audit row in the same transaction.
func (db *DB) UndoTickets(ctx context.Context, orderNo string, seatIDs []string,
	entry func([]checkin.Ticket) core.AuditEntry) ([]checkin.Ticket, error) {
	var undone []checkin.Ticket
	err := db.InTx(ctx, func(t core.Tx) error {
		x := t.(*tx).x
		q, args, err := sqlx.In(`SELECT `+ticketCols+` FROM order_seat
 WHERE order_no = ? AND seat_id IN (?) AND checked_in_at <> 0 ORDER BY seat_id`+db.dialect.forUpdate(), orderNo, seatIDs)
		if err != nil {
			return err
		}
		var rows []ticketRow
		if err := x.SelectContext(ctx, &rows, x.Rebind(q), args...); err != nil {
			return dbErr(err, "admitted tickets of %s", orderNo)
		}
		undone = tickets(rows)
		if len(rows) == 0 {
			return nil
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.SeatID
		}
		q, args, err = sqlx.In(`UPDATE order_seat SET checked_in_at = 0, checkin_gate = '', checkin_actor = '', checkin_scan = ''
 WHERE order_no = ? AND seat_id IN (?)`, orderNo, ids)
		if err != nil {
			return err
		}
		if _, err := x.ExecContext(ctx, x.Rebind(q), args...); err != nil {
			return dbErr(err, "undo check-in of %s", orderNo)
		}
		return addAudit(ctx, x, entry(undone))
	})
	return undone, err
}

// Counts reads a show's expected tickets (seats of its paid orders) and
// those admitted, per gate.
func (db *DB) Counts(ctx context.Context, showID int64) (checkin.Counts, error) {
	c := checkin.Counts{ShowID: showID}
	if err := db.r.GetContext(ctx, &c.Expected, `SELECT COUNT(*) FROM order_seat s
 JOIN order_info o ON o.order_no = s.order_no WHERE s.show_id = ? AND o.status = ?`, showID, int(core.StatusPaid)); err != nil {
		return c, dbErr(err, "expected tickets of show %d", showID)
	}
	var gates []struct {
		Gate string `db:"checkin_gate"`
		N    int    `db:"n"`
	}
	if err := db.r.SelectContext(ctx, &gates, `SELECT checkin_gate, COUNT(*) AS n FROM order_seat
 WHERE show_id = ? AND checked_in_at <> 0 GROUP BY checkin_gate ORDER BY n DESC, checkin_gate`, showID); err != nil {
		return c, dbErr(err, "admitted tickets of show %d", showID)
	}
	for _, g := range gates {
		c.Gates = append(c.Gates, checkin.GateCount{Gate: g.Gate, Admitted: g.N})
		c.Admitted += g.N
	}
	return c, nil
}

// Arrivals reads a show's admissions per gate and slot, oldest first.
func (db *DB) Arrivals(ctx context.Context, showID int64, slot time.Duration) ([]checkin.Arrival, error) {
	w := slot.Milliseconds()
	if w <= 0 {
		return nil, core.Invalidf("arrival slot %v: want a positive duration", slot)
	}
	var rows []struct {
		Start int64  `db:"slot_start"`
		Gate  string `db:"checkin_gate"`
		N     int    `db:"n"`
	}
	if err := db.r.SelectContext(ctx, &rows, `SELECT checked_in_at - checked_in_at % ? AS slot_start, checkin_gate, COUNT(*) AS n
 FROM order_seat WHERE show_id = ? AND checked_in_at <> 0 GROUP BY slot_start, checkin_gate ORDER BY slot_start, checkin_gate`,
		w, showID); err != nil {
		return nil, dbErr(err, "arrivals of show %d", showID)
	}
	out := make([]checkin.Arrival, len(rows))
	for i, r := range rows {
		out[i] = checkin.Arrival{Start: fromMS(r.Start), Gate: r.Gate, Admitted: r.N}
	}
	return out, nil
}

// TicketRows implements checkin.Store: the seats of a show's paid and
// refunded orders (a refunded order has no seats left: one row, seat "").
func (db *DB) TicketRows(ctx context.Context, showID int64) ([]checkin.ListRow, error) {
	var rows []struct {
		OrderNo string         `db:"order_no"`
		Code    string         `db:"code"`
		Status  int            `db:"status"`
		SeatID  sql.NullString `db:"seat_id"`
		Ticket  sql.NullString `db:"ticket_code"`
		At      sql.NullInt64  `db:"checked_in_at"`
	}
	if err := db.r.SelectContext(ctx, &rows, `SELECT o.order_no, o.code, o.status, s.seat_id, s.ticket_code, s.checked_in_at
 FROM order_info o LEFT JOIN order_seat s ON s.order_no = o.order_no
 WHERE o.show_id = ? AND o.status IN (?, ?) ORDER BY o.order_no, s.seat_id`,
		showID, int(core.StatusPaid), int(core.StatusRefunded)); err != nil {
		return nil, dbErr(err, "ticket list of show %d", showID)
	}
	out := make([]checkin.ListRow, len(rows))
	for i, r := range rows {
		out[i] = checkin.ListRow{OrderNo: r.OrderNo, Code: r.Code, Status: core.OrderStatus(r.Status),
			SeatID: r.SeatID.String, SeatCode: r.Ticket.String, Admitted: r.At.Int64 != 0}
	}
	return out, nil
}

// OpenCase implements checkin.Store.
func (db *DB) OpenCase(ctx context.Context, d core.Discrepancy) (int64, error) {
	var id int64
	err := db.InTx(ctx, func(t core.Tx) error {
		x := t.(*tx)
		if err := x.InsertDiscrepancy(ctx, d); err != nil {
			return err
		}
		var err error
		id, err = x.DiscrepancyID(ctx, d.TxnID, d.Kind)
		return err
	})
	return id, err
}
