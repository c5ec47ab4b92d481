package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// AddAudit appends one line to the audit log.
func (db *DB) AddAudit(ctx context.Context, a core.AuditEntry) error {
	return addAudit(ctx, db.w, a)
}

// AddAudit appends one line to the audit log inside the transaction.
func (t *tx) AddAudit(ctx context.Context, a core.AuditEntry) error {
	return addAudit(ctx, t.x, a)
}

func addAudit(ctx context.Context, x sqlx.ExecerContext, a core.AuditEntry) error {
	detail, err := json.Marshal(orEmpty(a.Detail))
	if err != nil {
		return fmt.Errorf("store: audit %s: detail: %w", a.Action, err)
	}
	_, err = x.ExecContext(ctx,
		`INSERT INTO audit_log (at, staff, role, action, target, detail, ip) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		ms(a.At), a.Staff, string(a.Role), a.Action, a.Target, string(detail), a.IP)
	if err != nil {
		return dbErr(err, "audit %s by %s", a.Action, a.Staff)
	}
	return nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

type auditRow struct {
	ID     int64  `db:"id"`
	At     int64  `db:"at"`
	Staff  string `db:"staff"`
	Role   string `db:"role"`
	Action string `db:"action"`
	Target string `db:"target"`
	Detail string `db:"detail"`
	IP     string `db:"ip"`
}

// AuditLog returns up to limit entries, newest first, older than the entry
// with id before (0: from the newest). Paging by id rather than OFFSET keeps
// every page one index range, however long the log grows.
func (db *DB) AuditLog(ctx context.Context, before int64, limit int) ([]core.AuditEntry, error) {
	q := `SELECT id, at, staff, role, action, target, detail, ip FROM audit_log`
	args := []any{}
	if before > 0 {
		q += ` WHERE id < ?`
		args = append(args, before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	var rs []auditRow
	if err := db.r.SelectContext(ctx, &rs, q, args...); err != nil {
		return nil, dbErr(err, "audit log")
	}
	out := make([]core.AuditEntry, len(rs))
	for i, r := range rs {
		e := core.AuditEntry{ID: r.ID, At: fromMS(r.At), Staff: r.Staff, Role: core.Role(r.Role),
			Action: r.Action, Target: r.Target, IP: r.IP}
		if err := json.Unmarshal([]byte(r.Detail), &e.Detail); err != nil {
			return nil, fmt.Errorf("store: audit log entry %d: detail: %w", r.ID, err)
		}
		out[i] = e
	}
	return out, nil
}
