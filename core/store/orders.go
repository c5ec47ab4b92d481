package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// orderCols is the column list every order read selects into orderRow.
const orderCols = `order_no, show_id, user_id, status, amount_cents, seat_ids, created_at, expire_at,
 closed_at, cancel_reason, cancel_actor, paid_txn_id, timeout_hop, timeout_due_at,
 timeout_send, timeout_resend_at, code, customer_name, customer_email, customer_phone, source`

type orderRow struct {
	OrderNo      string `db:"order_no"`
	ShowID       int64  `db:"show_id"`
	UserID       int64  `db:"user_id"`
	Status       int    `db:"status"`
	AmountCents  int64  `db:"amount_cents"`
	SeatIDs      string `db:"seat_ids"`
	CreatedAt    int64  `db:"created_at"`
	ExpireAt     int64  `db:"expire_at"`
	ClosedAt     int64  `db:"closed_at"`
	CancelReason string `db:"cancel_reason"`
	CancelActor  string `db:"cancel_actor"`
	PaidTxnID    string `db:"paid_txn_id"`
	TimeoutHop   int    `db:"timeout_hop"`
	TimeoutDueAt int64  `db:"timeout_due_at"`
	TimeoutSend  int    `db:"timeout_send"`
	ResendAt     int64  `db:"timeout_resend_at"`
	Code         string `db:"code"`
	Name         string `db:"customer_name"`
	Email        string `db:"customer_email"`
	Phone        string `db:"customer_phone"`
	Source       string `db:"source"`
}

func (r orderRow) order() core.Order {
	o := core.Order{
		OrderNo:         r.OrderNo,
		ShowID:          r.ShowID,
		UserID:          r.UserID,
		Status:          core.OrderStatus(r.Status),
		AmountCents:     r.AmountCents,
		CreatedAt:       fromMS(r.CreatedAt),
		ExpireAt:        fromMS(r.ExpireAt),
		ClosedAt:        fromMS(r.ClosedAt),
		CancelReason:    r.CancelReason,
		CancelActor:     r.CancelActor,
		PaidTxnID:       r.PaidTxnID,
		TimeoutHop:      r.TimeoutHop,
		TimeoutDueAt:    fromMS(r.TimeoutDueAt),
		TimeoutSend:     core.HopState(r.TimeoutSend),
		TimeoutResendAt: fromMS(r.ResendAt),
		Code:            r.Code,
		Customer:        core.Customer{Name: r.Name, Email: r.Email, Phone: r.Phone},
		Source:          r.Source,
	}
	if r.SeatIDs != "" {
		o.SeatIDs = strings.Split(r.SeatIDs, ",")
	}
	return o
}

func orderRows(rs []orderRow) []core.Order {
	out := make([]core.Order, len(rs))
	for i, r := range rs {
		out[i] = r.order()
	}
	return out
}

func getOrder(ctx context.Context, q sqlx.QueryerContext, orderNo, suffix string) (core.Order, error) {
	var r orderRow
	err := sqlx.GetContext(ctx, q, &r, `SELECT `+orderCols+` FROM order_info WHERE order_no = ?`+suffix, orderNo)
	if errors.Is(err, sql.ErrNoRows) {
		return core.Order{}, fmt.Errorf("order %s: %w", orderNo, core.ErrOrderNotFound)
	}
	if err != nil {
		return core.Order{}, dbErr(err, "order %s", orderNo)
	}
	return r.order(), nil
}

// OrderForUpdate reads the order and, on MySQL, locks its row until the
// transaction ends; on SQLite the transaction already holds the write lock.
func (t *tx) OrderForUpdate(ctx context.Context, orderNo string) (core.Order, error) {
	return getOrder(ctx, t.x, orderNo, t.d.forUpdate())
}

