package core

import "context"

// BestRulesStore is the part of the Store that changes a show's
// best-available rules after it is created.
type BestRulesStore interface {
	// SetBestRules replaces the show's rules and moves its plan_version
	// on, in one transaction that locks the show row: every instance's
	// cached plan and seat index then turns stale (Tx.CheckShowSale).
	// ErrShowNotFound, ErrShowCancelled.
	SetBestRules(ctx context.Context, showID int64, r BestRules) (Show, error)
}

// SetBestRules changes a show's best-available rules (focal point, allow
// singles), on sale or not. The next choice on any instance uses them:
// this one forgets its cached plan now; another finds plan_version moved
// when it next places an order and reloads the plan, whose seat index
// carries a new tag when the scores changed, so the seat store's copy is
// rewritten (seats.Store.ChooseAndLock).
func (e *Engine) SetBestRules(ctx context.Context, showID int64, r BestRules) (Show, error) {
	if err := checkBestRules("", r); err != nil {
		return Show{}, err
	}
	show, err := e.store.SetBestRules(ctx, showID, r)
	if err != nil {
		return Show{}, err
	}
	e.plans.forget(showID)
	return show, nil
}

// BestRules returns the show whose best-available rules (Show.Best) and
// plan version the caller wants: the rules SetBestRules last set.
// ErrShowNotFound.
func (e *Engine) BestRules(ctx context.Context, showID int64) (Show, error) {
	return e.store.Show(ctx, showID)
}

// checkBestRules bounds the rules; prefix leads the field name at fault.
func checkBestRules(prefix string, r BestRules) error {
	if r.FocalSet && (r.FocalX < 0 || r.FocalY < 0 || r.FocalX > maxCoordinate || r.FocalY > maxCoordinate) {
		return fieldError(CodeInvalidShow, prefix+"focal", "x and y must be from 0 to %d", maxCoordinate)
	}
	return nil
}
