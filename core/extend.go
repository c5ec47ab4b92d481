package core

import (
	"context"
	"fmt"
	"time"

	"seatflow/core/text"
)

// DefaultMaxHold is the longest a hold may last in all, extensions included,
// when Config.MaxHold is not set.
const DefaultMaxHold = 2 * time.Hour

// EventExtended records a hold pushed later (detail: by_ms, new_expire_at,
// actor, reason).
const EventExtended = "extended"

// AuditExtendHold is the console's audit action for an extension.
const AuditExtendHold = "extend_hold"

// Extend errors.
var (
	// ErrHoldLimit: the extension would make the hold longer than MaxHold.
	ErrHoldLimit = &Error{Kind: KindLimit, Code: "hold_limit", Message: "the hold would exceed its maximum length"}
	// ErrHoldExpired: the order is still pending but its hold has run out;
	// its cancel is on the way, so it can no longer be extended.
	ErrHoldExpired = &Error{Kind: KindConflict, Code: "hold_expired", Message: "the hold has already expired"}
)

// MaxHold is the limit on a hold's whole length (expire_at − created_at).
func (e *Engine) MaxHold() time.Duration {
	if e.cfg.MaxHold > 0 {
		return e.cfg.MaxHold
	}
	return DefaultMaxHold
}

// Extend pushes a pending order's expiry later by `by`. It sends no
// timeout message: the message in flight finds the order not yet expired
// when it arrives and re-arms with the time then left (HandleTimeout), in
// levels and in timer mode alike.
//
// The order row is locked and the update is conditional on status = 0, so
// against a payment or a cancel exactly one wins; an expiry cancel, for its
// part, re-checks expire_at under the same lock (CancelAndRelease), so it
// can never end an order that an extension kept alive. A hold that has run
// out cannot be extended (ErrHoldExpired): its cancel may already be running.
//
// With staff set (a staff extension) the audit row, with the outcome, is
// written in the extension's transaction. A refusal writes nothing else, so
// its transaction commits the audit row alone: the attempt is on record with
// what refused it, judged under the same row lock, and the refusal is
// returned after the commit.
func (e *Engine) Extend(ctx context.Context, orderNo string, by time.Duration, actor, reason string, staff *StaffAction) (Order, error) {
	switch {
	case by <= 0:
		return Order{}, Invalidf("an extension must be positive, not %v", by)
	case actor == "":
		return Order{}, Invalidf("an extension needs an actor")
	}
	reason, err := text.Check("reason", reason, text.MultiLine)
	if err != nil {
		return Order{}, err
	}
	now := e.clock.Now()
	var (
		o       Order
		refused *Error
	)
	err = e.store.InTx(ctx, func(tx Tx) error {
		var err error
		if o, err = tx.OrderForUpdate(ctx, orderNo); err != nil {
			return err
		}
		to := o.ExpireAt.Add(by)
		if refused = e.extendRefusal(o, to, now); refused == nil {
			won, err := tx.ExtendHold(ctx, orderNo, o.ExpireAt, to)
			if err != nil {
				return err
			}
			if !won { // the row lock makes this a belt to the braces
				refused = ErrOrderNotPending
			}
		}
		detail := map[string]any{"minutes": by.Minutes(), "reason": reason, "outcome": AuditOutcomeExtended}
		if refused != nil {
			detail["outcome"] = refused.Code
			return staff.record(ctx, tx, now, AuditExtendHold, "order:"+orderNo, detail)
		}
		o.ExpireAt = to
		if err := tx.AddEvent(ctx, Event{OrderNo: orderNo, At: now, Kind: EventExtended, Detail: map[string]any{
			"by_ms": by.Milliseconds(), "new_expire_at": to.Format(time.RFC3339Nano),
			"actor": actor, "reason": reason,
		}}); err != nil {
			return err
		}
		detail["new_expire_at"] = to.Format(time.RFC3339)
		return staff.record(ctx, tx, now, AuditExtendHold, "order:"+orderNo, detail)
	})
	if err == nil && refused != nil {
		err = refused
	}
	if err != nil {
		return Order{}, fmt.Errorf("extend %s: %w", orderNo, err)
	}
	e.metrics.HoldsExtended.Inc()
	return o, nil
}

// extendRefusal is why the locked order o may not be extended to expire at
// to, or nil.
func (e *Engine) extendRefusal(o Order, to, now time.Time) *Error {
	switch {
	case o.Status != StatusPending:
		return ErrOrderNotPending
	case !now.Before(o.ExpireAt):
		return &Error{Kind: KindConflict, Code: ErrHoldExpired.Code, Message: fmt.Sprintf(
			"the hold of %s expired at %s", o.OrderNo, o.ExpireAt.Format(time.RFC3339))}
	}
	if total := to.Sub(o.CreatedAt); total > e.MaxHold() {
		return &Error{Kind: KindLimit, Code: ErrHoldLimit.Code, Message: fmt.Sprintf(
			"a hold may last at most %v in all; this one would last %v (at most %v more)",
			e.MaxHold(), total.Round(time.Second), max(e.MaxHold()-o.ExpireAt.Sub(o.CreatedAt), 0).Round(time.Second))}
	}
	return nil
}
