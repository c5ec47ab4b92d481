package core

import (
	"errors"
	"fmt"
	"strings"

	"seatflow/core/fault"
)

// core's errors are fault's (core/fault), so packages core itself imports,
// such as access, classify their errors the same way.
type (
	Kind  = fault.Kind
	Error = fault.Error
)

const (
	KindInternal     = fault.KindInternal
	KindInvalid      = fault.KindInvalid
	KindNotFound     = fault.KindNotFound
	KindConflict     = fault.KindConflict
	KindLimit        = fault.KindLimit
	KindUnauthorized = fault.KindUnauthorized
	KindUnavailable  = fault.KindUnavailable
	KindForbidden    = fault.KindForbidden
	KindRateLimited  = fault.KindRateLimited
)

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
