package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

var _ core.CaseStore = (*DB)(nil)

// The discrepancy case workflow's reads and writes (core.Cases decides, this
// file only stores). A case is a discrepancy row with state, owner and
// updated_at (migration 00004); its history is discrepancy_event.

// caseCols ends with the currency of the order's show, which the amount
// is in; empty when no order has the number (an unknown_order case).
const caseCols = `id, order_no, txn_id, kind, amount_cents, created_at, status, resolved_at, resolved_by, note,
 state, owner, updated_at, COALESCE((SELECT s.currency FROM order_info o JOIN show_info s ON s.id = o.show_id
 WHERE o.order_no = discrepancy.order_no), '') AS currency`

type caseRow struct {
	discrepancyRow
	State     string `db:"state"`
	Owner     string `db:"owner"`
	UpdatedAt int64  `db:"updated_at"`
	Currency  string `db:"currency"`
}

func (r caseRow) dcase() core.DiscrepancyCase {
	return core.DiscrepancyCase{Discrepancy: r.discrepancy(),
		State: core.CaseState(r.State), Owner: r.Owner, UpdatedAt: fromMS(r.UpdatedAt), Currency: r.Currency}
}

// CaseQuery filters the ops queue.
type CaseQuery struct {
	States  []core.CaseState // any of these; empty: every state
	Kind    string           // a core.Discrepancy* kind; "": any
	Owner   string           // a staff username; "": anyone
	Unowned bool             // only cases nobody has taken (Owner must be "")
	OrderNo string           // the cases of one order (idx_discrepancy_order); "": any
	Limit   int              // default 50, at most 500
	Offset  int
}

