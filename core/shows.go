package core

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"seatflow/core/text"
)

// ShowStatus says whether a show still sells seats.
type ShowStatus int

const (
	ShowOnSale    ShowStatus = 0
	ShowCancelled ShowStatus = 1
	ShowDraft     ShowStatus = 2 // set up, not on sale until published (showpublish.go)
)

func (s ShowStatus) String() string {
	switch s {
	case ShowOnSale:
		return "on_sale"
	case ShowCancelled:
		return "cancelled"
	case ShowDraft:
		return "draft"
	}
	return "unknown"
}

// Plan limits.
const (
	MaxShowSeats       = 20_000
	MaxPriceCategories = 100
	maxNameLen         = 200
	maxSectionLen      = 64
	maxCoordinate      = 1_000_000
	maxPriceCents      = 100_000_000_00 // 100 million in the currency's main unit
)

// Block reasons.
const (
	BlockHouse      = "house"
	BlockWheelchair = "wheelchair"
	BlockTechnical  = "technical"
	BlockOther      = "other"
)

// ValidBlockReason reports whether r is one of the block reasons.
func ValidBlockReason(r string) bool {
	return r == BlockHouse || r == BlockWheelchair || r == BlockTechnical || r == BlockOther
}

// ReasonShowCancelled ends the pending orders of a cancelled show.
const ReasonShowCancelled = "show_cancelled"

// Show errors.
var (
	ErrShowOnSale    = &Error{Kind: KindConflict, Code: "show_on_sale", Message: "the show has orders: its plan and prices are fixed"}
	ErrShowCancelled = &Error{Kind: KindConflict, Code: "show_cancelled", Message: "the show is cancelled"}
	ErrSalesEnded    = &Error{Kind: KindConflict, Code: "sales_ended", Message: "sales for the show have ended"}
	// ErrPlanChanged: the plan changed between reading it and placing the
	// order; Place reloads it and tries once more.
	ErrPlanChanged = &Error{Kind: KindConflict, Code: "plan_changed", Message: "the seat plan changed; try again"}
)

// Codes of the errors a bad plan gets; each names the field at fault.
const (
	CodeInvalidShow     = "invalid_show"
	CodeInvalidPlan     = "invalid_plan"
	CodeInvalidCurrency = "invalid_currency"
	CodeInvalidPrice    = "invalid_price"
	CodeUnknownCategory = "unknown_category"
	CodeDuplicateSeat   = "duplicate_seat"
	CodeTooManySeats    = "too_many_seats"
)

