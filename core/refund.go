package core

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"seatflow/core/text"
)

// A refund is the one ending of a paid order: paid → refunded through the
// same kind of conditional update as every other ending
// (UPDATE order_info SET status=3 WHERE order_no=? AND status=1), its
// order_seat rows deleted in that transaction, and only after the commit the
// seats given back in the seat store (ReleaseSold, holder-guarded) with the
// buyer's purchase limit. A failed seat-store step is repaired by reconcile.
//
// Above an approval threshold a refund, by staff or through an API key, is
// only a request: a refund row in state requested, the order untouched,
// until a second person approves it (then the transition runs) or rejects
// it — four eyes on money, foureyes.go.

// RefundState is where a refund row stands.
type RefundState string

const (
	RefundRequested  RefundState = "requested"  // waiting for approval; the order is still paid
	RefundDone       RefundState = "refunded"   // the order was refunded by this row
	RefundRejected   RefundState = "rejected"   // ops said no; the order is still paid
	RefundSuperseded RefundState = "superseded" // the order was refunded by another row meanwhile
)

// Refund is one refund row: a refund done, or a request for one.
type Refund struct {
	ID          int64
	OrderNo     string
	AmountCents int64
	Reason      string
	Reference   string // the payment provider's refund reference
	Actor       string // who ran the transition or decided the request
	RequestedBy string
	ApprovedBy  string
	State       RefundState
	Note        string // why a request was rejected
	CreatedAt   time.Time
	DecidedAt   time.Time // zero while requested
	// A refund of a counter sale: the payment's tender, and the till
	// shift the money left from (0: none, shifts.go).
	Tender  Tender
	ShiftID int64
}

// Timeline events and audit actions of refunds.
const (
	EventRefunded        = "refunded"
	EventRefundRequested = "refund_requested"
	EventRefundRejected  = "refund_rejected"
	AuditRefund          = "refund"
	AuditRefundRequest   = "refund_request"
	AuditRefundApprove   = "refund_approve"
	AuditRefundReject    = "refund_reject"
	seatReleaseOpRefund  = "refund_release"
)

// MaxRefundReferenceLen bounds a refund's payment-provider reference.
const MaxRefundReferenceLen = 128

// MaxRefundReasonLen bounds a refund's reason and a rejection's note.
const MaxRefundReasonLen = 500

// Refund errors.
var (
	ErrOrderNotPaid    = &Error{Kind: KindConflict, Code: "order_not_paid", Message: "only a paid order can be refunded"}
	ErrAlreadyRefunded = &Error{Kind: KindConflict, Code: "already_refunded", Message: "the order has already been refunded"}
	ErrRefundNotFound  = &Error{Kind: KindNotFound, Code: "refund_not_found", Message: "refund request not found"}
	ErrRefundDecided   = &Error{Kind: KindConflict, Code: "refund_decided", Message: "the refund request has already been decided"}
	// ErrSelfApproval: four eyes on money. Who asked for a refund or a
	// write-off cannot approve it (nor can accounts linked to them:
	// ErrLinkedApproval).
	ErrSelfApproval  = &Error{Kind: KindForbidden, Code: "self_approval", Message: "who asked for it cannot approve it: a second person must"}
	ErrRefundPending = &Error{Kind: KindConflict, Code: "refund_pending", Message: "a refund request for this order is waiting for approval"}
)

// RefundTx is the transaction a refund runs in: the engine's writes plus the
// refund's own.
type RefundTx interface {
	Tx
	SeatRefundTx   // partial refunds: refundseats.go
	SeatExchangeTx // exchanges: exchange.go
	// TransitionPaid is the refund's conditional update:
	// UPDATE order_info SET status=3 WHERE order_no=? AND status=1.
	// It reports whether this caller won.
	TransitionPaid(ctx context.Context, orderNo string) (bool, error)
	InsertRefund(ctx context.Context, r Refund) (int64, error)
	// OpenRefundRequest returns the order's request waiting for approval, if any.
	OpenRefundRequest(ctx context.Context, orderNo string) (Refund, bool, error)
	// DecideRefund moves a requested row to r.State (refunded, rejected,
	// superseded) with its decider, time and note, only while it is still
	// requested; false when someone decided it first.
	DecideRefund(ctx context.Context, r Refund) (bool, error)
}

