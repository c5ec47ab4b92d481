package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"seatflow/core/text"
)

// A discrepancy (a payment that lost the race or did not match its order,
// see HandlePayment) is a case ops work to its end: the money is refunded or
// written off. The case is the discrepancy row itself — one per (txn_id,
// kind), so a callback delivered again can never open a second case — with
// a state, an owner and a history (discrepancy_event).

// CaseState is where a discrepancy case stands.
type CaseState string

const (
	CaseOpen            CaseState = "open"             // new, nobody has acted yet
	CaseRefundRequested CaseState = "refund_requested" // refund asked of the provider (today: done outside SeatFlow)
	CaseRefunded        CaseState = "refunded"         // the money went back: closed
	CaseRefundFailed    CaseState = "refund_failed"    // the provider refused or bounced it
	CaseWrittenOff      CaseState = "written_off"      // closed without a refund (e.g. customer kept the seats elsewhere)
	// CaseWriteOffRequested: someone asked to write the case off; a second
	// person (not the one who asked, who owns the case meanwhile) approves,
	// or sends it back to open. Money is never written off by one person.
	CaseWriteOffRequested CaseState = "write_off_requested"
)

// Discrepancy.Status values. Status predates the case workflow and is kept
// as its summary — resolved iff the case reached a final state — so the
// reconcile report and the dashboard count unresolved money as before.
const (
	DiscrepancyOpen     = "open"
	DiscrepancyResolved = "resolved"
)

// caseTransitions is the case state machine: from → the states it may move
// to. Refunded and written_off are final. A failed refund is retried
// (refund_failed → refund_requested); writing it off goes through a new
// request, so every write-off after a failure shows a second attempt. A
// write-off is asked for first and approved by a second person.
var caseTransitions = map[CaseState][]CaseState{
	CaseOpen:              {CaseRefundRequested, CaseWriteOffRequested},
	CaseRefundRequested:   {CaseRefunded, CaseRefundFailed, CaseWriteOffRequested},
	CaseRefundFailed:      {CaseRefundRequested},
	CaseWriteOffRequested: {CaseWrittenOff, CaseOpen},
	CaseRefunded:          nil,
	CaseWrittenOff:        nil,
}

// AllCaseStates lists the states in the order a case passes through them.
func AllCaseStates() []CaseState {
	return []CaseState{CaseOpen, CaseRefundRequested, CaseRefundFailed, CaseRefunded, CaseWriteOffRequested, CaseWrittenOff}
}

// Valid reports whether s is a known state.
func (s CaseState) Valid() bool {
	_, ok := caseTransitions[s]
	return ok
}

// Final reports whether s is an end state: the case is resolved.
func (s CaseState) Final() bool { return s.Valid() && len(caseTransitions[s]) == 0 }

// Next returns the states s may move to.
func (s CaseState) Next() []CaseState { return slices.Clone(caseTransitions[s]) }

// CanMove reports whether the machine allows from → to.
func (s CaseState) CanMove(to CaseState) bool { return slices.Contains(caseTransitions[s], to) }

// Case errors.
var (
	ErrDiscrepancyNotFound = &Error{Kind: KindNotFound, Code: "discrepancy_not_found", Message: "discrepancy not found"}
	ErrAwaitingApproval    = &Error{Kind: KindConflict, Code: "awaiting_approval", Message: "the write-off awaits a second person's approval"}
	ErrInvalidTransition   = &Error{Kind: KindConflict, Code: "invalid_transition", Message: "the case cannot move to that state"}
	ErrCaseClosed          = &Error{Kind: KindConflict, Code: "case_closed", Message: "the case is closed"}
	ErrNoteRequired        = &Error{Kind: KindInvalid, Code: "note_required", Message: "a note is required"}
	ErrCaseBusy            = &Error{Kind: KindConflict, Code: "case_busy", Message: "the case keeps changing under this request"}
)

// CheckCaseMove returns nil when the machine allows from → to, or an
// invalid_transition error naming what is allowed.
func CheckCaseMove(from, to CaseState) error {
	if from.CanMove(to) {
		return nil
	}
	allowed := "none: the case is closed"
	if next := from.Next(); len(next) > 0 {
		names := make([]string, len(next))
		for i, n := range next {
			names[i] = string(n)
		}
		allowed = strings.Join(names, ", ")
	}
	return &Error{Kind: KindConflict, Code: ErrInvalidTransition.Code,
		Message: fmt.Sprintf("a case cannot move from %s to %s (allowed: %s)", from, to, allowed)}
}

