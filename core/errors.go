package core

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

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

// Sentinel errors; compare with errors.Is.
var (
	ErrInvalid          = &Error{Kind: KindInvalid, Code: "invalid_request", Message: "invalid request"}
	ErrShowNotFound     = &Error{Kind: KindNotFound, Code: "show_not_found", Message: "show not found"}
	ErrOrderNotFound    = &Error{Kind: KindNotFound, Code: "order_not_found", Message: "order not found"}
	ErrSeatUnavailable  = &Error{Kind: KindConflict, Code: "seat_unavailable", Message: "seats are not available"}
	ErrPurchaseLimit    = &Error{Kind: KindLimit, Code: "purchase_limit", Message: "purchase limit reached"}
	ErrOrderNotPending  = &Error{Kind: KindConflict, Code: "order_not_pending", Message: "order is not pending"}
	ErrAmountMismatch   = &Error{Kind: KindConflict, Code: "amount_mismatch", Message: "payment amount does not match the order"}
	ErrTxnConflict      = &Error{Kind: KindConflict, Code: "txn_conflict", Message: "this txn_id is already recorded for another order or amount; the callback is recorded as a discrepancy"}
	ErrStoreUnavailable = &Error{Kind: KindUnavailable, Code: "store_unavailable", Message: "a backing store is unavailable"}
)

// Invalidf returns an invalid_request error with a specific message.
func Invalidf(format string, args ...any) error {
	return &Error{Kind: KindInvalid, Code: ErrInvalid.Code, Message: fmt.Sprintf(format, args...)}
}

// SeatsUnavailable returns a seat_unavailable error naming the seats.
func SeatsUnavailable(seats []string) error {
	return &Error{Kind: KindConflict, Code: ErrSeatUnavailable.Code,
		Message: "seats are not available: " + strings.Join(seats, ","), Seats: seats}
}

// ErrorKind returns the kind of the first *Error in err's chain, or KindInternal.
func ErrorKind(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}
