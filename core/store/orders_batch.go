package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// The multi-row writes of group commit (core/groupcommit.go): many new
// orders in a handful of statements. Unlike their one-order forms they do
// not say which order broke a constraint; the engine then writes the batch
// order by order, where InsertOrder and InsertOrderSeats do.

// InsertOrders inserts the order_info rows and the order_placed_seat rows
// of many orders: InsertOrder for several at once. A duplicate code fails
// the whole call with core.ErrCodeTaken.
func (t *tx) InsertOrders(ctx context.Context, os []core.Order) error {
	if len(os) == 0 {
		return nil
	}
	seats := make([][]string, len(os))
	for i := range os {
		if os[i].Code == "" {
			os[i].Code = core.NewOrderCode()
		}
		seats[i] = sortedSeatIDs(os[i].SeatIDs)
		if err := checkDistinct(seats[i]); err != nil {
			return err
		}
	}
	args := make([]any, 0, 21*len(os))
	for i, o := range os {
		ids := seats[i]
		args = append(args, o.OrderNo, o.ShowID, o.UserID, int(o.Status), o.AmountCents, len(ids), strings.Join(ids, ","),
			ms(o.CreatedAt), ms(o.ExpireAt), ms(o.ClosedAt), o.CancelReason, o.CancelActor, o.PaidTxnID,
			o.TimeoutHop, ms(o.TimeoutDueAt), o.Code, o.Customer.Name, o.Customer.Email, o.Customer.Phone, o.ClientIP, o.Source)
	}
	err := insertRows(ctx, t.x, `INSERT INTO order_info
 (order_no, show_id, user_id, status, amount_cents, seat_count, seat_ids, created_at, expire_at,
  closed_at, cancel_reason, cancel_actor, paid_txn_id, timeout_hop, timeout_due_at,
  code, customer_name, customer_email, customer_phone, client_ip, source)
 VALUES `, 21, args, "insert %d orders", len(os))
	if isDuplicateCode(err) {
		return fmt.Errorf("insert %d orders: %w", len(os), core.ErrCodeTaken)
	}
	if err != nil {
		return err
	}
	// The placed seats point at order_info.id: read the ids back rather than
	// trusting a multi-row INSERT to hand out consecutive ones.
	nos := make([]string, len(os))
	for i, o := range os {
		nos[i] = o.OrderNo
	}
	q, inArgs, err := sqlx.In(`SELECT id, order_no FROM order_info WHERE order_no IN (?)`, nos)
	if err != nil {
		return dbErr(err, "ids of %d orders", len(os))
	}
	var rows []struct {
		ID      int64  `db:"id"`
		OrderNo string `db:"order_no"`
	}
	if err := t.x.SelectContext(ctx, &rows, t.x.Rebind(q), inArgs...); err != nil {
		return dbErr(err, "ids of %d orders", len(os))
	}
	ids := make(map[string]int64, len(rows))
	for _, r := range rows {
		ids[r.OrderNo] = r.ID
	}
	var placed []any
	for i, o := range os {
		id, ok := ids[o.OrderNo]
		if !ok {
			// Read back under another spelling (a collation that ignores
			// case): no placed seats under order id 0.
			return fmt.Errorf("store: insert %d orders: order %s not read back as written", len(os), o.OrderNo)
		}
		for _, s := range seats[i] {
			placed = append(placed, s, ms(o.CreatedAt), id)
		}
	}
	return insertRows(ctx, t.x, `INSERT INTO order_placed_seat (seat_id, created_at, order_id) VALUES `, 3, placed,
		"placed seats of %d orders", len(os))
}

// InsertSeatsOfOrders inserts the order_seat rows of many orders, each
// with its own ticket code, in (show, seat) order so concurrent batches
// take key locks in one order. A seat another order holds fails the whole
// call with core.ErrSeatUnavailable.
func (t *tx) InsertSeatsOfOrders(ctx context.Context, os []core.Order) error {
	type row struct {
		o    *core.Order
		seat string
	}
	var rows []row
	for i := range os {
		if len(os[i].SeatIDs) == 0 {
			return core.Invalidf("order %s has no seats", os[i].OrderNo)
		}
		for _, s := range os[i].SeatIDs {
			rows = append(rows, row{&os[i], s})
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.o.ShowID, b.o.ShowID), core.CompareSeatIDs(a.seat, b.seat))
	})
	args := make([]any, 0, seatRowCols*len(rows))
	for _, r := range rows {
		args = append(args, r.o.ShowID, r.seat, r.o.OrderNo, r.o.UserID, ms(r.o.CreatedAt))
	}
	err := insertSeatRows(ctx, t.x, args)
	if isDuplicate(err) {
		return fmt.Errorf("seats of %d orders: %w", len(os), core.ErrSeatUnavailable)
	}
	if err != nil {
		return dbErr(err, "seats of %d orders", len(os))
	}
	return nil
}

// AddEvents appends many events in the transaction.
func (t *tx) AddEvents(ctx context.Context, evs []core.Event) error {
	return addEvents(ctx, t.x, evs)
}

// AddEvents appends many events outside any transaction, in one statement
// per chunk: the after-commit timeline entries of many orders at once.
func (db *DB) AddEvents(ctx context.Context, evs []core.Event) error {
	return addEvents(ctx, db.w, evs)
}