// DiscrepancyCases returns one page of the queue, oldest case first: the
// longest-waiting money is the most urgent. With States, ranges of
// idx_state_created; kind and owner filter within them (the queue of
// unresolved cases is small; the resolved ones are read a page at a time).
func (db *DB) DiscrepancyCases(ctx context.Context, q CaseQuery) ([]core.DiscrepancyCase, error) {
	limit, offset, err := page(q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	var (
		where []string
		args  []any
	)
	if len(q.States) > 0 {
		marks := make([]string, len(q.States))
		for i, s := range q.States {
			if !s.Valid() {
				return nil, core.Invalidf("unknown case state %q", s)
			}
			marks[i] = "?"
			args = append(args, string(s))
		}
		where = append(where, "state IN ("+strings.Join(marks, ", ")+")")
	}
	if q.OrderNo != "" {
		where = append(where, "order_no = ?")
		args = append(args, q.OrderNo)
	}
	if q.Kind != "" {
		where = append(where, "kind = ?")
		args = append(args, q.Kind)
	}
	switch {
	case q.Unowned && q.Owner != "":
		return nil, core.Invalidf("a case query cannot ask for owner %q and for unowned cases", q.Owner)
	case q.Unowned:
		where = append(where, "owner = ''")
	case q.Owner != "":
		where = append(where, "owner = ?")
		args = append(args, q.Owner)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var rs []caseRow
	err = db.r.SelectContext(ctx, &rs, `SELECT `+caseCols+` FROM discrepancy`+cond+
		` ORDER BY created_at, id LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	if err != nil {
		return nil, dbErr(err, "discrepancy cases")
	}
	out := make([]core.DiscrepancyCase, len(rs))
	for i, r := range rs {
		out[i] = r.dcase()
	}
	return out, nil
}

// CaseCounts returns how many cases are in each state (states without
// cases are absent). An index-only read of idx_state_created.
func (db *DB) CaseCounts(ctx context.Context) (map[core.CaseState]int, error) {
	var rs []struct {
		State string `db:"state"`
		N     int    `db:"n"`
	}
	if err := db.r.SelectContext(ctx, &rs, `SELECT state, COUNT(*) AS n FROM discrepancy GROUP BY state`); err != nil {
		return nil, dbErr(err, "case counts")
	}
	out := make(map[core.CaseState]int, len(rs))
	for _, r := range rs {
		out[core.CaseState(r.State)] = r.N
	}
	return out, nil
}

// DiscrepancyCase returns one case, or core.ErrDiscrepancyNotFound.
func (db *DB) DiscrepancyCase(ctx context.Context, id int64) (core.DiscrepancyCase, error) {
	var r caseRow
	err := db.r.GetContext(ctx, &r, `SELECT `+caseCols+` FROM discrepancy WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return core.DiscrepancyCase{}, fmt.Errorf("discrepancy %d: %w", id, core.ErrDiscrepancyNotFound)
	}
	if err != nil {
		return core.DiscrepancyCase{}, dbErr(err, "discrepancy %d", id)
	}
	return r.dcase(), nil
}

// CaseHistory returns a case's history, oldest first (idx_discrepancy).
func (db *DB) CaseHistory(ctx context.Context, id int64) ([]core.CaseEvent, error) {
	var rs []struct {
		ID            int64  `db:"id"`
		DiscrepancyID int64  `db:"discrepancy_id"`
		At            int64  `db:"at"`
		Staff         string `db:"staff"`
		Action        string `db:"action"`
		From          string `db:"from_state"`
		To            string `db:"to_state"`
		Note          string `db:"note"`
	}
	err := db.r.SelectContext(ctx, &rs, `SELECT id, discrepancy_id, at, staff, action, from_state, to_state, note
 FROM discrepancy_event WHERE discrepancy_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, dbErr(err, "history of discrepancy %d", id)
	}
	out := make([]core.CaseEvent, len(rs))
	for i, r := range rs {
		out[i] = core.CaseEvent{ID: r.ID, DiscrepancyID: r.DiscrepancyID, At: fromMS(r.At), Staff: r.Staff,
			Action: r.Action, From: core.CaseState(r.From), To: core.CaseState(r.To), Note: r.Note}
	}
	return out, nil
}

// ChangeCase applies ch only while the case is still in ch.From with owner
// ch.PrevOwner, and appends its history line and audit row, in one transaction. Reaching
// a final state also marks the discrepancy resolved (status, resolved_at,
// resolved_by); a note, when given, becomes the case's latest note.
func (db *DB) ChangeCase(ctx context.Context, ch core.CaseChange) (bool, error) {
	var changed bool
	err := db.withTx(ctx, func(x *sqlx.Tx) error {
		changed = false
		ev := ch.Event
		set := []string{"state = ?", "owner = ?", "updated_at = ?"}
		args := []any{string(ch.To), ch.Owner, ms(ev.At)}
		if ev.Note != "" {
			set = append(set, "note = ?")
			args = append(args, ev.Note)
		}
		if ch.To.Final() && !ch.From.Final() {
			set = append(set, "status = ?", "resolved_at = ?", "resolved_by = ?")
			args = append(args, core.DiscrepancyResolved, ms(ev.At), ev.Staff)
		}
		res, err := x.ExecContext(ctx, `UPDATE discrepancy SET `+strings.Join(set, ", ")+
			` WHERE id = ? AND state = ? AND owner = ?`, append(args, ch.ID, string(ch.From), ch.PrevOwner)...)
		if err != nil {
			return err
		}
		if changed, err = oneRow(res, fmt.Sprintf("change discrepancy %d", ch.ID)); err != nil || !changed {
			return err
		}
		if _, err = x.ExecContext(ctx, `INSERT INTO discrepancy_event
 (discrepancy_id, at, staff, action, from_state, to_state, note) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			ch.ID, ms(ev.At), ev.Staff, ev.Action, string(ev.From), string(ev.To), ev.Note); err != nil || ch.Audit == nil {
			return err
		}
		return addAudit(ctx, x, *ch.Audit)
	})
	if err != nil {
		return false, dbErr(err, "change discrepancy %d", ch.ID)
	}
	return changed, nil
}