// DiscrepancyCase is a discrepancy with its case state.
type DiscrepancyCase struct {
	Discrepancy
	State     CaseState
	Owner     string    // staff username who took the case; "" while nobody has
	UpdatedAt time.Time // last change of state, owner or notes
	Currency  string    // of the order's show, which AmountCents is in; "" for an unknown order
}

// Case actions recorded in the history.
const (
	CaseActionTake = "take" // the staff member became the owner
	CaseActionMove = "move" // the state changed
	CaseActionNote = "note" // a note, nothing else changed
)

// CaseEvent is one line of a case's history.
type CaseEvent struct {
	ID            int64
	DiscrepancyID int64
	At            time.Time
	Staff         string
	Action        string // CaseAction*
	From, To      CaseState
	Note          string
}

// CaseChange is one compare-and-set on a case: it applies only while the
// case is still in From with owner PrevOwner (what the caller read), and
// appends Event to the history in the same transaction.
type CaseChange struct {
	ID        int64
	From      CaseState
	PrevOwner string
	To        CaseState
	Owner     string
	Event     CaseEvent
	// Audit, when set, is written in the change's transaction.
	Audit *AuditEntry
}

// CaseStore is what Cases needs from the system of record.
type CaseStore interface {
	Creators                                                                // who made the asker's and the approver's accounts
	DiscrepancyCase(ctx context.Context, id int64) (DiscrepancyCase, error) // ErrDiscrepancyNotFound
	// ChangeCase applies ch if the case is still as read; false when
	// someone changed it in between.
	ChangeCase(ctx context.Context, ch CaseChange) (bool, error)
	AddAudit(ctx context.Context, a AuditEntry) error // outside any transaction
}

// Audit actions of the case workflow.
const (
	AuditCaseTake = "discrepancy_take"
	AuditCaseMove = "discrepancy_move"
	AuditCaseNote = "discrepancy_note"
)

// Cases runs the discrepancy case workflow. Every change is a
// compare-and-set on the state and owner the caller saw, so two members of
// ops acting on one case at once cannot both move it out of one state.
type Cases struct {
	store CaseStore
	clock Clock
}

// NewCases returns the workflow over s; a nil clock is the system clock.
func NewCases(s CaseStore, clock Clock) *Cases {
	if clock == nil {
		clock = SystemClock{}
	}
	return &Cases{store: s, clock: clock}
}

// casAttempts bounds the re-reads when a concurrent change wins the
// compare-and-set; each re-read decides again on the fresh state.
const casAttempts = 3

// Take makes staff the owner of an unresolved case. Taking a case one owns
// already changes nothing.
func (c *Cases) Take(ctx context.Context, id int64, staff, note string, by *StaffAction) (DiscrepancyCase, error) {
	note, err := text.Check("note", note, text.MultiLine)
	if err != nil {
		return DiscrepancyCase{}, err
	}
	return c.change(ctx, id, caseAudit{by, AuditCaseTake, note}, func(cur DiscrepancyCase) (*CaseChange, error) {
		if cur.State.Final() {
			return nil, closed(cur)
		}
		if cur.Owner == staff {
			return nil, nil
		}
		if cur.State == CaseWriteOffRequested {
			// The owner is who asked: taking it over would let them approve.
			return nil, awaitingApproval(cur)
		}
		if note == "" && cur.Owner != "" {
			note = "taken over from " + cur.Owner
		}
		return &CaseChange{To: cur.State, Owner: staff,
			Event: CaseEvent{Action: CaseActionTake, Staff: staff, From: cur.State, To: cur.State, Note: note}}, nil
	})
}

// Move changes the case's state along the machine, with a required note
// (what was done: the refund reference, why it is written off). An
// unowned case becomes the mover's.
func (c *Cases) Move(ctx context.Context, id int64, to CaseState, staff, note string, by *StaffAction) (DiscrepancyCase, error) {
	if !to.Valid() {
		return DiscrepancyCase{}, Invalidf("unknown case state %q", to)
	}
	if note == "" {
		return DiscrepancyCase{}, ErrNoteRequired
	}
	note, err := text.Check("note", note, text.MultiLine)
	if err != nil {
		return DiscrepancyCase{}, err
	}
	return c.change(ctx, id, caseAudit{by, AuditCaseMove, note}, func(cur DiscrepancyCase) (*CaseChange, error) {
		if err := CheckCaseMove(cur.State, to); err != nil {
			return nil, err
		}
		owner := cur.Owner
		switch {
		case to == CaseWriteOffRequested:
			owner = staff // who asked, so the approval can tell
		case to == CaseWrittenOff:
			// The owner is who asked (see above).
			if err := checkFourEyes(ctx, c.store, ActorStaffPrefix+cur.Owner, ActorStaffPrefix+staff,
				fmt.Sprintf("the write-off of case %d", cur.ID)); err != nil {
				return nil, err
			}
		case owner == "":
			owner = staff
		}
		return &CaseChange{To: to, Owner: owner,
			Event: CaseEvent{Action: CaseActionMove, Staff: staff, From: cur.State, To: to, Note: note}}, nil
	})
}

