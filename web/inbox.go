package web

import (
	"strings"
	"time"

	"seatflow/core"
	"seatflow/core/access"
)

// The approvals inbox: refund requests and write-off requests waiting for a
// second person, for those who may approve (ops and admin).

// InboxShown is how many requests of each kind the inbox lists; more
// waiting than that is a backlog the page says it cut.
const InboxShown = 100

// The orders page's filter of orders with a refund request waiting:
// refund=requested.
const (
	ParamRefund           = "refund"
	RefundFilterRequested = "requested"
)

// NavInbox is the navigation entry of the approvals inbox.
const NavInbox = "inbox"

// Kinds of an inbox item.
const (
	InboxRefund   = "refund"
	InboxWriteOff = "write_off"
)

// InboxItem is one request waiting for a decision.
type InboxItem struct {
	Kind        string // InboxRefund | InboxWriteOff
	ID          int64  // the refund request's id, or the case's
	OrderNo     string
	Code        string // the customer's code; "" for a case without an order
	AmountCents int64
	Currency    string // "" when no order has the number
	Reason      string // the refund's reason; the write-off's latest note
	RequestedBy string // a staff username, or an API key's actor
	At          time.Time
	// Blocked is the catalog key of why the viewer may not decide it (it is
	// theirs, or linked to them by who made whose account); "" when they may.
	Blocked string
}

// InboxData is the inbox page.
type InboxData struct {
	Items []InboxItem
	// More: there are more waiting than the page lists.
	More bool
}

// Approvable counts the items the viewer may decide.
func (d InboxData) Approvable() int {
	n := 0
	for _, it := range d.Items {
		if it.Blocked == "" {
			n++
		}
	}
	return n
}

// ShowsInbox reports whether the page's navigation has the inbox: for
// those who may approve refunds, who also decide write-offs.
func (p Page) ShowsInbox() bool { return p.Can(access.ActApproveRefund) }

// Requester names an actor as the console shows it: a member of staff by
// username, an API key by its actor (api:prefix).
func Requester(actor string) string { return strings.TrimPrefix(actor, core.ActorStaffPrefix) }

// RequestOutcome is one of the signed-in member of staff's own refund
// requests, as their dashboard lists it.
type RequestOutcome struct {
	Refund   core.Refund
	Code     string
	Currency string
}

// WriteOffOutcome is a write-off the viewer asked for: the case, and who
// moved it on from the request, when, and to what (written off, or sent
// back to open); DecidedBy is "" while it waits.
type WriteOffOutcome struct {
	CaseID      int64
	AmountCents int64
	Currency    string
	DecidedBy   string
	DecidedAt   time.Time
	DecidedTo   core.CaseState
}

// Decider is who decided a refund request: the approver of a refund, the
// rejecter, or who refunded the order directly meanwhile; "" while waiting.
func Decider(r core.Refund) string {
	if r.State == core.RefundRequested {
		return ""
	}
	if r.State == core.RefundDone && r.ApprovedBy != "" {
		return Requester(r.ApprovedBy)
	}
	return Requester(r.Actor)
}