// RefundStore is what Refunds needs from the system of record.
type RefundStore interface {
	Creators // who made a requester's and an approver's accounts
	// InRefundTx runs fn in one transaction, as Store.InTx does.
	InRefundTx(ctx context.Context, fn func(RefundTx) error) error
	Refund(ctx context.Context, id int64) (Refund, error) // ErrRefundNotFound
	// RefundsByState lists refund rows in a state, oldest first.
	RefundsByState(ctx context.Context, state RefundState, limit int) ([]Refund, error)
	OrderRefunds(ctx context.Context, orderNo string) ([]Refund, error) // oldest first
}

// Refunds runs refunds on the engine's stores. ApprovalCents is the amount
// above which a refund needs a second person; 0 means every refund is one
// step.
type Refunds struct {
	e             *Engine
	store         RefundStore
	approvalCents int64
}

// NewRefunds returns the refund workflow over e's seat store and s.
func NewRefunds(e *Engine, s RefundStore, approvalCents int64) (*Refunds, error) {
	if approvalCents < 0 {
		return nil, fmt.Errorf("refunds: approval threshold %d cents may not be negative", approvalCents)
	}
	return &Refunds{e: e, store: s, approvalCents: approvalCents}, nil
}

// ApprovalCents is the two-step threshold (0: always one step).
func (r *Refunds) ApprovalCents() int64 { return r.approvalCents }

// NeedsApproval reports whether a refund of amount becomes a request.
func (r *Refunds) NeedsApproval(amountCents int64) bool {
	return r.approvalCents > 0 && amountCents > r.approvalCents
}

// Store returns the refund rows' store, for read-only views.
func (r *Refunds) Store() RefundStore { return r.store }

// RefundRequest asks to refund a paid order.
type RefundRequest struct {
	OrderNo   string
	Reason    string
	Reference string
	Actor     string // api:<key prefix> | staff:<name>
	// SeatIDs names the seats of a partial refund (refundseats.go); none:
	// the whole order.
	SeatIDs []string
	// Audit writes the refund's audit row (refund, or refund_request when
	// only a request was recorded) in the refund's transaction. A refused
	// refund writes nothing, audit row included.
	Audit *StaffAction
}

// RefundOutcome is what a refund call did.
type RefundOutcome struct {
	Order  Order  // as it stands afterwards
	Refund Refund // the row written
	// Pending: only a request was recorded; the order is still paid.
	Pending bool
}

// validRefund checks req and returns its reason as stored: trimmed, line
// breaks normalized.
func validRefund(req RefundRequest) (string, error) {
	reason := strings.TrimSpace(req.Reason)
	switch {
	case req.OrderNo == "" || len(req.OrderNo) > 40:
		return "", Invalidf("order number is required (at most 40 characters)")
	case reason == "":
		return "", Invalidf("reason is required")
	case utf8.RuneCountInString(reason) > MaxRefundReasonLen:
		return "", Invalidf("reason may have at most %d characters", MaxRefundReasonLen)
	case utf8.RuneCountInString(req.Reference) > MaxRefundReferenceLen:
		return "", Invalidf("reference may have at most %d characters", MaxRefundReferenceLen)
	case req.Actor == "":
		return "", Invalidf("a refund needs an actor")
	}
	if _, err := text.Check("reference", req.Reference, text.OneLine); err != nil {
		return "", err
	}
	return text.Check("reason", reason, text.MultiLine)
}

// notPaid is the error for refunding order o, which is not paid.
func notPaid(o Order) error {
	if o.Status == StatusRefunded {
		return &Error{Kind: KindConflict, Code: ErrAlreadyRefunded.Code,
			Message: fmt.Sprintf("order %s has already been refunded", o.OrderNo)}
	}
	return &Error{Kind: KindConflict, Code: ErrOrderNotPaid.Code,
		Message: fmt.Sprintf("order %s is %s: only a paid order can be refunded", o.OrderNo, o.Status)}
}

