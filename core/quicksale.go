package core

import (
	"context"
	"errors"
)

// A quick sale is N tickets sold in one step at the window, for a queue of
// walk-ins who ask for "two in the stalls": the best seats by the show's
// rules (PreviewBest) held at the counter (Hold) and paid (TakePayment),
// the same paths as the clerk's three steps.

// QuickSale asks for Count seats of Category (any when "") paid with
// Tender by Clerk.
type QuickSale struct {
	ShowID    int64
	Count     int
	Category  string
	Together  bool
	Customer  Customer // optional: a walk-in gives none
	Tender    Tender
	Reference string
	Clerk     string
}

// quickSaleAttempts bounds how often a quick sale chooses again when a
// seat it chose was taken before its hold (another sale in between).
const quickSaleAttempts = 3

// QuickSale sells q in one step: the paid order and the payment's result.
// The payment and the shift are checked before anything is held; a hold
// whose payment then fails is cancelled by the clerk (a staff cancel), so
// its seats go back on sale at once rather than when the hold times out.
func (c *Counter) QuickSale(ctx context.Context, q QuickSale) (Order, PaymentResult, error) {
	pay := CounterPayment{Tender: q.Tender, Reference: q.Reference, Clerk: q.Clerk}
	if err := checkCounterPayment(&pay); err != nil {
		return Order{}, "", err
	}
	if err := c.checkShift(ctx, q.Clerk, q.ShowID); err != nil {
		return Order{}, "", err
	}
	o, err := c.holdBest(ctx, q)
	if err != nil {
		return Order{}, "", err
	}
	pay.OrderNo = o.OrderNo
	res, paid, err := c.TakePayment(ctx, pay)
	if err != nil {
		_, cerr := c.e.CancelAndRelease(ctx, CancelRequest{OrderNo: o.OrderNo, Reason: ReasonStaff,
			Actor: ActorStaffPrefix + q.Clerk, Note: "quick sale: the payment was not recorded"})
		return o, "", errors.Join(err, cerr)
	}
	return paid, res, nil
}

// holdBest holds the best seats for q at the counter, choosing again when
// one it chose is taken before the hold.
func (c *Counter) holdBest(ctx context.Context, q QuickSale) (Order, error) {
	for attempt := 1; ; attempt++ {
		choice, err := c.e.PreviewBest(ctx, BestPreview{ShowID: q.ShowID, Count: q.Count, Category: q.Category, Together: q.Together})
		if err != nil {
			return Order{}, err
		}
		o, err := c.Hold(ctx, CounterHold{ShowID: q.ShowID, SeatIDs: choice.SeatIDs, Customer: q.Customer})
		if err == nil || !errors.Is(err, ErrSeatUnavailable) || attempt == quickSaleAttempts {
			return o, err
		}
	}
}
