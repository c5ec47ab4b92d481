package core

import (
	"context"
	"fmt"
	"slices"
)

// A show's prices change like its plan: only before its first order
// (ErrShowOnSale after) or its cancellation, in one transaction that also
// bumps plan_version, so a placement priced from the plan it had cached
// finds the plan changed and prices again (Place).

// PriceChange is a category's new price.
type PriceChange struct {
	Code       string
	PriceCents int64
}

// Reprice sets new prices for some of a show's categories and their
// seats; the others keep theirs.
func (e *Engine) Reprice(ctx context.Context, showID int64, changes []PriceChange) (Show, error) {
	if len(changes) == 0 {
		return Show{}, Invalidf("give at least one category's price")
	}
	prices := make(map[string]int64, len(changes))
	for i, c := range changes {
		f := fmt.Sprintf("prices[%d]", i)
		if err := checkPrice(f+".price_cents", c.PriceCents); err != nil {
			return Show{}, err
		}
		if _, dup := prices[c.Code]; dup {
			return Show{}, fieldError(CodeInvalidPlan, f+".code", "category %q is listed twice", c.Code)
		}
		prices[c.Code] = c.PriceCents
	}
	cats, err := e.store.PriceCategories(ctx, showID)
	if err != nil {
		return Show{}, err
	}
	for code := range prices {
		if !slices.ContainsFunc(cats, func(c PriceCategory) bool { return c.Code == code }) {
			return Show{}, fieldError(CodeUnknownCategory, "prices", "%q is not a category of show %d", code, showID)
		}
	}
	show, err := e.store.Reprice(ctx, showID, prices)
	if err != nil {
		return Show{}, err
	}
	// Committed: this instance forgets the old prices now; others find
	// out from plan_version when they next place an order.
	e.plans.forget(showID)
	return show, nil
}

// checkPrice bounds a category's price, in a plan as in a repricing.
func checkPrice(field string, cents int64) error {
	switch {
	case cents < 0:
		return fieldError(CodeInvalidPrice, field, "%d is negative", cents)
	case cents > maxPriceCents:
		return fieldError(CodeInvalidPrice, field, "%d is above %d", cents, int64(maxPriceCents))
	}
	return nil
}
