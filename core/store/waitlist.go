package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// The waiting list (core/waitlist.go, core/handoff.go).

type waitSettingRow struct {
	ShowID    int64  `db:"show_id"`
	Enabled   bool   `db:"enabled"`
	JoinWhen  string `db:"join_when"`
	OfferTTL  int64  `db:"offer_ttl_ms"`
	UpdatedAt int64  `db:"updated_at"`
}

// WaitlistSettings implements core.WaitlistStore; ok is false when the
// show never had a list.
func (db *DB) WaitlistSettings(ctx context.Context, showID int64) (core.WaitlistSettings, bool, error) {
	var r waitSettingRow
	err := db.r.GetContext(ctx, &r, `SELECT show_id, enabled, join_when, offer_ttl_ms, updated_at
 FROM waitlist_setting WHERE show_id = ?`, showID)
	if errors.Is(err, sql.ErrNoRows) {
		return core.WaitlistSettings{}, false, nil
	}
	if err != nil {
		return core.WaitlistSettings{}, false, dbErr(err, "waiting list of show %d", showID)
	}
	return core.WaitlistSettings{ShowID: r.ShowID, Enabled: r.Enabled, JoinWhen: r.JoinWhen,
		OfferTTL: time.Duration(r.OfferTTL) * time.Millisecond, UpdatedAt: fromMS(r.UpdatedAt)}, true, nil
}

// PutWaitlistSettings implements core.WaitlistStore.
func (db *DB) PutWaitlistSettings(ctx context.Context, s core.WaitlistSettings) error {
	return db.withTx(ctx, func(x *sqlx.Tx) error {
		if _, err := x.ExecContext(ctx, `DELETE FROM waitlist_setting WHERE show_id = ?`, s.ShowID); err != nil {
			return dbErr(err, "waiting list of show %d", s.ShowID)
		}
		_, err := x.ExecContext(ctx, `INSERT INTO waitlist_setting (show_id, enabled, join_when, offer_ttl_ms, updated_at)
 VALUES (?, ?, ?, ?, ?)`, s.ShowID, s.Enabled, s.JoinWhen, s.OfferTTL.Milliseconds(), ms(s.UpdatedAt))
		if err != nil {
			return dbErr(err, "waiting list of show %d", s.ShowID)
		}
		return nil
	})
}

// EnabledWaitlists implements core.WaitlistStore.
func (db *DB) EnabledWaitlists(ctx context.Context) ([]int64, error) {
	var ids []int64
	if err := db.r.SelectContext(ctx, &ids, `SELECT show_id FROM waitlist_setting WHERE enabled = 1`); err != nil {
		return nil, dbErr(err, "enabled waiting lists")
	}
	return ids, nil
}

const waitEntryCols = `id, token, show_id, user_id, seat_count, category, together, customer_name, customer_email,
 customer_phone, added_by, state, order_no, created_at, offered_at, withdrawn_at`

type waitEntryRow struct {
	ID        int64         `db:"id"`
	Token     string        `db:"token"`
	ShowID    int64         `db:"show_id"`
	UserID    sql.NullInt64 `db:"user_id"`
	Count     int           `db:"seat_count"`
	Category  string        `db:"category"`
	Together  bool          `db:"together"`
	Name      string        `db:"customer_name"`
	Email     string        `db:"customer_email"`
	Phone     string        `db:"customer_phone"`
	AddedBy   string        `db:"added_by"`
	State     string        `db:"state"`
	OrderNo   string        `db:"order_no"`
	CreatedAt int64         `db:"created_at"`
	OfferedAt int64         `db:"offered_at"`
	Withdrawn int64         `db:"withdrawn_at"`
}

func (r waitEntryRow) entry() core.WaitEntry {
	return core.WaitEntry{ID: r.ID, Token: r.Token, ShowID: r.ShowID, UserID: r.UserID.Int64, Count: r.Count,
		Category: r.Category, Together: r.Together, Customer: core.Customer{Name: r.Name, Email: r.Email, Phone: r.Phone},
		AddedBy: r.AddedBy, State: core.WaitState(r.State), OrderNo: r.OrderNo, Created: fromMS(r.CreatedAt),
		Offered: fromMS(r.OfferedAt), Withdrew: fromMS(r.Withdrawn)}
}

