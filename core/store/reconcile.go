package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// The reads and writes of reconcile's checks (core/reconcile). Every query
// is an index range read of a bounded page (keyset pagination: the caller
// passes the last key it saw), so a check's cost follows the anomalies it
// looks for and the live seats of the shows on sale, never the order history.
// Each comment names the index; TestReconcileQueryPlans checks the plans.

// ExpiredRef names one order still pending after its expiry. (ExpireAt, ID)
// is the keyset cursor of ExpiredPendingAfter: pass the last one seen.
type ExpiredRef struct {
	ID       int64
	OrderNo  string
	ShowID   int64
	UserID   int64
	ExpireAt time.Time
}

const expiredPendingAfterSQL = `SELECT id, order_no, show_id, user_id, expire_at FROM order_info
 WHERE status = 0 AND expire_at >= ? AND expire_at <= ? AND (expire_at > ? OR id > ?)
 ORDER BY expire_at, id LIMIT ?`

// ExpiredPendingAfter returns up to limit orders pending with expire_at <=
// now that come after the cursor in (expire_at, id) order. Range on
// idx_status_expire (status, expire_at), whose entries end with the primary
// key, so the ORDER BY needs no sort; the cursor's expire_at bounds the range
// from below, so a page never rereads earlier ones. The zero cursor starts
// at the oldest.
func (db *DB) ExpiredPendingAfter(ctx context.Context, now time.Time, after ExpiredRef, limit int) ([]ExpiredRef, error) {
	var rs []struct {
		ID       int64  `db:"id"`
		OrderNo  string `db:"order_no"`
		ShowID   int64  `db:"show_id"`
		UserID   int64  `db:"user_id"`
		ExpireAt int64  `db:"expire_at"`
	}
	cur := after.ExpireAt.UnixMilli()
	if after.ExpireAt.IsZero() {
		cur = -1 // ms() would say 0, which a real expire_at of 0 would equal
	}
	err := db.r.SelectContext(ctx, &rs, expiredPendingAfterSQL, cur, ms(now), cur, after.ID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: expired pending orders: %w", err)
	}
	out := make([]ExpiredRef, len(rs))
	for i, r := range rs {
		out[i] = ExpiredRef{ID: r.ID, OrderNo: r.OrderNo, ShowID: r.ShowID, UserID: r.UserID, ExpireAt: fromMS(r.ExpireAt)}
	}
	return out, nil
}

// showsOnSaleSQL: two ranges of show_info.idx_starts.
const showsOnSaleSQL = `SELECT id FROM show_info WHERE starts_at = 0 OR starts_at >= ?`

// pendingShowsSQL: the shows of the pending orders, one row per order (few:
// the holds of the last minutes), a range of an index on status.
const pendingShowsSQL = `SELECT show_id FROM order_info WHERE status = ?`

