package core

import (
	"context"
	"time"
)

// ExtendForCustomer is Extend through the API, which must name the order's
// user like Cancel does (customerOrder). Checking before Extend's
// transaction is safe: an order's user never changes.
func (e *Engine) ExtendForCustomer(ctx context.Context, orderNo string, userID int64, by time.Duration, actor, reason string) (Order, error) {
	if _, err := e.customerOrder(ctx, orderNo, userID); err != nil {
		return Order{}, err
	}
	return e.Extend(ctx, orderNo, by, actor, reason, nil)
}
