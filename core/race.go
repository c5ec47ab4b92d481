package core

import (
	"context"
	"time"
)

// Payment, timeout, customer, staff and reconcile may all try to end one
// order; the conditional update lets exactly one win. The winner's own event
// (cancelled, paid) marks it on the timeline. Every loser leaves one event
// too, so the console can show the race: a losing payment its discrepancy
// event, every other loser an end_attempt.

// EventEndAttempt records an attempt to end an order that did not end it
// (detail: actor, reason, outcome, winner_status).
const EventEndAttempt = "end_attempt"

// End-attempt outcomes.
const (
	AttemptLost       = "lost"        // the order had already been paid or cancelled
	AttemptNotExpired = "not_expired" // an expiry cancel found the hold extended
)

// recordLostAttempt writes the end_attempt event of a call that did not end
// order (as read under the row lock, or by a caller that saw it ended
// already). A repeat by the actor that ended the order — a second click, a
// redelivered message — is no race and is not recorded.
func (e *Engine) recordLostAttempt(ctx context.Context, o Order, actor, reason string, at time.Time) {
	if o.Status == StatusCancelled && o.CancelActor == actor && o.CancelReason == reason {
		return
	}
	outcome := AttemptLost
	if o.Status == StatusPending {
		outcome = AttemptNotExpired
	}
	e.addEvent(context.WithoutCancel(ctx), Event{OrderNo: o.OrderNo, At: at, Kind: EventEndAttempt, Detail: map[string]any{
		"actor": actor, "reason": reason, "outcome": outcome, "winner_status": o.Status.String()}})
}
