package core

import (
	"context"
	"time"
)

// StaffAction is who asked for a staff change and from where. A change made
// with one writes its audit row (AuditEntry) inside its own transaction, so
// the change and its line in the audit log commit or roll back together.
// Nil means nobody to audit (a timeout, a customer, the API).
type StaffAction struct {
	Staff string
	Role  Role
	IP    string
}

// Outcomes of a force-cancel and an extension in their audit rows' detail
// (an extension that was refused carries the refusal's error code).
const (
	AuditOutcomeCancelled        = "cancelled"
	AuditOutcomeAlreadyPaid      = "already_paid"
	AuditOutcomeAlreadyCancelled = "already_cancelled"
	AuditOutcomeExtended         = "extended"
)

// Entry is s's audit row for action on target.
func (s *StaffAction) Entry(at time.Time, action, target string, detail map[string]any) AuditEntry {
	return AuditEntry{At: at, Staff: s.Staff, Role: s.Role, IP: s.IP, Action: action, Target: target, Detail: detail}
}

// record writes s's audit row in tx; nothing when s is nil.
func (s *StaffAction) record(ctx context.Context, tx Tx, at time.Time, action, target string, detail map[string]any) error {
	if s == nil {
		return nil
	}
	return tx.AddAudit(ctx, s.Entry(at, action, target, detail))
}

// audit records a force-cancel in its transaction: order is the locked row,
// cancelled by this call (won) or as the winner left it.
func (r CancelRequest) audit(ctx context.Context, tx Tx, at time.Time, order Order, won bool) error {
	if r.Audit == nil { // a timeout, customer or reconcile cancel
		return nil
	}
	outcome := AuditOutcomeCancelled
	switch {
	case won:
	case order.Status == StatusPaid:
		outcome = AuditOutcomeAlreadyPaid
	default:
		outcome = AuditOutcomeAlreadyCancelled
	}
	return r.Audit.record(ctx, tx, at, AuditForceCancel, "order:"+r.OrderNo,
		map[string]any{"reason": r.Note, "outcome": outcome, "seat_ids": order.SeatIDs})
}
