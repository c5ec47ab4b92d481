package core

import (
	"context"
	"fmt"
	"slices"
)

// markSold is the seat store's part of a payment that won: MarkSold, sent
// once more when its reply is lost (selling the seats to the same order
// again changes nothing, sell.lua). sell.lua overwrites whatever a seat
// holds, as the DB says it is sold; so a refund that committed after the
// payment and released its seats before this step would leave them sold
// in the seat store and free in the DB. The order is read back after the
// step, and the seats it no longer has (all of them once it is no longer
// paid: a whole refund keeps the order's seat list) are released as the
// refund did (ReleaseSold: only while sold to this order). A refund whose
// release comes after this step needs nothing more.
func (e *Engine) markSold(ctx context.Context, o Order) error {
	err := e.seats.MarkSold(ctx, o.ShowID, o.UserID, o.OrderNo, o.SeatIDs)
	if err != nil && replyLost(err) {
		e.log.WarnContext(ctx, "marking seats sold: no reply, sending it again", "order_no", o.OrderNo, "err", err)
		err = e.seats.MarkSold(ctx, o.ShowID, o.UserID, o.OrderNo, o.SeatIDs)
	}
	if err != nil {
		return err
	}
	now, err := e.store.Order(ctx, o.OrderNo)
	if err != nil {
		return fmt.Errorf("read order %s back after marking its seats sold: %w", o.OrderNo, err)
	}
	var gone []string
	for _, id := range o.SeatIDs {
		if now.Status != StatusPaid || !slices.Contains(now.SeatIDs, id) {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	e.log.InfoContext(ctx, "seats refunded while the payment marked them sold: released again", "order_no", o.OrderNo, "seat_ids", gone)
	if _, err := e.seats.ReleaseSold(ctx, o.ShowID, o.OrderNo, gone); err != nil {
		return fmt.Errorf("release seats refunded meanwhile: %w", err)
	}
	return nil
}

// sell is markSold strictly after a commit that sold o's seats (a payment,
// an exchange's new seats), with its event; a failure is logged as failed
// and left to reconcile, as the sale is committed.
func (e *Engine) sell(ctx context.Context, o Order, failed string) {
	if err := e.markSold(ctx, o); err != nil {
		e.metrics.SeatStoreFailure.WithLabelValues("sell").Inc()
		e.log.ErrorContext(ctx, failed, "order_no", o.OrderNo, "seat_ids", o.SeatIDs, "err", err)
		e.addEvent(ctx, Event{OrderNo: o.OrderNo, At: e.clock.Now(), Kind: EventSeatSellFailed,
			Detail: map[string]any{"seat_ids": o.SeatIDs, "error": err.Error()}})
		return
	}
	e.addEvent(ctx, Event{OrderNo: o.OrderNo, At: e.clock.Now(), Kind: EventSeatsSold,
		Detail: map[string]any{"seat_ids": o.SeatIDs}})
	e.notify.SeatsChanged(o.ShowID, o.SeatIDs, SeatSold, o.OrderNo)
}
