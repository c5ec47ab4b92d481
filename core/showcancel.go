package core

import (
	"context"
	"fmt"
)

// CancelShowPlan is what cancelling a show would do now, for staff to
// confirm: the pending orders whose holds would end, the paid orders that
// would be listed for refund.
type CancelShowPlan struct {
	Show    Show
	Pending []Order
	Paid    []Order
}

// PlanCancelShow reads what CancelShow would do, writing nothing. Orders
// placed after it is read are ended or listed by CancelShow all the same.
func (e *Engine) PlanCancelShow(ctx context.Context, showID int64) (CancelShowPlan, error) {
	var p CancelShowPlan
	var err error
	if p.Show, err = e.store.Show(ctx, showID); err != nil {
		return CancelShowPlan{}, err
	}
	if p.Pending, err = e.store.OrdersOfShow(ctx, showID, StatusPending); err != nil {
		return CancelShowPlan{}, fmt.Errorf("pending orders of show %d: %w", showID, err)
	}
	if p.Paid, err = e.store.OrdersOfShow(ctx, showID, StatusPaid); err != nil {
		return CancelShowPlan{}, fmt.Errorf("paid orders of show %d: %w", showID, err)
	}
	return p, nil
}