func addEvents(ctx context.Context, x sqlx.ExecerContext, evs []core.Event) error {
	args := make([]any, 0, 4*len(evs))
	for _, ev := range evs {
		detail := []byte("{}")
		if ev.Detail != nil {
			var err error
			if detail, err = json.Marshal(ev.Detail); err != nil {
				return fmt.Errorf("store: event %s of %s: encode detail: %w", ev.Kind, ev.OrderNo, err)
			}
		}
		args = append(args, ev.OrderNo, ms(ev.At), ev.Kind, string(detail))
	}
	return insertRows(ctx, x, `INSERT INTO order_event (order_no, at, kind, detail) VALUES `, 4, args, "%d events", len(evs))
}

// insertRows runs prefix + VALUES tuples of cols values over args, in
// chunks of at most insertChunk rows. The error is the driver's, wrapped
// by dbErr, so callers can still tell a duplicate key.
func insertRows(ctx context.Context, x sqlx.ExecerContext, prefix string, cols int, args []any, what string, whatArgs ...any) error {
	for chunk := range slices.Chunk(args, insertChunk*cols) {
		if _, err := x.ExecContext(ctx, prefix+placeholders(len(chunk)/cols, cols), chunk...); err != nil {
			return dbErr(err, what, whatArgs...)
		}
	}
	return nil
}

// OrdersForUpdate reads the orders and locks their rows until the
// transaction ends (on SQLite the transaction already holds the write
// lock). Orders that do not exist are missing from the map.
func (t *tx) OrdersForUpdate(ctx context.Context, orderNos []string) (map[string]core.Order, error) {
	if len(orderNos) == 0 {
		return map[string]core.Order{}, nil
	}
	// ORDER BY: InnoDB locks the rows in the order it reads them, the
	// order-number order every batch of endings locks in.
	q, args, err := sqlx.In(`SELECT `+orderCols+` FROM order_info WHERE order_no IN (?) ORDER BY order_no`+t.d.forUpdate(), orderNos)
	if err != nil {
		return nil, dbErr(err, "lock %d orders", len(orderNos))
	}
	var rows []orderRow
	if err := t.x.SelectContext(ctx, &rows, t.x.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "lock %d orders", len(orderNos))
	}
	orders := make(map[string]core.Order, len(rows))
	for _, r := range rows {
		orders[r.OrderNo] = r.order()
	}
	return orders, nil
}

// TransitionPendings is TransitionPending for many orders in one UPDATE:
// each order_no of ts gets its own close time, reason, actor and txn id,
// and only while pending. It returns how many orders it moved to to.
func (t *tx) TransitionPendings(ctx context.Context, to core.OrderStatus, ts map[string]core.Transition) (int, error) {
	if len(ts) == 0 {
		return 0, nil
	}
	nos := slices.Sorted(maps.Keys(ts))
	cases := func(col string, v func(core.Transition) any) (string, []any) {
		var b strings.Builder
		args := make([]any, 0, 2*len(nos))
		b.WriteString(col + " = CASE order_no")
		for _, no := range nos {
			b.WriteString(" WHEN ? THEN ?")
			args = append(args, no, v(ts[no]))
		}
		b.WriteString(" END")
		return b.String(), args
	}
	set := []string{"status = ?"}
	args := []any{int(to)}
	for _, c := range []struct {
		col string
		v   func(core.Transition) any
	}{
		{"closed_at", func(tr core.Transition) any { return ms(tr.At) }},
		{"cancel_reason", func(tr core.Transition) any { return tr.Reason }},
		{"cancel_actor", func(tr core.Transition) any { return tr.Actor }},
		{"paid_txn_id", func(tr core.Transition) any { return tr.TxnID }},
	} {
		expr, a := cases(c.col, c.v)
		set, args = append(set, expr), append(args, a...)
	}
	for _, no := range nos {
		args = append(args, no)
	}
	res, err := t.x.ExecContext(ctx, `UPDATE order_info SET `+strings.Join(set, ", ")+
		` WHERE status = 0 AND order_no IN (`+strings.TrimSuffix(strings.Repeat("?,", len(nos)), ",")+`)`, args...)
	if err != nil {
		return 0, dbErr(err, "move %d orders to %s", len(ts), to)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbErr(err, "move %d orders to %s: rows", len(ts), to)
	}
	return int(n), nil
}

// DeleteSeatsOfOrders is DeleteOrderSeats for many orders: it deletes
// their order_seat rows and returns their seat ids by order.
func (t *tx) DeleteSeatsOfOrders(ctx context.Context, orderNos []string) (map[string][]string, error) {
	q, args, err := sqlx.In(`SELECT order_no, seat_id FROM order_seat WHERE order_no IN (?)`+t.d.forUpdate(), orderNos)
	if err != nil {
		return nil, dbErr(err, "seats of %d orders", len(orderNos))
	}
	var rows []struct {
		OrderNo string `db:"order_no"`
		SeatID  string `db:"seat_id"`
	}
	if err := t.x.SelectContext(ctx, &rows, t.x.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "seats of %d orders", len(orderNos))
	}
	seats := make(map[string][]string, len(orderNos))
	for _, r := range rows {
		seats[r.OrderNo] = append(seats[r.OrderNo], r.SeatID)
	}
	if len(rows) == 0 {
		return seats, nil
	}
	if q, args, err = sqlx.In(`DELETE FROM order_seat WHERE order_no IN (?)`, orderNos); err != nil {
		return nil, dbErr(err, "delete seats of %d orders", len(orderNos))
	}
	if _, err := t.x.ExecContext(ctx, t.x.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "delete seats of %d orders", len(orderNos))
	}
	for no, ids := range seats {
		seats[no] = sortedSeatIDs(ids)
	}
	return seats, nil
}
