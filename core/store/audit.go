package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/access"
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

// AuditQuery selects audit entries: by who, what and on what (each ""
// for any), older than the entry with id Before (0: from the newest), at
// most Limit of them.
type AuditQuery struct {
	Staff, Action, Target string
	Before                int64
	Limit                 int
}

// AuditLog returns the entries q selects, newest first. Paging by id rather
// than OFFSET keeps every page one index range (idx_audit_*), however long
// the log grows.
func (db *DB) AuditLog(ctx context.Context, q AuditQuery) ([]core.AuditEntry, error) {
	var where []string
	var args []any
	for _, f := range []struct{ col, v string }{{"staff", q.Staff}, {"action", q.Action}, {"target", q.Target}} {
		if f.v != "" {
			where = append(where, f.col+" = ?")
			args = append(args, f.v)
		}
	}
	if q.Before > 0 {
		where = append(where, "id < ?")
		args = append(args, q.Before)
	}
	sql := `SELECT id, at, staff, role, action, target, detail, ip FROM audit_log`
	if len(where) > 0 {
		sql += ` WHERE ` + strings.Join(where, " AND ")
	}
	sql += ` ORDER BY id DESC LIMIT ?`
	args = append(args, q.Limit)
	var rs []auditRow
	if err := db.r.SelectContext(ctx, &rs, sql, args...); err != nil {
		return nil, dbErr(err, "audit log")
	}
	out := make([]core.AuditEntry, len(rs))
	for i, r := range rs {
		e := core.AuditEntry{ID: r.ID, At: fromMS(r.At), Staff: r.Staff, Role: access.Role(r.Role),
			Action: r.Action, Target: r.Target, IP: r.IP}
		if err := json.Unmarshal([]byte(r.Detail), &e.Detail); err != nil {
			return nil, fmt.Errorf("store: audit log entry %d: detail: %w", r.ID, err)
		}
		out[i] = e
	}
	return out, nil
}