func waitEntries(rs []waitEntryRow) []core.WaitEntry {
	out := make([]core.WaitEntry, len(rs))
	for i, r := range rs {
		out[i] = r.entry()
	}
	return out
}

// entryUser is user_id as stored: NULL for a walk-in, so that
// UNIQUE(show_id, user_id) holds for users only.
func entryUser(id int64) sql.NullInt64 {
	return sql.NullInt64{Int64: id, Valid: id != core.BoxOfficeUserID}
}

// InsertWaitEntry implements core.WaitlistStore: a user's second join
// returns the first entry.
func (db *DB) InsertWaitEntry(ctx context.Context, e core.WaitEntry) (core.WaitEntry, bool, error) {
	_, err := db.w.ExecContext(ctx, `INSERT INTO waitlist_entry (token, show_id, user_id, seat_count, category, together,
 customer_name, customer_email, customer_phone, added_by, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.Token, e.ShowID, entryUser(e.UserID), e.Count, e.Category, e.Together, e.Customer.Name, e.Customer.Email,
		e.Customer.Phone, e.AddedBy, string(e.State), ms(e.Created))
	created := err == nil
	if err != nil && !isDuplicate(err) {
		return core.WaitEntry{}, false, dbErr(err, "add to the waiting list of show %d", e.ShowID)
	}
	var r waitEntryRow
	q := `SELECT ` + waitEntryCols + ` FROM waitlist_entry WHERE token = ?`
	args := []any{e.Token}
	if !created {
		q, args = `SELECT `+waitEntryCols+` FROM waitlist_entry WHERE show_id = ? AND user_id = ?`, []any{e.ShowID, e.UserID}
	}
	// From the writer: the row was written a moment ago.
	if err := db.w.GetContext(ctx, &r, q, args...); err != nil {
		return core.WaitEntry{}, false, dbErr(err, "waiting-list entry of show %d", e.ShowID)
	}
	return r.entry(), created, nil
}

// WaitEntry implements core.WaitlistStore.
func (db *DB) WaitEntry(ctx context.Context, token string) (core.WaitEntry, error) {
	var r waitEntryRow
	err := db.r.GetContext(ctx, &r, `SELECT `+waitEntryCols+` FROM waitlist_entry WHERE token = ?`, token)
	if errors.Is(err, sql.ErrNoRows) {
		return core.WaitEntry{}, core.ErrWaitEntryNotFound
	}
	if err != nil {
		return core.WaitEntry{}, dbErr(err, "waiting-list entry")
	}
	return r.entry(), nil
}

// UserWaitEntry implements core.WaitlistStore (uk_show_user).
func (db *DB) UserWaitEntry(ctx context.Context, showID, userID int64) (core.WaitEntry, bool, error) {
	var r waitEntryRow
	err := db.r.GetContext(ctx, &r, `SELECT `+waitEntryCols+` FROM waitlist_entry WHERE show_id = ? AND user_id = ?`, showID, userID)
	if errors.Is(err, sql.ErrNoRows) {
		return core.WaitEntry{}, false, nil
	}
	if err != nil {
		return core.WaitEntry{}, false, dbErr(err, "waiting-list entry of user %d", userID)
	}
	return r.entry(), true, nil
}

// WaitPosition implements core.WaitlistStore (idx_show_state).
func (db *DB) WaitPosition(ctx context.Context, showID, id int64) (int, error) {
	var n int
	err := db.r.GetContext(ctx, &n, `SELECT COUNT(*) FROM waitlist_entry WHERE show_id = ? AND state = ? AND id <= ?`,
		showID, string(core.WaitWaiting), id)
	if err != nil {
		return 0, dbErr(err, "waiting-list position")
	}
	return n, nil
}

// WaitEntries implements core.WaitlistStore.
func (db *DB) WaitEntries(ctx context.Context, showID int64, limit int) ([]core.WaitEntry, error) {
	var rs []waitEntryRow
	if err := db.r.SelectContext(ctx, &rs, `SELECT `+waitEntryCols+` FROM waitlist_entry WHERE show_id = ? ORDER BY id LIMIT ?`,
		showID, limit); err != nil {
		return nil, dbErr(err, "waiting list of show %d", showID)
	}
	return waitEntries(rs), nil
}

// WithdrawWaitEntry implements core.WaitlistStore.
func (db *DB) WithdrawWaitEntry(ctx context.Context, token string, at time.Time) (core.WaitEntry, bool, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE waitlist_entry SET state = ?, withdrawn_at = ? WHERE token = ? AND state IN (?, ?)`,
		string(core.WaitWithdrawn), ms(at), token, string(core.WaitWaiting), string(core.WaitOffered))
	if err != nil {
		return core.WaitEntry{}, false, dbErr(err, "withdraw a waiting-list entry")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return core.WaitEntry{}, false, dbErr(err, "withdraw a waiting-list entry")
	}
	var r waitEntryRow
	err = db.w.GetContext(ctx, &r, `SELECT `+waitEntryCols+` FROM waitlist_entry WHERE token = ?`, token)
	if errors.Is(err, sql.ErrNoRows) {
		return core.WaitEntry{}, false, core.ErrWaitEntryNotFound
	}
	if err != nil {
		return core.WaitEntry{}, false, dbErr(err, "waiting-list entry")
	}
	return r.entry(), n == 1, nil
}

