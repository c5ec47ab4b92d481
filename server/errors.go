package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

// errUnauthorized is raised by the HTTP layer itself (as is bad_signature,
// see badSignature); every other error comes from core.
var errUnauthorized = &core.Error{Kind: core.KindUnauthorized, Code: "unauthorized",
	Message: "missing or invalid bearer token"}

// retryAfterSeconds is what a 503 asks clients to wait: about one probe of
// the stores while one is down (healthEveryDown) plus a reconnect.
const retryAfterSeconds = "2"

// errorBody is the shape of every API error response.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Seats   []string `json:"seats,omitempty"` // seat_unavailable: the seats that were taken
	Field   string   `json:"field,omitempty"` // the request field at fault, e.g. "seats[3].category"
	Left    any      `json:"left,omitempty"`  // not_enough_seats: what is left per category
	// Detail: already_checked_in's first scan, not_valid's reason (core/checkin).
	Detail any `json:"detail,omitempty"`
}

// statusOf is the one place that turns an error into an HTTP status and body.
// Internal details never reach the client: a 500 says only "internal error"
// and the request log has the rest.
func statusOf(err error) (int, errorDetail) {
	// The client left: nobody reads the answer, and it is no server fault,
	// whichever store noticed first (a seat store reports it as an outage).
	if errors.Is(err, context.Canceled) {
		return statusClientClosed, errorDetail{Code: "client_closed_request", Message: "the client closed the request"}
	}
	var ce *core.Error
	if errors.As(err, &ce) && ce.Kind != core.KindInternal {
		return kindStatus(ce.Kind), errorDetail{Code: ce.Code, Message: ce.Message, Seats: ce.Seats, Field: ce.Field, Left: ce.Left, Detail: ce.Detail}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusRequestEntityTooLarge:
			return he.Code, errorDetail{Code: "body_too_large", Message: "request body is too large"}
		case http.StatusNotFound:
			return he.Code, errorDetail{Code: "not_found", Message: "no such route"}
		case http.StatusUnsupportedMediaType:
			return he.Code, errorDetail{Code: "unsupported_media_type", Message: "request body must be sent as Content-Type: application/json"}
		case http.StatusMethodNotAllowed:
			return he.Code, errorDetail{Code: "method_not_allowed", Message: "method not allowed on this route"}
		}
		if he.Code < http.StatusInternalServerError {
			return he.Code, errorDetail{Code: "invalid_request", Message: http.StatusText(he.Code)}
		}
	}
	// A store that does not answer within the request's deadline is an
	// outage, not a bug: tell the client to retry.
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusServiceUnavailable, errorDetail{Code: core.ErrStoreUnavailable.Code,
			Message: "a backing store did not answer in time"}
	}
	return http.StatusInternalServerError, errorDetail{Code: "internal", Message: "internal error"}
}

func kindStatus(k core.Kind) int {
	switch k {
	case core.KindInvalid:
		return http.StatusBadRequest
	case core.KindNotFound:
		return http.StatusNotFound
	case core.KindConflict:
		return http.StatusConflict
	case core.KindLimit:
		return http.StatusUnprocessableEntity
	case core.KindUnauthorized:
		return http.StatusUnauthorized
	case core.KindUnavailable:
		return http.StatusServiceUnavailable
	case core.KindForbidden:
		return http.StatusForbidden
	case core.KindRateLimited:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// handleError is echo's HTTPErrorHandler: every error a handler or
// middleware returns is written here, as JSON. (Console pages, when they
// come, will render their own error pages before returning.)
func handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, detail := statusOf(err)
	switch status {
	case http.StatusServiceUnavailable:
		// An outage or overload, not a refusal: clients and proxies may
		// retry shortly; overload says how soon.
		ra := retryAfterSeconds
		if errors.Is(err, errOverloaded) {
			ra = strconv.Itoa(retryAfter(err))
		}
		c.Response().Header().Set("Retry-After", ra)
	case http.StatusTooManyRequests:
		c.Response().Header().Set("Retry-After", strconv.Itoa(retryAfter(err)))
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSON(status, errorBody{Error: detail})
}

// retryAfter is a rate-limited or overloaded error's Retry-After in whole
// seconds, at least one.
func retryAfter(err error) int {
	var ce *core.Error
	if errors.As(err, &ce) && ce.RetryAfter > time.Second {
		return int((ce.RetryAfter + time.Second - 1) / time.Second)
	}
	return 1
}