// Note adds a note to an unresolved case's history.
func (c *Cases) Note(ctx context.Context, id int64, staff, note string, by *StaffAction) (DiscrepancyCase, error) {
	if note == "" {
		return DiscrepancyCase{}, ErrNoteRequired
	}
	note, err := text.Check("note", note, text.MultiLine)
	if err != nil {
		return DiscrepancyCase{}, err
	}
	return c.change(ctx, id, caseAudit{by, AuditCaseNote, note}, func(cur DiscrepancyCase) (*CaseChange, error) {
		if cur.State.Final() {
			return nil, closed(cur)
		}
		return &CaseChange{To: cur.State, Owner: cur.Owner,
			Event: CaseEvent{Action: CaseActionNote, Staff: staff, From: cur.State, To: cur.State, Note: note}}, nil
	})
}

func awaitingApproval(cur DiscrepancyCase) error {
	return &Error{Kind: KindConflict, Code: ErrAwaitingApproval.Code, Message: fmt.Sprintf(
		"case %d: %s asked to write it off; a second person approves or sends it back", cur.ID, cur.Owner)}
}

func closed(cur DiscrepancyCase) error {
	return &Error{Kind: KindConflict, Code: ErrCaseClosed.Code,
		Message: fmt.Sprintf("case %d is closed (%s)", cur.ID, cur.State)}
}

// caseAudit is what a step's audit row records: who asked (nil: no row),
// the action and the note as given.
type caseAudit struct {
	by     *StaffAction
	action string
	note   string
}

func (a caseAudit) entry(at time.Time, id int64, from, to CaseState, owner string) *AuditEntry {
	if a.by == nil {
		return nil
	}
	e := a.by.Entry(at, a.action, fmt.Sprintf("discrepancy:%d", id), map[string]any{
		"from": string(from), "to": string(to), "owner": owner, "note": a.note})
	return &e
}

// change reads the case, lets decide build the change (nil: nothing to do)
// and applies it as a compare-and-set, deciding again on a fresh read when
// someone else changed the case in between. The audit row goes into the
// change's transaction; a step that changes nothing (taking one's own case)
// is still audited, as one insert of its own: there is no change to join.
func (c *Cases) change(ctx context.Context, id int64, audit caseAudit, decide func(DiscrepancyCase) (*CaseChange, error)) (DiscrepancyCase, error) {
	for range casAttempts {
		cur, err := c.store.DiscrepancyCase(ctx, id)
		if err != nil {
			return DiscrepancyCase{}, err
		}
		ch, err := decide(cur)
		if err != nil {
			return cur, err
		}
		now := c.clock.Now()
		if ch == nil {
			if a := audit.entry(now, id, cur.State, cur.State, cur.Owner); a != nil {
				if err := c.store.AddAudit(ctx, *a); err != nil {
					return DiscrepancyCase{}, fmt.Errorf("case %d: %w", id, err)
				}
			}
			return cur, nil
		}
		ch.ID, ch.From, ch.PrevOwner = id, cur.State, cur.Owner
		ch.Event.DiscrepancyID, ch.Event.At = id, now
		ch.Audit = audit.entry(now, id, cur.State, ch.To, ch.Owner)
		ok, err := c.store.ChangeCase(ctx, *ch)
		if err != nil {
			return DiscrepancyCase{}, fmt.Errorf("case %d: %w", id, err)
		}
		if ok {
			cur.State, cur.Owner, cur.UpdatedAt = ch.To, ch.Owner, now
			if ch.To.Final() && !ch.From.Final() {
				cur.Status, cur.ResolvedAt, cur.ResolvedBy, cur.Note = DiscrepancyResolved, now, ch.Event.Staff, ch.Event.Note
			}
			return cur, nil
		}
	}
	return DiscrepancyCase{}, &Error{Kind: KindConflict, Code: ErrCaseBusy.Code,
		Message: fmt.Sprintf("case %d keeps changing under this request; reload and try again", id)}
}