// WaitingEntries implements core.WaitlistTx. The show's list row is locked
// first: hand-offs of one show take turns on that one record lock, so two
// never offer one entry twice, and only one at a time holds the entries'
// next-key locks. Without it two hand-offs each held a range of
// idx_show_state and waited for the other's, moving an entry to offered
// (an insert into that range): InnoDB deadlocks, retried batches and
// timeouts delivered again seconds later.
func (t *tx) WaitingEntries(ctx context.Context, showID int64, limit int) (time.Duration, []core.WaitEntry, error) {
	var ttl int64
	err := t.x.GetContext(ctx, &ttl, `SELECT offer_ttl_ms FROM waitlist_setting WHERE show_id = ? AND enabled = 1`+t.d.forUpdate(), showID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, dbErr(err, "waiting list of show %d", showID)
	}
	var rs []waitEntryRow
	if err := t.x.SelectContext(ctx, &rs, `SELECT `+waitEntryCols+` FROM waitlist_entry
 WHERE show_id = ? AND state = ? ORDER BY id LIMIT ?`+t.d.forUpdate(), showID, string(core.WaitWaiting), limit); err != nil {
		return 0, nil, dbErr(err, "waiting entries of show %d", showID)
	}
	return time.Duration(ttl) * time.Millisecond, waitEntries(rs), nil
}

// OfferWaitEntries implements core.WaitlistTx: one UPDATE whose CASEs give
// each entry its order and time.
func (t *tx) OfferWaitEntries(ctx context.Context, offers map[int64]core.EntryOffer) error {
	if len(offers) == 0 {
		return nil
	}
	ids := slices.Sorted(maps.Keys(offers))
	var nos, ats strings.Builder
	args := make([]any, 0, 4*len(ids)+2)
	for _, id := range ids {
		nos.WriteString(" WHEN ? THEN ?")
		args = append(args, id, offers[id].OrderNo)
	}
	for _, id := range ids {
		ats.WriteString(" WHEN ? THEN ?")
		args = append(args, id, ms(offers[id].At))
	}
	args = append(args, string(core.WaitOffered), string(core.WaitWaiting))
	for _, id := range ids {
		args = append(args, id)
	}
	res, err := t.x.ExecContext(ctx, `UPDATE waitlist_entry SET order_no = CASE id`+nos.String()+` END,
 offered_at = CASE id`+ats.String()+` END, state = ? WHERE state = ? AND id IN `+placeholders(1, len(ids)), args...)
	if err != nil {
		return dbErr(err, "offer to %d waiting-list entries", len(ids))
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(ids)) {
		// The entries were read locked and waiting in this transaction.
		return fmt.Errorf("store: offer to %d waiting-list entries: %d rows (%v)", len(ids), n, err)
	}
	return nil
}