// ShowsOnSale returns the ids of the shows that start at or after since, of
// those with no start time and of those with a pending order: the shows
// whose seat state retention keeps (ShowsEndedBefore returns the others),
// so the only ones whose seat state reconcile compares; in id order.
func (db *DB) ShowsOnSale(ctx context.Context, since time.Time) ([]int64, error) {
	var ids, pendingShows []int64
	if err := db.r.SelectContext(ctx, &ids, showsOnSaleSQL, ms(since)); err != nil {
		return nil, fmt.Errorf("store: shows on sale: %w", err)
	}
	if err := db.r.SelectContext(ctx, &pendingShows, pendingShowsSQL, int(core.StatusPending)); err != nil {
		return nil, fmt.Errorf("store: shows with pending orders: %w", err)
	}
	ids = append(ids, pendingShows...)
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// SeatRow is one order_seat row with the state of the order it names, as
// reconcile compares it with the seat store.
type SeatRow struct {
	SeatID  string
	OrderNo string
	UserID  int64
	// OrderFound is false when no order_info row has OrderNo; the fields
	// below are then zero.
	OrderFound bool
	Status     core.OrderStatus
	CreatedAt  time.Time // the order's
	ClosedAt   time.Time // zero while pending
}

// Live reports whether the row's order still owns the seat: pending or paid.
func (r SeatRow) Live() bool {
	return r.OrderFound && (r.Status == core.StatusPending || r.Status == core.StatusPaid)
}

const showSeatRowsSQL = `SELECT s.seat_id, s.order_no, s.user_id,
 o.status, o.created_at AS order_created_at, o.closed_at
 FROM order_seat s LEFT JOIN order_info o ON o.order_no = s.order_no
 WHERE s.show_id = ? AND s.seat_id > ? ORDER BY s.seat_id LIMIT ?`

// ShowSeatRows returns up to limit of the show's order_seat rows with seat_id
// after afterSeat ("" starts at the first), in seat_id order, each with its
// order's state. Range on order_seat's primary key (show_id, seat_id), one
// uk_order_no lookup per row.
func (db *DB) ShowSeatRows(ctx context.Context, showID int64, afterSeat string, limit int) ([]SeatRow, error) {
	var rs []struct {
		SeatID    string        `db:"seat_id"`
		OrderNo   string        `db:"order_no"`
		UserID    int64         `db:"user_id"`
		Status    sql.NullInt64 `db:"status"`
		CreatedAt sql.NullInt64 `db:"order_created_at"`
		ClosedAt  sql.NullInt64 `db:"closed_at"`
	}
	if err := db.r.SelectContext(ctx, &rs, showSeatRowsSQL, showID, afterSeat, limit); err != nil {
		return nil, fmt.Errorf("store: seat rows of show %d: %w", showID, err)
	}
	out := make([]SeatRow, len(rs))
	for i, r := range rs {
		out[i] = SeatRow{SeatID: r.SeatID, OrderNo: r.OrderNo, UserID: r.UserID, OrderFound: r.Status.Valid,
			Status: core.OrderStatus(r.Status.Int64), CreatedAt: fromMS(r.CreatedAt.Int64), ClosedAt: fromMS(r.ClosedAt.Int64)}
	}
	return out, nil
}

// OrderState is the part of an order reconcile needs to judge a seat.
type OrderState struct {
	OrderNo   string
	ShowID    int64
	UserID    int64
	Status    core.OrderStatus
	CreatedAt time.Time
	ClosedAt  time.Time
}

const orderStatesSQL = `SELECT order_no, show_id, user_id, status, created_at, closed_at FROM order_info WHERE order_no IN (?)`

// OrderStates returns the state of each of orderNos that exists, by order
// no. One uk_order_no lookup each; callers pass at most a page of them.
func (db *DB) OrderStates(ctx context.Context, orderNos []string) (map[string]OrderState, error) {
	out := make(map[string]OrderState, len(orderNos))
	if len(orderNos) == 0 {
		return out, nil
	}
	q, args, err := sqlx.In(orderStatesSQL, orderNos)
	if err != nil {
		return nil, fmt.Errorf("store: order states: %w", err)
	}
	var rs []struct {
		OrderNo   string `db:"order_no"`
		ShowID    int64  `db:"show_id"`
		UserID    int64  `db:"user_id"`
		Status    int    `db:"status"`
		CreatedAt int64  `db:"created_at"`
		ClosedAt  int64  `db:"closed_at"`
	}
	if err := db.r.SelectContext(ctx, &rs, db.r.Rebind(q), args...); err != nil {
		return nil, fmt.Errorf("store: order states: %w", err)
	}
	for _, r := range rs {
		out[r.OrderNo] = OrderState{OrderNo: r.OrderNo, ShowID: r.ShowID, UserID: r.UserID,
			Status: core.OrderStatus(r.Status), CreatedAt: fromMS(r.CreatedAt), ClosedAt: fromMS(r.ClosedAt)}
	}
	return out, nil
}

const openDiscrepancyCountSQL = `SELECT COUNT(*) FROM discrepancy WHERE status = ?`

// OpenDiscrepancyCount counts unresolved discrepancies. Range on
// idx_status_created (status = 'open'), so it costs the open ones only.
func (db *DB) OpenDiscrepancyCount(ctx context.Context) (int, error) {
	var n int
	if err := db.r.GetContext(ctx, &n, openDiscrepancyCountSQL, DiscrepancyOpen); err != nil {
		return 0, fmt.Errorf("store: count open discrepancies: %w", err)
	}
	return n, nil
}

// PaidOrderRef is a paid order and the seats it was placed with.
type PaidOrderRef struct {
	ID      int64
	OrderNo string
	UserID  int64
	SeatIDs []string
}

const paidOrdersAfterSQL = `SELECT ` + orderCols + `, id FROM order_info
 WHERE show_id = ? AND status = 1 AND id > ? ORDER BY id LIMIT ?`

// PaidOrdersAfter returns up to limit paid orders of the show with id above
// afterID, in id order: the invariant checker's "no seat sold twice". Range
// on idx_show_status (show_id, status), whose entries end with the primary key.
func (db *DB) PaidOrdersAfter(ctx context.Context, showID, afterID int64, limit int) ([]PaidOrderRef, error) {
	var rs []struct {
		orderRow
		ID int64 `db:"id"`
	}
	if err := db.r.SelectContext(ctx, &rs, paidOrdersAfterSQL, showID, afterID, limit); err != nil {
		return nil, fmt.Errorf("store: paid orders of show %d: %w", showID, err)
	}
	out := make([]PaidOrderRef, len(rs))
	for i, r := range rs {
		o := r.order()
		out[i] = PaidOrderRef{ID: r.ID, OrderNo: o.OrderNo, UserID: o.UserID, SeatIDs: o.SeatIDs}
	}
	return out, nil
}