// Refund refunds a paid order, or (above the threshold) records a request
// for a second person. A refund of an order that is
// not paid fails with order_not_paid or already_refunded and writes nothing.
func (r *Refunds) Refund(ctx context.Context, req RefundRequest) (RefundOutcome, error) {
	reason, err := validRefund(req)
	if err != nil {
		return RefundOutcome{}, err
	}
	req.Reason = reason
	if req.SeatIDs, err = refundSeats(req.SeatIDs); err != nil {
		return RefundOutcome{}, err
	}
	now := r.e.clock.Now()
	var (
		out  RefundOutcome
		hand handoff
		part seatPart
	)
	r.e.prepareHandoff(ctx)
	err = r.store.InRefundTx(ctx, func(tx RefundTx) error {
		out, hand, part = RefundOutcome{}, handoff{}, seatPart{whole: true}
		// The order row first, as every ending locks it (one lock order).
		o, err := tx.OrderForUpdate(ctx, req.OrderNo)
		if err != nil {
			return err
		}
		if o.Status != StatusPaid {
			return notPaid(o)
		}
		part.amountCents = o.AmountCents
		if req.SeatIDs != nil {
			if part, err = r.partOf(ctx, o, req.SeatIDs); err != nil {
				return err
			}
		}
		row := Refund{OrderNo: o.OrderNo, AmountCents: part.amountCents, Reason: req.Reason,
			Reference: req.Reference, Actor: req.Actor, RequestedBy: req.Actor, CreatedAt: now}
		if r.NeedsApproval(row.AmountCents) {
			if open, ok, err := tx.OpenRefundRequest(ctx, o.OrderNo); err != nil {
				return err
			} else if ok {
				return &Error{Kind: KindConflict, Code: ErrRefundPending.Code, Message: fmt.Sprintf(
					"refund request %d for order %s is waiting for approval", open.ID, o.OrderNo)}
			}
			row.State = RefundRequested
			if row.ID, err = tx.InsertRefund(ctx, row); err != nil {
				return err
			}
			out = RefundOutcome{Order: o, Refund: row, Pending: true}
			detail := map[string]any{"refund_id": row.ID, "amount_cents": row.AmountCents, "reason": row.Reason, "actor": row.Actor}
			if !part.whole {
				detail["seat_ids"] = part.seats // what the approval refunds (requestedSeats)
			}
			if err := tx.AddEvent(ctx, Event{OrderNo: o.OrderNo, At: now, Kind: EventRefundRequested, Detail: detail}); err != nil {
				return err
			}
			return req.audit(ctx, tx, now, AuditRefundRequest, o, row, part)
		}
		row.State, row.ApprovedBy, row.DecidedAt = RefundDone, req.Actor, now
		if !part.whole {
			// Beside an open request, which may name these seats, a
			// partial refund waits for its decision.
			if open, ok, err := tx.OpenRefundRequest(ctx, o.OrderNo); err != nil {
				return err
			} else if ok {
				return &Error{Kind: KindConflict, Code: ErrRefundPending.Code, Message: fmt.Sprintf(
					"refund request %d for order %s is waiting for approval", open.ID, o.OrderNo)}
			}
			if hand, err = r.transitionSeats(ctx, tx, o, part, &row); err != nil {
				return err
			}
			o.SeatIDs, o.AmountCents = part.kept, o.AmountCents-part.amountCents
			out = RefundOutcome{Order: o, Refund: row}
			return req.audit(ctx, tx, now, AuditRefund, o, row, part)
		}
		if hand, err = r.transition(ctx, tx, o, &row); err != nil {
			return err
		}
		o.Status = StatusRefunded
		out = RefundOutcome{Order: o, Refund: row}
		return req.audit(ctx, tx, now, AuditRefund, o, row, part)
	})
	if err != nil {
		return RefundOutcome{}, fmt.Errorf("refund %s: %w", req.OrderNo, err)
	}
	switch {
	case out.Pending:
		r.e.metrics.Refunds.WithLabelValues(string(RefundRequested)).Inc()
	case !part.whole:
		r.afterRefundSeats(ctx, out.Order, hand)
	default:
		r.afterRefund(ctx, out.Order, hand)
	}
	return out, nil
}

// transition runs the refund inside tx on order o, locked and paid: the
// conditional update, the order_seat rows, the refund row (inserted, or the
// request moved to refunded when row.ID is set), the order's other open
// request superseded, the event, the freed seats handed to the waiting
// list (handoff.go). What the hand-off left of them goes back on sale.
func (r *Refunds) transition(ctx context.Context, tx RefundTx, o Order, row *Refund) (handoff, error) {
	if err := refundShift(ctx, tx, o, row); err != nil {
		return handoff{}, err
	}
	won, err := tx.TransitionPaid(ctx, o.OrderNo)
	if err != nil {
		return handoff{}, err
	}
	if !won { // the row lock makes this a belt to the braces
		return handoff{}, notPaid(Order{OrderNo: o.OrderNo, Status: StatusRefunded})
	}
	released, err := tx.DeleteOrderSeats(ctx, o.OrderNo)
	if err != nil {
		return handoff{}, err
	}
	if row.ID != 0 {
		if ok, err := tx.DecideRefund(ctx, *row); err != nil {
			return handoff{}, err
		} else if !ok {
			return handoff{}, ErrRefundDecided
		}
	} else {
		if open, ok, err := tx.OpenRefundRequest(ctx, o.OrderNo); err != nil {
			return handoff{}, err
		} else if ok {
			open.State, open.Actor, open.DecidedAt, open.Note = RefundSuperseded, row.Actor, row.DecidedAt, "refunded directly"
			if _, err := tx.DecideRefund(ctx, open); err != nil {
				return handoff{}, err
			}
		}
		if row.ID, err = tx.InsertRefund(ctx, *row); err != nil {
			return handoff{}, err
		}
	}
	if err := tx.AddEvent(ctx, Event{OrderNo: o.OrderNo, At: row.DecidedAt, Kind: EventRefunded, Detail: map[string]any{
		"refund_id": row.ID, "amount_cents": row.AmountCents, "reason": row.Reason, "reference": row.Reference,
		"actor": row.Actor, "requested_by": row.RequestedBy, "approved_by": row.ApprovedBy, "seat_ids": released}}); err != nil {
		return handoff{}, err
	}
	return r.e.handOff(ctx, tx, o, released, row.DecidedAt)
}

