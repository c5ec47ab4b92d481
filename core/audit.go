package core

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"time"

	"seatflow/core/access"
)

// StaffAction is who asked for a staff change and from where. A change made
// with one writes its audit row (AuditEntry) inside its own transaction, so
// the change and its line in the audit log commit or roll back together.
// Nil means nobody to audit (a timeout, a customer, an API call that moves
// no money).
type StaffAction struct {
	Staff string // staff:<name>, cli, or api:<key prefix> for an API key
	Role  access.Role
	IP    string
	// Key is the API key acted through, named in the audit row's detail
	// (api_key: its name, id and minter); nil for staff.
	Key *access.APIKey
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
	if s.Key != nil {
		detail = maps.Clone(detail)
		if detail == nil {
			detail = map[string]any{}
		}
		detail["api_key"] = fmt.Sprintf("%s (#%d, minted by %s)", s.Key.Name, s.Key.ID, cmp.Or(s.Key.CreatedBy, "configuration"))
	}
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

// AuditEntry is one line of the audit log: who did what, to what, when and
// from which address.
type AuditEntry struct {
	ID     int64
	At     time.Time
	Staff  string
	Role   access.Role
	Action string
	Target string
	Detail map[string]any
	IP     string
}

// Audit actions.
const (
	AuditLogin              = "login"
	AuditLoginFailed        = "login_failed"
	AuditLogout             = "logout"
	AuditForceCancel        = "force_cancel"
	AuditResolveDiscrepancy = "resolve_discrepancy"
	AuditReconcileRun       = "reconcile_run"
	AuditReconcileDryRun    = "reconcile_dry_run"
	AuditReconcileApply     = "reconcile_apply" // a repairing run applying a dry run
	AuditStaffAdd           = "staff_add"
	AuditStaffDisable       = "staff_disable"
	AuditStaffEnable        = "staff_enable"
	AuditShowCreate         = "show_create"
	AuditShowPlan           = "show_plan" // a show's plan replaced (categories and seats)
	AuditSeatsBlock         = "seats_block"
	AuditSeatsUnblock       = "seats_unblock"
	AuditBestRules          = "best_rules"     // a show's best-available rules changed
	AuditShowEdit           = "show_edit"      // a show's name, venue or times changed
	AuditShowReprice        = "show_reprice"   // a show's category prices changed
	AuditShowCancel         = "show_cancel"    // a show cancelled from the console
	AuditShowPublish        = "show_publish"   // a draft show put on sale
	AuditArchiveDelete      = "archive_delete" // archived audit rows deleted by `seatflow archive --delete`
)

// Waiting-list audit actions (the console's waiting-list page).
const (
	AuditWaitlistSettings = "waitlist_settings" // a show's waiting list opened, closed or changed
	AuditWaitlistAdd      = "waitlist_add"      // a walk-in or phone customer put on a list by a clerk
	AuditWaitlistWithdraw = "waitlist_withdraw" // an entry taken off a list by staff
)
