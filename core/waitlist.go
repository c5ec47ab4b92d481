// The waiting list (issue 33): buyers who missed a show wait in line, and
// the seats an ended hold lets go are handed to the next matching entry as
// a pending order of its own (handoff.go). This file holds the list itself:
// its settings, joining, reading an entry and withdrawing.

package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// WaitlistSettings is a show's waiting list as its manager set it.
type WaitlistSettings struct {
	ShowID  int64
	Enabled bool
	// JoinWhen: JoinWhenSoldOut takes joins only while no seat is on
	// sale, JoinWhenAlways at any time.
	JoinWhen  string
	OfferTTL  time.Duration // how long an offer's order holds its seats
	UpdatedAt time.Time
}

// When a show's list takes joins.
const (
	JoinWhenSoldOut = "sold_out"
	JoinWhenAlways  = "always"
)

// Offer hold bounds: DefaultOfferTTL unless the show sets another.
const (
	DefaultOfferTTL = 30 * time.Minute
	MinOfferTTL     = time.Minute
	MaxOfferTTL     = 48 * time.Hour
	MaxWaitCount    = 10 // seats one entry may wait for
)

// WaitState is an entry's state as the API shows it. The list stores
// waiting, offered and withdrawn; accepted and expired are what became of
// an offer's order (paid, or ended unpaid).
type WaitState string

const (
	WaitWaiting   WaitState = "waiting"
	WaitOffered   WaitState = "offered"
	WaitAccepted  WaitState = "accepted"
	WaitExpired   WaitState = "expired"
	WaitWithdrawn WaitState = "withdrawn"
)

// OrderSourceWaitlist is Order.Source of an offer's order.
const OrderSourceWaitlist = "waitlist"

// WaitEntry is one waiting_entry row.
type WaitEntry struct {
	ID       int64
	Token    string // the entry's public name
	ShowID   int64
	UserID   int64 // BoxOfficeUserID for a walk-in a clerk added
	Count    int
	Category string // "" for any
	Together bool
	Customer Customer
	AddedBy  string    // the key or clerk that added it
	State    WaitState // as stored: waiting, offered or withdrawn
	OrderNo  string    // the offer's order, once offered
	Created  time.Time
	Offered  time.Time
	Withdrew time.Time
}

// WaitEntryView is an entry as its holder reads it.
type WaitEntryView struct {
	Entry    WaitEntry
	State    WaitState
	Position int    // 1 for the next in line; 0 once it no longer waits
	Offer    *Order // the offer's order while offered, and after
}

// Waitlist errors.
var (
	ErrWaitlistClosed    = &Error{Kind: KindConflict, Code: "waitlist_closed", Message: "the show has no waiting list open"}
	ErrWaitlistNotSold   = &Error{Kind: KindConflict, Code: "waitlist_not_sold_out", Message: "the show still has seats on sale: buy them instead"}
	ErrWaitEntryNotFound = &Error{Kind: KindNotFound, Code: "waitlist_entry_not_found", Message: "waiting-list entry not found"}
)

// WaitlistStore is the list's reads and its writes outside an ending's
// transaction (core/store/waitlist.go).
type WaitlistStore interface {
	WaitlistSettings(ctx context.Context, showID int64) (WaitlistSettings, bool, error)
	PutWaitlistSettings(ctx context.Context, s WaitlistSettings) error
	// EnabledWaitlists lists the shows whose list is enabled: the
	// engine's cache of where a hand-off is worth a look.
	EnabledWaitlists(ctx context.Context) ([]int64, error)
	// InsertWaitEntry adds e, or returns the user's entry on the show
	// when there is one (created false).
	InsertWaitEntry(ctx context.Context, e WaitEntry) (WaitEntry, bool, error)
	WaitEntry(ctx context.Context, token string) (WaitEntry, error) // ErrWaitEntryNotFound
	UserWaitEntry(ctx context.Context, showID, userID int64) (WaitEntry, bool, error)
	// WaitPosition is how many waiting entries of the show are at or
	// before id.
	WaitPosition(ctx context.Context, showID, id int64) (int, error)
	// WaitEntries lists the show's entries in list order, at most limit.
	WaitEntries(ctx context.Context, showID int64, limit int) ([]WaitEntry, error)
	// WithdrawWaitEntry moves a waiting or offered entry to withdrawn; false
	// when it was withdrawn already.
	WithdrawWaitEntry(ctx context.Context, token string, at time.Time) (WaitEntry, bool, error)
}

