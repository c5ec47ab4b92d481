package core

import (
	"context"
	"time"
)

// ExtendForCustomer is Extend through the API, which must name the order's
// user like Cancel does: another user's order (or a counter sale) is "not
// found", so a caller cannot extend, nor probe, orders that are not its
// user's. Checking before Extend's transaction is safe: an order's user
// never changes.
func (e *Engine) ExtendForCustomer(ctx context.Context, orderNo string, userID int64, by time.Duration, actor, reason string) (Order, error) {
	o, err := e.store.Order(ctx, orderNo)
	if err != nil {
		return Order{}, err
	}
	if o.UserID != userID || userID == BoxOfficeUserID {
		return Order{}, ErrOrderNotFound
	}
	return e.Extend(ctx, orderNo, by, actor, reason, nil)
}
