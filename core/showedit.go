package core

import (
	"context"
	"time"
)

// ShowEdit is what of a show may change after it is set up, while no
// order exists (the show_on_sale rule of ReplacePlan): its name, venue,
// start and end of sales. A zero SalesEnd sells until the start.
type ShowEdit struct {
	Name     string
	Venue    string
	StartsAt time.Time
	SalesEnd time.Time
}

// ShowPatch is an edit as the API takes it: a nil field keeps the value
// the show has; SalesEnd set to the zero time clears it.
type ShowPatch struct {
	Name, Venue        *string
	StartsAt, SalesEnd *time.Time
}

// ShowEditStore is the part of the Store that edits a show's details.
type ShowEditStore interface {
	// EditShow locks the show row, refuses with ErrShowCancelled or, once
	// an order exists, ErrShowOnSale, then stores what edit makes of the
	// locked row, in one transaction: two edits of different fields never
	// undo each other. An error from edit writes nothing.
	EditShow(ctx context.Context, showID int64, edit func(Show) (ShowEdit, error)) (Show, error)
}

// EditShow applies p to the show, checked as CreateShow checks a new one.
// Sales end is read by every placement inside its transaction
// (Tx.CheckShowSale), so a new window holds from the commit on.
func (e *Engine) EditShow(ctx context.Context, showID int64, p ShowPatch) (Show, error) {
	return e.store.EditShow(ctx, showID, func(cur Show) (ShowEdit, error) {
		ed := ShowEdit{Name: cur.Name, Venue: cur.Venue, StartsAt: cur.StartsAt, SalesEnd: cur.SalesEnd}
		if p.Name != nil {
			ed.Name = *p.Name
		}
		if p.Venue != nil {
			ed.Venue = *p.Venue
		}
		if p.StartsAt != nil {
			ed.StartsAt = *p.StartsAt
		}
		if p.SalesEnd != nil {
			ed.SalesEnd = *p.SalesEnd
		}
		return ed, validateShowDetails(ed)
	})
}
