package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

func TestStatusOf(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"invalid", core.Invalidf("user_id must be a positive integer"), 400, "invalid_request"},
		{"show not found", core.ErrShowNotFound, 404, "show_not_found"},
		{"order not found, wrapped", fmt.Errorf("cancel: %w", core.ErrOrderNotFound), 404, "order_not_found"},
		{"seats taken", core.SeatsUnavailable([]string{"A-1"}), 409, "seat_unavailable"},
		{"limit", core.ErrPurchaseLimit, 422, "purchase_limit"},
		{"not pending", core.ErrOrderNotPending, 409, "order_not_pending"},
		{"amount mismatch", core.ErrAmountMismatch, 409, "amount_mismatch"},
		{"unauthorized", errUnauthorized, 401, "unauthorized"},
		{"bad signature", badSignature("x"), 401, "bad_signature"},
		{"store down", fmt.Errorf("place: %w", core.ErrStoreUnavailable), 503, "store_unavailable"},
		{"store too slow", fmt.Errorf("load order: %w", context.DeadlineExceeded), 503, "store_unavailable"},
		{"body too large", echo.ErrStatusRequestEntityTooLarge, 413, "body_too_large"},
		{"no route", echo.ErrNotFound, 404, "not_found"},
		{"wrong method", echo.ErrMethodNotAllowed, 405, "method_not_allowed"},
		{"unsupported media type", echo.ErrUnsupportedMediaType, 415, "unsupported_media_type"},
		{"other echo 4xx", echo.ErrTooManyRequests, 429, "invalid_request"},
		{"plain error", errors.New("disk on fire"), 500, "internal"},
		{"internal kind", &core.Error{Kind: core.KindInternal, Code: "oops", Message: "secret detail"}, 500, "internal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, d := statusOf(tc.err)
			if status != tc.status || d.Code != tc.code || d.Message == "" {
				t.Errorf("statusOf = %d %+v, want %d %s", status, d, tc.status, tc.code)
			}
			if status == http.StatusInternalServerError && d.Message != "internal error" {
				t.Errorf("500 message %q leaks details", d.Message)
			}
		})
	}
	if _, d := statusOf(core.SeatsUnavailable([]string{"A-1", "B-2"})); fmt.Sprint(d.Seats) != "[A-1 B-2]" {
		t.Errorf("seats %v", d.Seats)
	}
}