// WaitlistTx is what an ending's transaction hands seats on with.
type WaitlistTx interface {
	// WaitingEntries returns the show's first limit waiting entries, in
	// list order, locked until the transaction ends, when the show's list
	// is enabled (its offer hold in ttl); none otherwise.
	WaitingEntries(ctx context.Context, showID int64, limit int) (ttl time.Duration, _ []WaitEntry, _ error)
	// OfferWaitEntries moves waiting entries (by id) to offered with their
	// orders, in one statement.
	OfferWaitEntries(ctx context.Context, offers map[int64]EntryOffer) error
	// BlockedSeats returns which of seatIDs are blocked: a blocked seat
	// an order lets go is blocked again, not handed on.
	BlockedSeats(ctx context.Context, showID int64, seatIDs []string) (map[string]bool, error)
	// EntriesOfOffers names the entry of each offer's order (by order number).
	EntriesOfOffers(ctx context.Context, orderNos []string) (map[string]string, error)
	// UnblockSeats deletes the seats' blocks and returns those of them no
	// order holds (a blocked seat may have been sold at the box office).
	UnblockSeats(ctx context.Context, showID int64, seatIDs []string) ([]string, error)
}

// EntryOffer is the order an entry is offered, and when.
type EntryOffer struct {
	OrderNo string
	At      time.Time
}

// WaitJoin asks for a place on a show's list.
type WaitJoin struct {
	ShowID   int64
	UserID   int64 // BoxOfficeUserID: a walk-in, which needs Customer.Name
	Count    int
	Category string
	Together bool
	Customer Customer
	AddedBy  string
}

// SetWaitlist stores a show's list settings.
func (e *Engine) SetWaitlist(ctx context.Context, s WaitlistSettings) (WaitlistSettings, error) {
	if _, err := e.store.Show(ctx, s.ShowID); err != nil {
		return WaitlistSettings{}, err
	}
	switch s.JoinWhen {
	case "":
		s.JoinWhen = JoinWhenSoldOut
	case JoinWhenSoldOut, JoinWhenAlways:
	default:
		return WaitlistSettings{}, fieldError(CodeInvalidRequest, "join_when", "%q, want sold_out or always", s.JoinWhen)
	}
	if s.OfferTTL == 0 {
		s.OfferTTL = DefaultOfferTTL
	}
	if s.OfferTTL < MinOfferTTL || s.OfferTTL > MaxOfferTTL {
		return WaitlistSettings{}, fieldError(CodeInvalidRequest, "offer_ttl_seconds", "%v, want %v to %v", s.OfferTTL, MinOfferTTL, MaxOfferTTL)
	}
	s.UpdatedAt = e.clock.Now()
	if err := e.store.PutWaitlistSettings(ctx, s); err != nil {
		return WaitlistSettings{}, fmt.Errorf("waitlist settings of show %d: %w", s.ShowID, err)
	}
	e.waitlists.forget()
	return s, nil
}

// Waitlist returns a show's list settings (disabled when never set).
func (e *Engine) Waitlist(ctx context.Context, showID int64) (WaitlistSettings, error) {
	if _, err := e.store.Show(ctx, showID); err != nil {
		return WaitlistSettings{}, err
	}
	s, ok, err := e.store.WaitlistSettings(ctx, showID)
	if err != nil || ok {
		return s, err
	}
	return WaitlistSettings{ShowID: showID, JoinWhen: JoinWhenSoldOut, OfferTTL: DefaultOfferTTL}, nil
}

// JoinWaitlist puts a user on a show's list, or returns the place the user
// has: one entry per user and show.
func (e *Engine) JoinWaitlist(ctx context.Context, j WaitJoin) (WaitEntryView, bool, error) {
	if j.UserID != BoxOfficeUserID {
		// Joining again returns the entry there is, whatever is asked.
		if entry, ok, err := e.store.UserWaitEntry(ctx, j.ShowID, j.UserID); err != nil || ok {
			if err != nil {
				return WaitEntryView{}, false, err
			}
			v, err := e.viewWaitEntry(ctx, entry)
			return v, false, err
		}
	}
	if err := e.checkWaitJoin(ctx, &j); err != nil {
		return WaitEntryView{}, false, err
	}
	now := e.clock.Now()
	entry, created, err := e.store.InsertWaitEntry(ctx, WaitEntry{Token: newWaitToken(), ShowID: j.ShowID,
		UserID: j.UserID, Count: j.Count, Category: j.Category, Together: j.Together, Customer: j.Customer,
		AddedBy: j.AddedBy, State: WaitWaiting, Created: now})
	if err != nil {
		return WaitEntryView{}, false, fmt.Errorf("join the waiting list of show %d: %w", j.ShowID, err)
	}
	if created {
		e.metrics.WaitlistJoins.Inc()
	}
	v, err := e.viewWaitEntry(ctx, entry)
	return v, created, err
}