// EntriesOfOffers implements core.WaitlistTx (idx_order_no).
func (t *tx) EntriesOfOffers(ctx context.Context, orderNos []string) (map[string]string, error) {
	q, args, err := sqlx.In(`SELECT order_no, token FROM waitlist_entry WHERE order_no IN (?)`, orderNos)
	if err != nil {
		return nil, fmt.Errorf("store: entries of offers: %w", err)
	}
	var rs []struct {
		OrderNo string `db:"order_no"`
		Token   string `db:"token"`
	}
	if err := t.x.SelectContext(ctx, &rs, t.x.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "entries of %d offers", len(orderNos))
	}
	out := make(map[string]string, len(rs))
	for _, r := range rs {
		out[r.OrderNo] = r.Token
	}
	return out, nil
}

// BlockedSeats implements core.WaitlistTx.
func (t *tx) BlockedSeats(ctx context.Context, showID int64, seatIDs []string) (map[string]bool, error) {
	out := make(map[string]bool)
	if len(seatIDs) == 0 {
		return out, nil
	}
	q, args, err := sqlx.In(`SELECT seat_id FROM seat_block WHERE show_id = ? AND seat_id IN (?)`, showID, seatIDs)
	if err != nil {
		return nil, fmt.Errorf("store: blocked seats: %w", err)
	}
	var ids []string
	if err := t.x.SelectContext(ctx, &ids, t.x.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "blocked seats of show %d", showID)
	}
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// UnblockSeats implements core.WaitlistTx.
func (t *tx) UnblockSeats(ctx context.Context, showID int64, seatIDs []string) ([]string, error) {
	if len(seatIDs) == 0 {
		return nil, nil
	}
	q, args, err := sqlx.In(`DELETE FROM seat_block WHERE show_id = ? AND seat_id IN (?)`, showID, seatIDs)
	if err != nil {
		return nil, fmt.Errorf("store: unblock: %w", err)
	}
	if _, err := t.x.ExecContext(ctx, t.x.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "unblock seats of show %d", showID)
	}
	if q, args, err = sqlx.In(`SELECT seat_id FROM order_seat WHERE show_id = ? AND seat_id IN (?)`, showID, seatIDs); err != nil {
		return nil, fmt.Errorf("store: unblock: %w", err)
	}
	var held []string
	if err := t.x.SelectContext(ctx, &held, t.x.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "unblocked seats of show %d", showID)
	}
	return slices.DeleteFunc(slices.Clone(seatIDs), func(id string) bool { return slices.Contains(held, id) }), nil
}

// OfferRow is an offered entry whose offer may still need its seats: its
// order pending, or missing (reconcile's waitlist_offer check).
type OfferRow struct {
	Token      string
	EntryUser  int64 // core.BoxOfficeUserID for a walk-in
	OrderNo    string
	OrderFound bool
	OrderUser  int64
	Source     string
	CreatedAt  time.Time
	SeatIDs    []string
}