// InsertOrder inserts the order_info row and the seats it was placed with
// for the seat search (order_placed_seat), not its holds: InsertOrderSeats.
// Status, hop and close fields are written as given. An order without a
// code (test fixtures, bench seeding: the engine always draws one) gets a
// random one.
func (t *tx) InsertOrder(ctx context.Context, o core.Order) error {
	if o.Code == "" {
		o.Code = core.NewOrderCode()
	}
	ids := sortedSeatIDs(o.SeatIDs)
	if err := checkDistinct(ids); err != nil {
		return err
	}
	res, err := t.x.ExecContext(ctx, `INSERT INTO order_info
 (order_no, show_id, user_id, status, amount_cents, seat_count, seat_ids, created_at, expire_at,
  closed_at, cancel_reason, cancel_actor, paid_txn_id, timeout_hop, timeout_due_at,
  code, customer_name, customer_email, customer_phone, client_ip, source)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.OrderNo, o.ShowID, o.UserID, int(o.Status), o.AmountCents, len(ids), strings.Join(ids, ","),
		ms(o.CreatedAt), ms(o.ExpireAt), ms(o.ClosedAt), o.CancelReason, o.CancelActor, o.PaidTxnID,
		o.TimeoutHop, ms(o.TimeoutDueAt), o.Code, o.Customer.Name, o.Customer.Email, o.Customer.Phone, o.ClientIP, o.Source)
	if isDuplicateCode(err) {
		return fmt.Errorf("insert order %s: code %s: %w", o.OrderNo, o.Code, core.ErrCodeTaken)
	}
	if err != nil {
		return dbErr(err, "insert order %s", o.OrderNo)
	}
	if len(ids) == 0 {
		return nil
	}
	id, err := res.LastInsertId()
	if err != nil {
		return dbErr(err, "insert order %s: id", o.OrderNo)
	}
	args := make([]any, 0, 3*len(ids))
	for _, s := range ids {
		args = append(args, s, ms(o.CreatedAt), id)
	}
	if _, err := t.x.ExecContext(ctx, `INSERT INTO order_placed_seat (seat_id, created_at, order_id) VALUES `+
		placeholders(len(ids), 3), args...); err != nil {
		return dbErr(err, "insert order %s: placed seats", o.OrderNo)
	}
	return nil
}

// OrderNoByCode finds the order number of a normalized short code.
// Unique index uk_code.
func (db *DB) OrderNoByCode(ctx context.Context, code string) (string, error) {
	var no string
	err := db.r.GetContext(ctx, &no, `SELECT order_no FROM order_info WHERE code = ?`, code)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("order code %s: %w", code, core.ErrOrderNotFound)
	}
	if err != nil {
		return "", dbErr(err, "order code %s", code)
	}
	return no, nil
}

// TransitionPending is the one conditional update that ends a pending order;
// true when this caller's update matched, i.e. it won the race.
func (t *tx) TransitionPending(ctx context.Context, orderNo string, to core.OrderStatus, tr core.Transition) (bool, error) {
	res, err := t.x.ExecContext(ctx,
		`UPDATE order_info SET status=?, closed_at=?, cancel_reason=?, cancel_actor=?, paid_txn_id=? WHERE order_no=? AND status=0`,
		int(to), ms(tr.At), tr.Reason, tr.Actor, tr.TxnID, orderNo)
	if err != nil {
		return false, dbErr(err, "transition %s to %s", orderNo, to)
	}
	return oneRow(res, "transition "+orderNo)
}

// ClaimTimeoutHop moves timeout_hop from→to while the order is pending and
// still at from, and records the new hop's send as unconfirmed in the same
// update. Call it and the other timeout-send writes outside any InTx
// callback (on SQLite they need the writer connection a transaction would
// be holding).
func (db *DB) ClaimTimeoutHop(ctx context.Context, orderNo string, from, to int, send core.HopSend) (bool, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE order_info SET timeout_hop=?, timeout_due_at=?, timeout_send=?, timeout_resend_at=?
 WHERE order_no=? AND status=0 AND timeout_hop=?`,
		to, ms(send.DueAt), int(send.State), ms(send.ResendAt), orderNo, from)
	if err != nil {
		return false, dbErr(err, "claim timeout hop %s %d->%d", orderNo, from, to)
	}
	return oneRow(res, "claim timeout hop "+orderNo)
}