// checkWaitJoin checks a join against the show's list and plan.
func (e *Engine) checkWaitJoin(ctx context.Context, j *WaitJoin) error {
	s, err := e.Waitlist(ctx, j.ShowID)
	if err != nil {
		return err
	}
	if !s.Enabled {
		return ErrWaitlistClosed
	}
	if limit := min(MaxWaitCount, e.cfg.MaxSeatsPerOrder); j.Count < 1 || j.Count > limit {
		return fieldError(CodeInvalidRequest, "count", "%d, want 1 to %d", j.Count, limit)
	}
	if e.cfg.PurchaseLimit > 0 && j.UserID != BoxOfficeUserID && j.Count > e.cfg.PurchaseLimit {
		return fieldError(CodeInvalidRequest, "count", "%d is over the purchase limit of %d", j.Count, e.cfg.PurchaseLimit)
	}
	if j.Customer, err = j.Customer.Normalize(); err != nil {
		return err
	}
	if j.UserID == BoxOfficeUserID && j.Customer.Name == "" {
		return fieldError(CodeInvalidRequest, "customer.name", "a walk-in needs a name")
	}
	p, err := e.plans.get(ctx, e.store, j.ShowID)
	if err != nil {
		return err
	}
	if err := checkBestFits(p.index, j.ShowID, j.Category, j.Count, j.Together); err != nil {
		return err
	}
	if s.JoinWhen == JoinWhenSoldOut {
		a, err := e.Availability(ctx, j.ShowID)
		if err != nil {
			return err
		}
		if len(a.Taken) < a.Seats {
			return ErrWaitlistNotSold
		}
	}
	return nil
}

// WaitEntry reads an entry as its holder sees it: its state, its place in
// line and, once offered, the offer.
func (e *Engine) WaitEntry(ctx context.Context, token string) (WaitEntryView, error) {
	entry, err := e.store.WaitEntry(ctx, token)
	if err != nil {
		return WaitEntryView{}, err
	}
	return e.viewWaitEntry(ctx, entry)
}

func (e *Engine) viewWaitEntry(ctx context.Context, entry WaitEntry) (WaitEntryView, error) {
	v := WaitEntryView{Entry: entry, State: entry.State}
	if entry.State == WaitWaiting {
		n, err := e.store.WaitPosition(ctx, entry.ShowID, entry.ID)
		if err != nil {
			return WaitEntryView{}, fmt.Errorf("waiting-list position: %w", err)
		}
		v.Position = n
		return v, nil
	}
	if entry.OrderNo == "" {
		return v, nil
	}
	o, err := e.store.Order(ctx, entry.OrderNo)
	if err != nil {
		return WaitEntryView{}, fmt.Errorf("waiting-list offer: %w", err)
	}
	v.withOffer(o)
	return v, nil
}

// withOffer sets the offer's order on v and the state it gives the entry:
// a paid offer stays accepted, withdrawn or not.
func (v *WaitEntryView) withOffer(o Order) {
	v.Offer = &o
	if st := offerState(o); v.Entry.State == WaitOffered || st == WaitAccepted {
		v.State = st
	}
}

// offerState is what became of an offer: its order's status.
func offerState(o Order) WaitState {
	switch o.Status {
	case StatusPaid, StatusRefunded:
		return WaitAccepted
	case StatusCancelled:
		return WaitExpired
	}
	return WaitOffered
}

// WithdrawWaitEntry takes an entry off the list. An offer still pending
// is cancelled as its customer would (and its seats go to the next entry);
// a paid one stays paid. Withdrawing twice is a success.
func (e *Engine) WithdrawWaitEntry(ctx context.Context, token, actor string) (WaitEntryView, error) {
	entry, changed, err := e.store.WithdrawWaitEntry(ctx, token, e.clock.Now())
	if err != nil {
		return WaitEntryView{}, err
	}
	// The entry is withdrawn first, in its own write, so no hand-off can
	// offer it anything from here on; an offer still pending is then ended
	// apart, in the one cancel path.
	v, err := e.viewWaitEntry(ctx, entry)
	if err != nil || !changed || v.Offer == nil || v.Offer.Status != StatusPending {
		return v, err
	}
	if _, err := e.CancelAndRelease(ctx, CancelRequest{OrderNo: entry.OrderNo, Reason: ReasonCustomer, Actor: actor}); err != nil {
		return WaitEntryView{}, err
	}
	return e.viewWaitEntry(ctx, entry)
}

// WaitEntries lists a show's entries in list order for the console.
func (e *Engine) WaitEntries(ctx context.Context, showID int64, limit int) ([]WaitEntryView, error) {
	entries, err := e.store.WaitEntries(ctx, showID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]WaitEntryView, 0, len(entries))
	pos := 0
	for _, en := range entries {
		v := WaitEntryView{Entry: en, State: en.State}
		if en.State == WaitWaiting {
			pos++
			v.Position = pos
		} else if en.OrderNo != "" {
			o, err := e.store.Order(ctx, en.OrderNo)
			if err != nil {
				return nil, err
			}
			v.withOffer(o)
		}
		out = append(out, v)
	}
	return out, nil
}

// newWaitToken names an entry publicly: unguessable, like an order number.
func newWaitToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "wl_" + hex.EncodeToString(b[:])
}