// LiveOffers lists the show's offered entries whose order is pending or
// missing (idx_show_state; each order by uk_order_no).
func (db *DB) LiveOffers(ctx context.Context, showID int64) ([]OfferRow, error) {
	var rs []struct {
		Token     string        `db:"token"`
		EntryUser sql.NullInt64 `db:"user_id"`
		OrderNo   string        `db:"order_no"`
		Found     bool          `db:"found"`
		OrderUser int64         `db:"order_user"`
		Source    string        `db:"source"`
		CreatedAt int64         `db:"created_at"`
		SeatIDs   string        `db:"seat_ids"`
	}
	err := db.r.SelectContext(ctx, &rs, `SELECT e.token, e.user_id, e.order_no, o.order_no IS NOT NULL AS found,
 COALESCE(o.user_id, 0) AS order_user, COALESCE(o.source, '') AS source, COALESCE(o.created_at, 0) AS created_at,
 COALESCE(o.seat_ids, '') AS seat_ids
 FROM waitlist_entry e LEFT JOIN order_info o ON o.order_no = e.order_no
 WHERE e.show_id = ? AND e.state = ? AND (o.order_no IS NULL OR o.status = ?) ORDER BY e.id`,
		showID, string(core.WaitOffered), int(core.StatusPending))
	if err != nil {
		return nil, dbErr(err, "offers of show %d", showID)
	}
	out := make([]OfferRow, len(rs))
	for i, r := range rs {
		out[i] = OfferRow{Token: r.Token, EntryUser: r.EntryUser.Int64, OrderNo: r.OrderNo, OrderFound: r.Found,
			OrderUser: r.OrderUser, Source: r.Source, CreatedAt: fromMS(r.CreatedAt)}
		if r.SeatIDs != "" {
			out[i].SeatIDs = strings.Split(r.SeatIDs, ",")
		}
	}
	return out, nil
}

// RequeueWaitEntry puts an entry whose offer's order is missing back in
// line at its old place; false when it changed meanwhile.
func (db *DB) RequeueWaitEntry(ctx context.Context, token, orderNo string) (bool, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE waitlist_entry SET state = ?, order_no = '', offered_at = 0
 WHERE token = ? AND state = ? AND order_no = ?`, string(core.WaitWaiting), token, string(core.WaitOffered), orderNo)
	if err != nil {
		return false, dbErr(err, "requeue a waiting-list entry")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, dbErr(err, "requeue a waiting-list entry")
	}
	return n == 1, nil
}

// OfferSources returns, by offer, the order whose ending handed the seats
// of each of offers (waiting-list offers' order numbers) on, as the
// offer's placed event names it: the zero order when an unblock did. An
// offer whose placed event (or source order) retention pruned is absent. Two reads whatever
// the number of offers, for the console's list of a show's entries.
func (db *DB) OfferSources(ctx context.Context, offers []string) (map[string]core.Order, error) {
	out := make(map[string]core.Order, len(offers))
	if len(offers) == 0 {
		return out, nil
	}
	q, args, err := sqlx.In(`SELECT order_no, detail FROM order_event WHERE kind = ? AND order_no IN (?)`, core.EventPlaced, offers)
	if err != nil {
		return nil, fmt.Errorf("store: offer sources: %w", err)
	}
	var placed []struct {
		OrderNo string `db:"order_no"`
		Detail  string `db:"detail"`
	}
	if err := db.r.SelectContext(ctx, &placed, db.r.Rebind(q), args...); err != nil {
		return nil, dbErr(err, "offer sources")
	}
	from := make(map[string]string, len(placed))
	var froms []string
	for _, p := range placed {
		var d struct {
			From string `json:"from_order"`
		}
		if err := json.Unmarshal([]byte(p.Detail), &d); err != nil {
			return nil, fmt.Errorf("store: placed event of %s: decode detail: %w", p.OrderNo, err)
		}
		from[p.OrderNo] = d.From
		if d.From != "" {
			froms = append(froms, d.From)
		}
	}
	orders := make(map[string]core.Order, len(froms))
	if len(froms) > 0 {
		if q, args, err = sqlx.In(`SELECT `+orderCols+` FROM order_info WHERE order_no IN (?)`, froms); err != nil {
			return nil, fmt.Errorf("store: offer sources: %w", err)
		}
		var rs []orderRow
		if err := db.r.SelectContext(ctx, &rs, db.r.Rebind(q), args...); err != nil {
			return nil, dbErr(err, "offer sources")
		}
		for _, r := range rs {
			orders[r.OrderNo] = r.order()
		}
	}
	for offer, f := range from {
		if o, ok := orders[f]; ok || f == "" {
			out[offer] = o
		}
	}
	return out, nil
}
