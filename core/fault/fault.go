// Package fault is the one error type of SeatFlow's core and its
// sub-packages: a kind the HTTP layer maps to a status in one place, and a
// stable code. It imports nothing of SeatFlow, so every core package can
// share it (core re-exports it as core.Error).
package fault

import "time"

// Kind classifies an error for callers that must react to it (the HTTP layer
// maps kinds to statuses in one place); never match on error strings.
type Kind int

const (
	KindInternal Kind = iota
	KindInvalid
	KindNotFound
	KindConflict
	KindLimit
	KindUnauthorized
	KindUnavailable
	KindForbidden   // authenticated, but not allowed to do this
	KindRateLimited // too many at once: try again after Error.RetryAfter
)

// Error is a classified error with a stable machine-readable code.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Seats   []string // seats that could not be locked, for seat_unavailable
	Field   string   // the request field at fault, e.g. "seats[3].category"
	// Left, for not_enough_seats: what remains per category.
	Left any
	// Detail is more about a refusal, written in the error body as is
	// (check-in: the first scan, or why a ticket is not valid).
	Detail any
	// RetryAfter, for KindRateLimited: when trying again may succeed
	// (0: a second).
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, ErrSeatUnavailable) match on the code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}
