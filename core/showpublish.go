package core

import "context"

// ErrShowDraft refuses orders on a show set up as a draft, until it is
// published.
var ErrShowDraft = &Error{Kind: KindConflict, Code: "show_not_on_sale", Message: "the show is a draft: not on sale until it is published"}

// ShowPublishStore is the part of the Store that puts a draft on sale.
type ShowPublishStore interface {
	// PublishShow moves the show draft → on sale in one conditional
	// update: false when it already was on sale; ErrShowCancelled,
	// ErrShowNotFound.
	PublishShow(ctx context.Context, showID int64) (bool, error)
}

// PublishShow puts a draft show on sale: placements read its status in
// their transaction (Tx.CheckShowSale), so the first order may come the
// moment it commits. Publishing a show on sale changes nothing.
func (e *Engine) PublishShow(ctx context.Context, showID int64) (Show, error) {
	if _, err := e.store.PublishShow(ctx, showID); err != nil {
		return Show{}, err
	}
	return e.store.Show(ctx, showID)
}