// afterRefund runs strictly after the refund committed: the seats handed
// to waiting-list offers move to them, the others still sold to the order
// go back to available, with the buyer's limit. A failure is logged and
// left to reconcile (checks refunded_sold, stale_redis_lock).
func (r *Refunds) afterRefund(ctx context.Context, o Order, hand handoff) {
	e := r.e
	e.metrics.Refunds.WithLabelValues(string(RefundDone)).Inc()
	e.metrics.OrdersEnded.WithLabelValues(StatusRefunded.String(), "refund").Inc()
	ctx = context.WithoutCancel(ctx)
	e.afterHandOff(ctx, o, hand, e.clock.Now())
	// The seats as placed but those handed on: a seat the DB had lost the
	// row of may still be sold.
	sold := hand.notHanded(o.SeatIDs)
	if len(sold) == 0 {
		return
	}
	released := hand.rest
	n, err := e.seats.ReleaseSold(ctx, o.ShowID, o.OrderNo, sold)
	if err != nil && replyLost(err) {
		// Holder-guarded like Release: a second call frees only what the
		// first did not, whether or not the first one ran.
		e.log.WarnContext(ctx, "refund seat release: no reply, sending it again", "order_no", o.OrderNo, "err", err)
		var m int
		m, err = e.seats.ReleaseSold(ctx, o.ShowID, o.OrderNo, sold)
		n += m
	}
	if err != nil {
		e.metrics.SeatStoreFailure.WithLabelValues(seatReleaseOpRefund).Inc()
		e.log.ErrorContext(ctx, "refund committed but seat release failed; reconcile will free them",
			"order_no", o.OrderNo, "err", err)
		e.addEvent(ctx, Event{OrderNo: o.OrderNo, At: e.clock.Now(), Kind: EventSeatReleaseFailed,
			Detail: map[string]any{"seat_ids": sold, "error": err.Error()}})
		return
	}
	e.addEvent(ctx, Event{OrderNo: o.OrderNo, At: e.clock.Now(), Kind: EventSeatsReleased,
		Detail: map[string]any{"seat_ids": sold, "released": n}})
	e.notify.SeatsChanged(o.ShowID, released, SeatAvailable, "")
}

// audit records a refund or a request for one in its transaction: of the
// seats of p, or of the whole order o.
func (req RefundRequest) audit(ctx context.Context, tx Tx, at time.Time, action string, o Order, row Refund, p seatPart) error {
	detail := map[string]any{"refund_id": row.ID, "amount_cents": row.AmountCents, "reason": row.Reason,
		"reference": row.Reference, "seat_ids": o.SeatIDs}
	if !p.whole {
		detail["seat_ids"], detail["kept_seat_ids"] = p.seats, p.kept
	}
	return req.Audit.record(ctx, tx, at, action, "order:"+o.OrderNo, detail)
}

// decisionAudit records a staff decision on request req in its transaction.
func decisionAudit(ctx context.Context, tx Tx, by *StaffAction, at time.Time, action string, req Refund, note string) error {
	return by.record(ctx, tx, at, action, "order:"+req.OrderNo, map[string]any{
		"refund_id": req.ID, "amount_cents": req.AmountCents, "requested_by": req.RequestedBy, "note": note})
}