func fieldError(code, field, format string, args ...any) error {
	return &Error{Kind: KindInvalid, Code: code, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// PriceCategory is one price of a show's plan; every seat has one.
type PriceCategory struct {
	Code       string
	Name       string
	PriceCents int64
}

// SeatSpec is one seat of a plan as its creator gives it. An empty SeatID
// becomes "ROW-NUMBER", as in a grid.
type SeatSpec struct {
	SeatID   string
	Section  string
	Row      string
	Number   int
	Category string
	X, Y     int
	// Best available (bestseats.go): wheelchair, companion or "", the
	// seat's rank (0 for none, else 1 to MaxSeatRank; lower is better), and
	// whether the next seat of the row is across an aisle.
	Accessible string
	Rank       int
	AisleAfter bool
}

// MaxSeatRank bounds a plan's seat rank.
const MaxSeatRank = 1_000_000

// GridSpec is the shortcut for a plain rectangular hall: rows A, B, … of
// SeatsPerRow seats numbered from 1, all in one category.
type GridSpec struct {
	Rows        int
	SeatsPerRow int
	// Category prices every row, unless RowCategories gives each row
	// its own: ranges that cover every row once.
	Category      string
	RowCategories []RowCategory
}

// RowCategory prices rows From to To (1-based, inclusive) of a grid.
type RowCategory struct {
	Category string
	From, To int
}

// PlanSpec is a show's prices and seats: Seats or Grid, not both.
type PlanSpec struct {
	Categories []PriceCategory
	Seats      []SeatSpec
	Grid       *GridSpec
}

// NewShow is a show to set up.
type NewShow struct {
	Name     string
	Venue    string
	StartsAt time.Time
	SalesEnd time.Time // zero: until the show starts
	Currency string
	Plan     PlanSpec
	Best     BestRules
	Draft    bool // not on sale until PublishShow
}

// SeatBlock is one blocked seat: not for sale to the public.
type SeatBlock struct {
	SeatID    string
	Reason    string
	BlockedAt time.Time
}

// SeatCounts is a show's seats by state, from the DB (the truth). A
// blocked seat that is held or sold counts as held or sold.
type SeatCounts struct {
	Available, Locked, Sold, Blocked int
}

// ShowSummary is a show with its seat counts and takings.
type ShowSummary struct {
	Show
	Counts       SeatCounts
	RevenueCents int64 // paid orders
}

// ShowStore is the part of the Store that sets shows up. Each write is one
// transaction owned by one method.
type ShowStore interface {
	// CreateShowPlan inserts the show, its categories and seats in one
	// transaction (seats in multi-row INSERTs).
	CreateShowPlan(ctx context.Context, show Show, cats []PriceCategory, seats []Seat) (Show, error)
	// ReplacePlan swaps the plan of a show that has no order yet, in one
	// transaction that locks the show row: ErrShowOnSale once an order
	// exists, ErrShowCancelled. Blocks of seats that left the plan go.
	ReplacePlan(ctx context.Context, showID int64, cats []PriceCategory, seats []Seat) (Show, error)
	// Reprice sets the price of the categories in prices (code → cents)
	// and of their seats, under the same lock and rule as ReplacePlan, and
	// bumps plan_version.
	Reprice(ctx context.Context, showID int64, prices map[string]int64) (Show, error)
	// CancelShow moves the show on sale (or a draft) → cancelled; false
	// when it already was.
	CancelShow(ctx context.Context, showID int64, at time.Time) (bool, error)
	PriceCategories(ctx context.Context, showID int64) ([]PriceCategory, error)
	// ShowCounts returns, per show (every show when showID is 0), its held,
	// sold and blocked seats (Available left 0) and its paid revenue.
	ShowCounts(ctx context.Context, showID int64) (map[int64]ShowSummary, error)
	// BlockSeats records blocks in one transaction, refusing with
	// SeatsUnavailable the seats that have an order_seat row.
	BlockSeats(ctx context.Context, showID int64, seatIDs []string, reason string, at time.Time) error
	Blocks(ctx context.Context, showID int64) ([]SeatBlock, error)
	// OrdersOfShow lists the show's orders in one status, oldest first.
	OrdersOfShow(ctx context.Context, showID int64, status OrderStatus) ([]Order, error)
}

var categoryCodePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,16}$`)

// BuildPlan checks a plan and turns it into the seats to store, each priced
// by its category. Errors name the field at fault ("seats[12].category").
func BuildPlan(p PlanSpec) ([]PriceCategory, []Seat, error) {
	if len(p.Categories) == 0 {
		return nil, nil, fieldError(CodeInvalidPlan, "price_categories", "at least one price category is required")
	}
	if len(p.Categories) > MaxPriceCategories {
		return nil, nil, fieldError(CodeInvalidPlan, "price_categories", "at most %d price categories", MaxPriceCategories)
	}
	prices := make(map[string]int64, len(p.Categories))
	for i, c := range p.Categories {
		f := fmt.Sprintf("price_categories[%d]", i)
		if _, err := text.Check(f+".name", c.Name, text.OneLine); err != nil {
			return nil, nil, err
		}
		switch {
		case !categoryCodePattern.MatchString(c.Code):
			return nil, nil, fieldError(CodeInvalidPlan, f+".code", "%q: use 1-16 letters, digits, '_' or '-'", c.Code)
		case c.Name == "" || utf8.RuneCountInString(c.Name) > 100:
			return nil, nil, fieldError(CodeInvalidPlan, f+".name", "1 to 100 characters")
		}
		if err := checkPrice(f+".price_cents", c.PriceCents); err != nil {
			return nil, nil, err
		}
		if _, dup := prices[c.Code]; dup {
			return nil, nil, fieldError(CodeInvalidPlan, f+".code", "category %q is listed twice", c.Code)
		}
		prices[c.Code] = c.PriceCents
	}
	switch {
	case p.Grid != nil && len(p.Seats) > 0:
		return nil, nil, fieldError(CodeInvalidPlan, "seats", "give seats or grid, not both")
	case p.Grid != nil:
		seats, err := gridSeats(*p.Grid, prices)
		return p.Categories, seats, err
	case len(p.Seats) == 0:
		return nil, nil, fieldError(CodeInvalidPlan, "seats", "give seats or grid")
	}
	seats, err := listSeats(p.Seats, prices)
	return p.Categories, seats, err
}

func gridSeats(g GridSpec, prices map[string]int64) ([]Seat, error) {
	switch {
	case g.Rows < 1:
		return nil, fieldError(CodeInvalidPlan, "grid.rows", "must be at least 1")
	case g.SeatsPerRow < 1:
		return nil, fieldError(CodeInvalidPlan, "grid.seats_per_row", "must be at least 1")
	case g.Rows > MaxShowSeats || g.SeatsPerRow > MaxShowSeats || g.Rows*g.SeatsPerRow > MaxShowSeats:
		return nil, fieldError(CodeTooManySeats, "grid", "%d×%d seats, at most %d", g.Rows, g.SeatsPerRow, MaxShowSeats)
	}
	rowCats, err := gridRowCategories(g, prices)
	if err != nil {
		return nil, err
	}
	seats := make([]Seat, 0, g.Rows*g.SeatsPerRow)
	for r := 1; r <= g.Rows; r++ {
		label, cat := RowName(r), rowCats[r-1]
		for n := 1; n <= g.SeatsPerRow; n++ {
			seats = append(seats, Seat{SeatID: label + "-" + strconv.Itoa(n), Row: r, Col: n, PriceCents: prices[cat],
				RowLabel: label, Number: n, Category: cat, X: n, Y: r})
		}
	}
	return seats, nil
}

// gridRowCategories is each row's category: the grid's one, or its row
// ranges, which must name known categories and cover every row once.
func gridRowCategories(g GridSpec, prices map[string]int64) ([]string, error) {
	cats := make([]string, g.Rows)
	if len(g.RowCategories) == 0 {
		if _, ok := prices[g.Category]; !ok {
			return nil, fieldError(CodeUnknownCategory, "grid.category", "%q is not a price category", g.Category)
		}
		for i := range cats {
			cats[i] = g.Category
		}
		return cats, nil
	}
	if g.Category != "" {
		return nil, fieldError(CodeInvalidPlan, "grid.category", "give category or row_categories, not both")
	}
	for i, rc := range g.RowCategories {
		f := fmt.Sprintf("grid.row_categories[%d]", i)
		if _, ok := prices[rc.Category]; !ok {
			return nil, fieldError(CodeUnknownCategory, f+".category", "%q is not a price category", rc.Category)
		}
		if rc.From < 1 || rc.To < rc.From || rc.To > g.Rows {
			return nil, fieldError(CodeInvalidPlan, f, "rows %d-%d: want 1 <= from <= to <= %d", rc.From, rc.To, g.Rows)
		}
		for r := rc.From; r <= rc.To; r++ {
			if cats[r-1] != "" {
				return nil, fieldError(CodeInvalidPlan, f, "row %d is also in category %q", r, cats[r-1])
			}
			cats[r-1] = rc.Category
		}
	}
	for r, c := range cats {
		if c == "" {
			return nil, fieldError(CodeInvalidPlan, "grid.row_categories", "row %d (%s) has no category", r+1, RowName(r+1))
		}
	}
	return cats, nil
}

func listSeats(specs []SeatSpec, prices map[string]int64) ([]Seat, error) {
	if len(specs) > MaxShowSeats {
		return nil, fieldError(CodeTooManySeats, "seats", "%d seats, at most %d", len(specs), MaxShowSeats)
	}
	type rowKey struct{ section, row string }
	rowNo := make(map[rowKey]int)
	index := make(map[string]int, len(specs))
	seats := make([]Seat, 0, len(specs))
	for i, s := range specs {
		f := fmt.Sprintf("seats[%d]", i)
		id := s.SeatID
		if id == "" {
			id = s.Row + "-" + strconv.Itoa(s.Number)
		}
		// A row label with a CR would end the seat map's event-stream line.
		for _, t := range [...]struct{ field, text string }{{f + ".section", s.Section}, {f + ".row", s.Row}} {
			if _, err := text.Check(t.field, t.text, text.OneLine); err != nil {
				return nil, err
			}
		}
		switch {
		case s.Row == "" || utf8.RuneCountInString(s.Row) > 16:
			return nil, fieldError(CodeInvalidPlan, f+".row", "1 to 16 characters")
		case s.Number < 1:
			return nil, fieldError(CodeInvalidPlan, f+".number", "must be at least 1")
		case utf8.RuneCountInString(s.Section) > maxSectionLen:
			return nil, fieldError(CodeInvalidPlan, f+".section", "at most %d characters", maxSectionLen)
		case !seatIDPattern.MatchString(id):
			return nil, fieldError(CodeInvalidPlan, f+".seat_id", "%q: use 1-16 letters, digits or '-', starting with a letter or digit", id)
		case s.X < 0 || s.Y < 0 || s.X > maxCoordinate || s.Y > maxCoordinate:
			return nil, fieldError(CodeInvalidPlan, f+".x", "x and y must be from 0 to %d", maxCoordinate)
		case !ValidAccessible(s.Accessible):
			return nil, fieldError(CodeInvalidPlan, f+".accessible", "%q is not one of wheelchair, companion", s.Accessible)
		case s.Rank < 0 || s.Rank > MaxSeatRank:
			return nil, fieldError(CodeInvalidPlan, f+".rank", "must be from 0 (none) to %d", MaxSeatRank)
		}
		price, ok := prices[s.Category]
		if !ok {
			return nil, fieldError(CodeUnknownCategory, f+".category", "%q is not a price category", s.Category)
		}
		if first, dup := index[id]; dup {
			return nil, fieldError(CodeDuplicateSeat, f+".seat_id", "%q is also seats[%d]", id, first)
		}
		index[id] = i
		k := rowKey{s.Section, s.Row}
		if rowNo[k] == 0 {
			rowNo[k] = len(rowNo) + 1
		}
		seats = append(seats, Seat{SeatID: id, Row: rowNo[k], Col: s.Number, PriceCents: price,
			Section: s.Section, RowLabel: s.Row, Number: s.Number, Category: s.Category, X: s.X, Y: s.Y,
			Accessible: s.Accessible, Rank: s.Rank, AisleAfter: s.AisleAfter})
	}
	return seats, nil
}

// RowName is the letter name of 1-based row r: A..Z, AA, AB, … (bijective
// base 26), the row labels of grid plans and `seatflow demo`.
func RowName(r int) string {
	var b []byte
	for ; r > 0; r = (r - 1) / 26 {
		b = append(b, byte('A'+(r-1)%26))
	}
	slices.Reverse(b)
	return string(b)
}

// RowNumber is the row RowName names (A is 1, AA 27), 0 when name is not
// one of its names.
func RowNumber(name string) int {
	n := 0
	for _, c := range []byte(name) {
		if c < 'A' || c > 'Z' || n > MaxShowSeats {
			return 0
		}
		n = n*26 + int(c-'A'+1)
	}
	return n
}

func validateShow(s NewShow) error {
	if err := validateShowDetails(ShowEdit{Name: s.Name, Venue: s.Venue, StartsAt: s.StartsAt, SalesEnd: s.SalesEnd}); err != nil {
		return err
	}
	if !ValidCurrency(s.Currency) {
		return fieldError(CodeInvalidCurrency, "currency", "%q is not an ISO 4217 currency code", s.Currency)
	}
	return checkBestRules("best_available.", s.Best)
}

// validateShowDetails checks what a show is set up with and may later
// edit (EditShow): one rule for both.
func validateShowDetails(s ShowEdit) error {
	for _, f := range [...]struct{ field, text string }{{"name", s.Name}, {"venue", s.Venue}} {
		if _, err := text.Check(f.field, f.text, text.OneLine); err != nil {
			return err
		}
	}
	switch {
	case s.Name == "" || utf8.RuneCountInString(s.Name) > maxNameLen:
		return fieldError(CodeInvalidShow, "name", "1 to %d characters", maxNameLen)
	case utf8.RuneCountInString(s.Venue) > maxNameLen:
		return fieldError(CodeInvalidShow, "venue", "at most %d characters", maxNameLen)
	case s.StartsAt.IsZero():
		return fieldError(CodeInvalidShow, "starts_at", "an RFC 3339 time is required")
	case !s.SalesEnd.IsZero() && s.SalesEnd.After(s.StartsAt):
		return fieldError(CodeInvalidShow, "sales_end", "must not be after starts_at")
	}
	return nil
}

// PreviewShow checks a new show as CreateShow does and returns the price
// categories and seats it would store, writing nothing.
func PreviewShow(n NewShow) ([]PriceCategory, []Seat, error) {
	if err := validateShow(n); err != nil {
		return nil, nil, err
	}
	return BuildPlan(n.Plan)
}

// CreateShow checks the show and its plan and stores them in one
// transaction: a bad plan writes nothing.
func (e *Engine) CreateShow(ctx context.Context, n NewShow) (Show, error) {
	cats, seats, err := PreviewShow(n)
	if err != nil {
		return Show{}, err
	}
	status := ShowOnSale
	if n.Draft {
		status = ShowDraft
	}
	show, err := e.store.CreateShowPlan(ctx, Show{Name: n.Name, Venue: n.Venue, StartsAt: n.StartsAt,
		SalesEnd: n.SalesEnd, Currency: n.Currency, Best: n.Best, Status: status}, cats, seats)
	if err != nil {
		return Show{}, err
	}
	// Committed. A new show has no seat state; clearing whatever the seat
	// store holds under its id (a database reset reuses ids) makes it so.
	if err := e.RebuildSeats(context.WithoutCancel(ctx), show.ID); err != nil {
		e.log.ErrorContext(ctx, "show created but its seat state not cleared", "show_id", show.ID, "err", err)
	}
	return show, nil
}

// UpdatePlan replaces the prices and seats of a show that has no order yet
// (ErrShowOnSale after the first one).
func (e *Engine) UpdatePlan(ctx context.Context, showID int64, p PlanSpec) (Show, error) {
	cats, seats, err := BuildPlan(p)
	if err != nil {
		return Show{}, err
	}
	show, err := e.store.ReplacePlan(ctx, showID, cats, seats)
	if err != nil {
		return Show{}, err
	}
	// Committed: this instance forgets the old plan now; others find out
	// from plan_version when they next place an order (Place).
	e.plans.forget(showID)
	if err := e.RebuildSeats(context.WithoutCancel(ctx), showID); err != nil {
		e.log.ErrorContext(ctx, "plan replaced but seat state not rebuilt", "show_id", showID, "err", err)
	}
	return show, nil
}

// ShowSummaries lists every show with its counts, soonest first.
func (e *Engine) ShowSummaries(ctx context.Context) ([]ShowSummary, error) {
	shows, err := e.store.Shows(ctx)
	if err != nil {
		return nil, err
	}
	counts, err := e.store.ShowCounts(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("show counts: %w", err)
	}
	out := make([]ShowSummary, len(shows))
	for i, s := range shows {
		out[i] = summary(s, counts[s.ID])
	}
	return out, nil
}

// ShowDetail returns one show with its counts and price categories.
func (e *Engine) ShowDetail(ctx context.Context, showID int64) (ShowSummary, []PriceCategory, error) {
	s, err := e.store.Show(ctx, showID)
	if err != nil {
		return ShowSummary{}, nil, err
	}
	counts, err := e.store.ShowCounts(ctx, showID)
	if err != nil {
		return ShowSummary{}, nil, fmt.Errorf("show %d counts: %w", showID, err)
	}
	cats, err := e.store.PriceCategories(ctx, showID)
	if err != nil {
		return ShowSummary{}, nil, fmt.Errorf("show %d categories: %w", showID, err)
	}
	return summary(s, counts[showID]), cats, nil
}

func summary(s Show, c ShowSummary) ShowSummary {
	c.Show = s
	c.Counts.Available = max(s.SeatCount-c.Counts.Locked-c.Counts.Sold-c.Counts.Blocked, 0)
	return c
}

// BlockRequest names seats to block or unblock.
type BlockRequest struct {
	ShowID  int64
	SeatIDs []string
	Reason  string // blocking only
}

func (e *Engine) checkBlockRequest(ctx context.Context, r BlockRequest) error {
	if len(r.SeatIDs) == 0 || len(r.SeatIDs) > maxBlockSeats {
		return fieldError(CodeInvalidPlan, "seat_ids", "name 1 to %d seats", maxBlockSeats)
	}
	plan, _, err := e.plans.plan(ctx, e.store, r.ShowID)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(r.SeatIDs))
	for i, id := range r.SeatIDs {
		if _, ok := plan[id]; !ok {
			return fieldError(CodeInvalidPlan, fmt.Sprintf("seat_ids[%d]", i), "%q is not a seat of show %d", id, r.ShowID)
		}
		if seen[id] {
			return fieldError(CodeInvalidPlan, fmt.Sprintf("seat_ids[%d]", i), "%q is listed twice", id)
		}
		seen[id] = true
	}
	return nil
}

// maxBlockSeats bounds one block request (the seat store's script takes
// them in one call).
const maxBlockSeats = 1000

// BlockSeats takes seats off public sale. A block takes its seats the way
// Place does — the seat store first, in one script that refuses seats held
// or sold (and Place's script refuses blocked ones), then the DB — so a
// block and a placement racing for one seat serialize on that script and
// exactly one of them gets it. The DB transaction then refuses seats that
// have an order_seat row (the truth, should the seat store have lost a
// hold); if it fails, the seat store gives back what this call blocked.
func (e *Engine) BlockSeats(ctx context.Context, r BlockRequest) error {
	if !ValidBlockReason(r.Reason) {
		return fieldError(CodeInvalidPlan, "reason", "%q is not one of house, wheelchair, technical, other", r.Reason)
	}
	if err := e.checkBlockRequest(ctx, r); err != nil {
		return err
	}
	show, err := e.store.Show(ctx, r.ShowID)
	if err != nil {
		return err
	}
	if show.Status == ShowCancelled {
		return ErrShowCancelled
	}
	ids := slices.Sorted(slices.Values(r.SeatIDs))
	now := e.clock.Now()
	added, err := e.seats.Block(ctx, r.ShowID, ids, r.Reason, now)
	if err != nil {
		return err
	}
	if err := e.store.BlockSeats(ctx, r.ShowID, ids, r.Reason, now); err != nil {
		if len(added) > 0 {
			if uerr := e.seats.Unblock(context.WithoutCancel(ctx), r.ShowID, added); uerr != nil {
				e.metrics.SeatStoreFailure.WithLabelValues("compensate").Inc()
				e.log.ErrorContext(ctx, "block: the transaction failed and so did unblocking its seats; reconcile (block_drift) lifts them", "show_id", r.ShowID, "err", uerr)
			}
		}
		if errors.Is(err, ErrSeatUnavailable) {
			return err
		}
		return fmt.Errorf("block seats of show %d: %w", r.ShowID, err)
	}
	e.notify.SeatsChanged(r.ShowID, ids, SeatBlocked, "")
	return nil
}

// UnblockSeats puts blocked seats back on sale, or hands them to the
// show's waiting list (handoff.go): the DB first, then (after commit) the
// seat store, where the offers take their seats before the blocks go. A
// failed seat-store step leaves the seats blocked there, never the other
// way round.
func (e *Engine) UnblockSeats(ctx context.Context, r BlockRequest) error {
	if err := e.checkBlockRequest(ctx, r); err != nil {
		return err
	}
	ids := slices.Sorted(slices.Values(r.SeatIDs))
	e.prepareHandoff(ctx)
	now := e.clock.Now()
	var hand handoff
	err := e.store.InTx(ctx, func(tx Tx) error {
		free, err := tx.UnblockSeats(ctx, r.ShowID, ids)
		if err != nil {
			return err
		}
		hand, err = e.handOff(ctx, tx, Order{ShowID: r.ShowID}, free, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("unblock seats of show %d: %w", r.ShowID, err)
	}
	ctx = context.WithoutCancel(ctx)
	e.afterHandOff(ctx, Order{ShowID: r.ShowID}, hand, now)
	if err := e.seats.Unblock(ctx, r.ShowID, ids); err != nil {
		e.metrics.SeatStoreFailure.WithLabelValues("unblock").Inc()
		e.log.ErrorContext(ctx, "unblock committed but the seat store still blocks the seats; reconcile (block_drift) frees them",
			"show_id", r.ShowID, "err", err)
		return nil
	}
	e.notify.SeatsChanged(r.ShowID, hand.notHanded(ids), SeatAvailable, "")
	return nil
}

// CancelShowResult says what cancelling a show did.
type CancelShowResult struct {
	Show      Show
	Cancelled []string // pending orders ended with reason show_cancelled
	Paid      []Order  // paid orders, to refund
}

// CancelShow takes the show off sale (one conditional update, after which
// Place refuses it: see Tx.CheckShowSale), then ends each pending order
// through CancelAndRelease and lists the paid ones for refund. Repeating it
// ends what is still pending and lists the same paid orders.
func (e *Engine) CancelShow(ctx context.Context, showID int64, actor string) (CancelShowResult, error) {
	if _, err := e.store.CancelShow(ctx, showID, e.clock.Now()); err != nil {
		return CancelShowResult{}, err
	}
	// Committed: no order can be placed on the show from here on, so the
	// pending list below is complete.
	pending, err := e.store.OrdersOfShow(ctx, showID, StatusPending)
	if err != nil {
		return CancelShowResult{}, fmt.Errorf("cancel show %d: %w", showID, err)
	}
	res := CancelShowResult{Cancelled: []string{}}
	for _, o := range pending {
		r, err := e.CancelAndRelease(ctx, CancelRequest{OrderNo: o.OrderNo, Reason: ReasonShowCancelled, Actor: actor})
		if err != nil {
			return CancelShowResult{}, fmt.Errorf("cancel show %d: %w", showID, err)
		}
		if r.Won {
			res.Cancelled = append(res.Cancelled, o.OrderNo)
		}
	}
	if res.Paid, err = e.store.OrdersOfShow(ctx, showID, StatusPaid); err != nil {
		return CancelShowResult{}, fmt.Errorf("cancel show %d: %w", showID, err)
	}
	if res.Show, err = e.store.Show(ctx, showID); err != nil {
		return CancelShowResult{}, err
	}
	return res, nil
}
