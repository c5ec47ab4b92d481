package access

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"seatflow/core/fault"
)

// Role is a console staff member's role. Each role can do everything the
// one before it can: box_office < ops < admin; manager is box_office plus
// setting up shows (which admin may do too), without ops' or staff powers.
// door is gate staff: check-in and nothing else, so a phone left at a gate
// opens no order, no customer and no money.
type Role string

const (
	RoleBoxOffice Role = "box_office"
	RoleOps       Role = "ops"
	RoleAdmin     Role = "admin"
	RoleManager   Role = "manager"
	RoleDoor      Role = "door"
)

// AllRoles lists every role, least privileged first.
func AllRoles() []Role { return []Role{RoleDoor, RoleBoxOffice, RoleManager, RoleOps, RoleAdmin} }

// Console actions a role may be allowed; the console checks one of them on
// every route.
const (
	ActView          = "view"           // dashboard, holds, orders, seat maps
	ActForceCancel   = "force_cancel"   // cancel a pending order as staff
	ActExtendHold    = "extend_hold"    // push a pending order's expiry later
	ActDiscrepancies = "discrepancies"  // see and resolve payment discrepancies
	ActReconcile     = "reconcile"      // see reconcile runs, start one
	ActAudit         = "audit"          // read the audit log
	ActStaff         = "staff"          // manage staff accounts
	ActShows         = "shows"          // create shows, change plans, block seats, cancel shows
	ActRefund        = "refund"         // refund a paid order (a request above the approval threshold)
	ActApproveRefund = "approve_refund" // refund at any amount; approve or reject requests
	ActCounterSale   = "counter_sale"   // hold seats at the counter (blocked ones too), take cash or card
	ActCheckin       = "checkin"        // scan tickets at the door, undo a scan
	ActOwnAccount    = "own_account"    // sign out; one's own password, second factor, time zone and sessions
)

// Can is the permission table. Unknown roles and actions may do nothing.
func (r Role) Can(action string) bool {
	switch action {
	case ActCheckin, ActOwnAccount:
		return r.Valid()
	case ActView, ActForceCancel, ActExtendHold, ActRefund, ActCounterSale:
		return r.Valid() && r != RoleDoor
	case ActDiscrepancies, ActReconcile, ActAudit, ActApproveRefund:
		return r == RoleOps || r == RoleAdmin
	case ActShows:
		return r == RoleManager || r == RoleAdmin
	case ActStaff:
		return r == RoleAdmin
	}
	return false
}

// Valid reports whether r is a known role.
func (r Role) Valid() bool {
	return r == RoleBoxOffice || r == RoleOps || r == RoleAdmin || r == RoleManager || r == RoleDoor
}

// ParseRole checks a role name from a form or the command line.
func ParseRole(s string) (Role, error) {
	if r := Role(s); r.Valid() {
		return r, nil
	}
	return "", &fault.Error{Kind: fault.KindInvalid, Code: ErrBadRole.Code,
		Message: fmt.Sprintf("role %q is not one of door, box_office, manager, ops, admin", s)}
}

// Staff is a console account. The password hash never leaves the store
// except through the login check.
type Staff struct {
	ID        int64
	Username  string
	Role      Role
	CreatedAt time.Time
	Disabled  bool
	// TimeZone is the IANA zone the console shows this account's times
	// in (timezone.go); "" for the server's zone.
	TimeZone string
	// CreatedBy is who added the account: staff:<username>, cli, or ""
	// for an account older than the record.
	CreatedBy string
}

var usernamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{1,63}$`)

// LoginName is the account name a typed one stands for: trimmed and
// ASCII lower-cased, and false unless that is a valid username. A name
// with any other letter ('ádmin', 'ADMİN') stands for none, though
// MariaDB's collation would find 'admin' under it and a limit keyed on the
// typed text would count each spelling apart.
func LoginName(typed string) (string, bool) {
	name := strings.TrimSpace(typed)
	for i := range len(name) {
		if name[i] >= utf8.RuneSelf {
			return name, false
		}
	}
	name = strings.ToLower(name)
	return name, usernamePattern.MatchString(name)
}

// ValidUsername checks a new account's name: lower-case letters, digits and
// . _ -, 2 to 64 characters, so names read the same in the audit log and in
// "staff:<name>" cancel actors.
func ValidUsername(name string) error {
	if !usernamePattern.MatchString(name) {
		return &fault.Error{Kind: fault.KindInvalid, Code: ErrBadUsername.Code,
			Message: fmt.Sprintf("username %q: use 2-64 lower-case letters, digits, '.', '_' or '-'", name)}
	}
	return nil
}

// Session is a logged-in browser. Only the SHA-256 of its token is kept.
type Session struct {
	TokenHash string
	StaffID   int64
	CSRFToken string
	CreatedAt time.Time
	ExpiresAt time.Time
	// LastSeenAt is the last recorded use, to the minute (SessionTouchEvery).
	LastSeenAt time.Time
	IP         string
	UserAgent  string
}

// Staff errors.
var (
	ErrBadUsername   = &fault.Error{Kind: fault.KindInvalid, Code: "bad_username", Message: "username is not valid"}
	ErrBadRole       = &fault.Error{Kind: fault.KindInvalid, Code: "bad_role", Message: "role is not valid"}
	ErrStaffExists   = &fault.Error{Kind: fault.KindConflict, Code: "staff_exists", Message: "a staff account with this name exists"}
	ErrStaffNotFound = &fault.Error{Kind: fault.KindNotFound, Code: "staff_not_found", Message: "staff account not found"}
	ErrNoSession     = &fault.Error{Kind: fault.KindUnauthorized, Code: "no_session", Message: "not logged in or session expired"}
)
