package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// orderCols is the column list every order read selects into orderRow.
const orderCols = `order_no, show_id, user_id, status, amount_cents, seat_ids, created_at, expire_at,
 closed_at, cancel_reason, cancel_actor, paid_txn_id, timeout_hop, timeout_due_at`

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
}

func (r orderRow) order() core.Order {
	o := core.Order{
		OrderNo:      r.OrderNo,
		ShowID:       r.ShowID,
		UserID:       r.UserID,
		Status:       core.OrderStatus(r.Status),
		AmountCents:  r.AmountCents,
		CreatedAt:    fromMS(r.CreatedAt),
		ExpireAt:     fromMS(r.ExpireAt),
		ClosedAt:     fromMS(r.ClosedAt),
		CancelReason: r.CancelReason,
		CancelActor:  r.CancelActor,
		PaidTxnID:    r.PaidTxnID,
		TimeoutHop:   r.TimeoutHop,
		TimeoutDueAt: fromMS(r.TimeoutDueAt),
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

// Order returns the order with SeatIDs: the seats it was placed with, in
// seat order. They come from order_info.seat_ids, so a cancelled order still
// lists its seats although its order_seat rows are gone; whether a seat is
// taken is only ever decided by order_seat (TakenSeats).
func (db *DB) Order(ctx context.Context, orderNo string) (core.Order, error) {
	return getOrder(ctx, db.r, orderNo, "")
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

// InsertOrder inserts the order_info row (not its seats: InsertOrderSeats).
// Status, hop and close fields are written as given.
func (t *tx) InsertOrder(ctx context.Context, o core.Order) error {
	ids := sortedSeatIDs(o.SeatIDs)
	_, err := t.x.ExecContext(ctx, `INSERT INTO order_info
 (order_no, show_id, user_id, status, amount_cents, seat_count, seat_ids, created_at, expire_at,
  closed_at, cancel_reason, cancel_actor, paid_txn_id, timeout_hop, timeout_due_at)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.OrderNo, o.ShowID, o.UserID, int(o.Status), o.AmountCents, len(ids), strings.Join(ids, ","),
		ms(o.CreatedAt), ms(o.ExpireAt), ms(o.ClosedAt), o.CancelReason, o.CancelActor, o.PaidTxnID,
		o.TimeoutHop, ms(o.TimeoutDueAt))
	if err != nil {
		return dbErr(err, "insert order %s", o.OrderNo)
	}
	return nil
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
// still at from. Call it outside any InTx callback (on SQLite it needs the
// writer connection a transaction would be holding).
func (db *DB) ClaimTimeoutHop(ctx context.Context, orderNo string, from, to int, dueAt time.Time) (bool, error) {
	res, err := db.w.ExecContext(ctx,
		`UPDATE order_info SET timeout_hop=?, timeout_due_at=? WHERE order_no=? AND status=0 AND timeout_hop=?`,
		to, ms(dueAt), orderNo, from)
	if err != nil {
		return false, dbErr(err, "claim timeout hop %s %d->%d", orderNo, from, to)
	}
	return oneRow(res, "claim timeout hop "+orderNo)
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