// ClaimTimeoutResend takes over hop's unconfirmed send once its resend time
// has come; of several resenders, one matches.
func (db *DB) ClaimTimeoutResend(ctx context.Context, orderNo string, hop int, now time.Time, send core.HopSend) (bool, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE order_info SET timeout_due_at=?, timeout_send=?, timeout_resend_at=?
 WHERE order_no=? AND status=0 AND timeout_hop=? AND timeout_send<>0 AND timeout_resend_at<=?`,
		ms(send.DueAt), int(send.State), ms(send.ResendAt), orderNo, hop, ms(now))
	if err != nil {
		return false, dbErr(err, "claim timeout resend %s hop %d", orderNo, hop)
	}
	return oneRow(res, "claim timeout resend "+orderNo)
}

// ClaimTimeoutHops runs ClaimTimeoutHop's conditional update for each
// claim in one transaction: a batch of re-arms pays one commit, and each
// update still tells its own winner. It locks the rows in order-number
// order, as the ending writers do, so batches never wait on each other in
// a cycle.
func (db *DB) ClaimTimeoutHops(ctx context.Context, claims []core.HopClaim) ([]bool, error) {
	won := make([]bool, len(claims))
	order := make([]int, len(claims))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(claims[a].OrderNo, claims[b].OrderNo) })
	err := db.withTx(ctx, func(sx *sqlx.Tx) error {
		for _, i := range order {
			c := claims[i]
			res, err := sx.ExecContext(ctx, `UPDATE order_info SET timeout_hop=?, timeout_due_at=?, timeout_send=?, timeout_resend_at=?
 WHERE order_no=? AND status=0 AND timeout_hop=?`,
				c.To, ms(c.Send.DueAt), int(c.Send.State), ms(c.Send.ResendAt), c.OrderNo, c.From)
			if err != nil {
				return dbErr(err, "claim timeout hop %s %d->%d", c.OrderNo, c.From, c.To)
			}
			if won[i], err = oneRow(res, "claim timeout hop "+c.OrderNo); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return won, nil
}

// MarkTimeoutsSent confirms the claimed sends of hops in one statement.
func (db *DB) MarkTimeoutsSent(ctx context.Context, hops []core.HopRef) error {
	if len(hops) == 0 {
		return nil
	}
	args := make([]any, 0, 2*len(hops))
	for _, h := range hops {
		args = append(args, h.OrderNo, h.Hop)
	}
	match := strings.TrimSuffix(strings.Repeat("(order_no=? AND timeout_hop=?) OR ", len(hops)), " OR ")
	_, err := db.w.ExecContext(ctx, `UPDATE order_info SET timeout_send=0 WHERE timeout_send=1 AND (`+match+`)`, args...)
	if err != nil {
		return dbErr(err, "mark %d timeout hops sent (%s hop %d first)", len(hops), hops[0].OrderNo, hops[0].Hop)
	}
	return nil
}

// ReleaseTimeoutSend makes hop's failed send anyone's to retry from now.
func (db *DB) ReleaseTimeoutSend(ctx context.Context, orderNo string, hop int, now time.Time) error {
	_, err := db.w.ExecContext(ctx, `UPDATE order_info SET timeout_resend_at=? WHERE order_no=? AND timeout_hop=? AND timeout_send=1`,
		ms(now), orderNo, hop)
	if err != nil {
		return dbErr(err, "release timeout hop %s %d", orderNo, hop)
	}
	return nil
}

// UnsentTimeouts lists pending orders whose latest hop is not known to be
// sent and may be resent at now, oldest resend time first: a range of
// idx_timeout_send, which holds almost no pending rows with a send open.
func (db *DB) UnsentTimeouts(ctx context.Context, now time.Time, limit int) ([]core.Order, error) {
	var rs []orderRow
	err := db.r.SelectContext(ctx, &rs, `SELECT `+orderCols+` FROM order_info
 WHERE timeout_send IN (1, 2) AND status=0 AND timeout_resend_at<=? ORDER BY timeout_resend_at, order_no LIMIT ?`,
		ms(now), limit)
	if err != nil {
		return nil, dbErr(err, "unsent timeouts")
	}
	return orderRows(rs), nil
}

// oneRow reports whether a conditional statement matched exactly one row.
// MySQL connections count matched rows (Open sets clientFoundRows), like SQLite.
func oneRow(res sql.Result, op string) (bool, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return false, dbErr(err, "%s: rows affected", op)
	}
	return n == 1, nil
}