// Approve runs a requested refund, as approver (ops). The order must still
// be paid; a request decided meanwhile fails with refund_decided. With by
// set, the approval's audit row is written in its transaction.
func (r *Refunds) Approve(ctx context.Context, id int64, approver string, by *StaffAction) (RefundOutcome, error) {
	if approver == "" {
		return RefundOutcome{}, Invalidf("an approval needs an approver")
	}
	req, err := r.store.Refund(ctx, id)
	if err != nil {
		return RefundOutcome{}, err
	}
	// Before the transaction: who asked, and who made which account or
	// key, never change; a decided request fails below as it would anyway.
	if req.State == RefundRequested {
		if err := checkFourEyes(ctx, r.store, req.RequestedBy, approver, fmt.Sprintf("refund request %d", req.ID)); err != nil {
			return RefundOutcome{}, fmt.Errorf("approve refund %d: %w", id, err)
		}
	}
	// The seats a partial request named are in its event, immutable
	// once the request committed.
	seats, err := r.requestedSeats(ctx, req)
	if err != nil {
		return RefundOutcome{}, fmt.Errorf("approve refund %d: %w", id, err)
	}
	now := r.e.clock.Now()
	var (
		out  RefundOutcome
		hand handoff
		part seatPart
	)
	r.e.prepareHandoff(ctx)
	err = r.store.InRefundTx(ctx, func(tx RefundTx) error {
		out, hand, part = RefundOutcome{}, handoff{}, seatPart{whole: true}
		o, err := tx.OrderForUpdate(ctx, req.OrderNo)
		if err != nil {
			return err
		}
		row := req
		if row.State != RefundRequested {
			return decided(row)
		}
		if o.Status != StatusPaid {
			return notPaid(o)
		}
		if seats != nil {
			if part, err = r.partOf(ctx, o, seats); err != nil {
				return err
			}
		}
		row.State, row.Actor, row.ApprovedBy, row.DecidedAt = RefundDone, approver, approver, now
		if !part.whole {
			if hand, err = r.transitionSeats(ctx, tx, o, part, &row); err != nil {
				return err
			}
			o.SeatIDs, o.AmountCents = part.kept, o.AmountCents-part.amountCents
			out = RefundOutcome{Order: o, Refund: row}
			return decisionAudit(ctx, tx, by, now, AuditRefundApprove, req, "")
		}
		if hand, err = r.transition(ctx, tx, o, &row); err != nil {
			return err
		}
		o.Status = StatusRefunded
		out = RefundOutcome{Order: o, Refund: row}
		return decisionAudit(ctx, tx, by, now, AuditRefundApprove, req, "")
	})
	if err != nil {
		return RefundOutcome{}, fmt.Errorf("approve refund %d: %w", id, err)
	}
	if !part.whole {
		r.afterRefundSeats(ctx, out.Order, hand)
		return out, nil
	}
	r.afterRefund(ctx, out.Order, hand)
	return out, nil
}

// Reject closes a requested refund without changing the order. With by
// set, the rejection's audit row is written in its transaction.
func (r *Refunds) Reject(ctx context.Context, id int64, approver, note string, by *StaffAction) (Refund, error) {
	switch {
	case approver == "":
		return Refund{}, Invalidf("a rejection needs an approver")
	case utf8.RuneCountInString(note) > MaxRefundReasonLen:
		return Refund{}, Invalidf("note may have at most %d characters", MaxRefundReasonLen)
	}
	note, err := text.Check("note", strings.TrimSpace(note), text.MultiLine)
	if err != nil {
		return Refund{}, err
	}
	req, err := r.store.Refund(ctx, id)
	if err != nil {
		return Refund{}, err
	}
	if req.State != RefundRequested {
		return Refund{}, decided(req)
	}
	now := r.e.clock.Now()
	row := req
	row.State, row.Actor, row.DecidedAt, row.Note = RefundRejected, approver, now, note
	err = r.store.InRefundTx(ctx, func(tx RefundTx) error {
		// The order row first, as in every refund: one lock order.
		if _, err := tx.OrderForUpdate(ctx, req.OrderNo); err != nil {
			return err
		}
		if ok, err := tx.DecideRefund(ctx, row); err != nil {
			return err
		} else if !ok {
			return ErrRefundDecided
		}
		if err := tx.AddEvent(ctx, Event{OrderNo: req.OrderNo, At: now, Kind: EventRefundRejected, Detail: map[string]any{
			"refund_id": id, "actor": approver, "note": row.Note}}); err != nil {
			return err
		}
		return decisionAudit(ctx, tx, by, now, AuditRefundReject, req, row.Note)
	})
	if err != nil {
		return Refund{}, fmt.Errorf("reject refund %d: %w", id, err)
	}
	r.e.metrics.Refunds.WithLabelValues(string(RefundRejected)).Inc()
	return row, nil
}

func decided(r Refund) error {
	return &Error{Kind: KindConflict, Code: ErrRefundDecided.Code,
		Message: fmt.Sprintf("refund request %d is %s already", r.ID, r.State)}
}
