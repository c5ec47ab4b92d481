package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

// planBodyLimit bounds the bodies that carry a seat plan: 20,000 seats at
// about 100 bytes each, with room to spare.
const planBodyLimit = "8M"

// planTimeout bounds a plan upload's work instead of SEATFLOW_REQUEST_TIMEOUT:
// a 20,000-seat plan is one transaction of many batched inserts, an order
// call is a few statements. It stays under the server's WriteTimeout (30 s),
// so the answer still reaches the client.
const planTimeout = 25 * time.Second

type categoryJSON struct {
	Code       string `json:"code"`
	Name       string `json:"name"`
	PriceCents int64  `json:"price_cents"`
}

type seatSpecJSON struct {
	SeatID   string `json:"seat_id"`
	Section  string `json:"section"`
	Row      string `json:"row"`
	Number   int    `json:"number"`
	Category string `json:"category"`
	X        int    `json:"x"`
	Y        int    `json:"y"`
	// Best available: wheelchair, companion or "", a rank (lower is
	// better), and an aisle between this seat and the next of its row.
	Accessible string `json:"accessible"`
	Rank       int    `json:"rank"`
	AisleAfter bool   `json:"aisle_after"`
}

// bestRulesJSON is a show's best-available settings.
type bestRulesJSON struct {
	Focal        *pointJSON `json:"focal"` // null: the stage centre of the plan
	AllowSingles bool       `json:"allow_singles"`
}

type pointJSON struct {
	X int `json:"x"`
	Y int `json:"y"`
}

func (b *bestRulesJSON) rules() core.BestRules {
	if b == nil {
		return core.BestRules{}
	}
	r := core.BestRules{AllowSingles: b.AllowSingles}
	if b.Focal != nil {
		r.FocalSet, r.FocalX, r.FocalY = true, b.Focal.X, b.Focal.Y
	}
	return r
}

type gridJSON struct {
	Rows          int               `json:"rows"`
	SeatsPerRow   int               `json:"seats_per_row"`
	Category      string            `json:"category"`
	RowCategories []rowCategoryJSON `json:"row_categories"`
}

type rowCategoryJSON struct {
	Category string `json:"category"`
	From     int    `json:"from"`
	To       int    `json:"to"`
}

// planRequest is the body of PUT /shows/{id}/plan and part of POST /shows.
type planRequest struct {
	PriceCategories []categoryJSON `json:"price_categories"`
	Seats           []seatSpecJSON `json:"seats"`
	Grid            *gridJSON      `json:"grid"`
}

type createShowRequest struct {
	Name     string `json:"name"`
	Venue    string `json:"venue"`
	StartsAt string `json:"starts_at"`
	SalesEnd string `json:"sales_end"`
	Currency string `json:"currency"`
	planRequest
	BestAvailable *bestRulesJSON `json:"best_available"`
	Draft         bool           `json:"draft"` // not on sale until POST /shows/{id}/publish
}

type blockRequest struct {
	SeatIDs []string `json:"seat_ids"`
	Reason  string   `json:"reason"`
}

type countsJSON struct {
	Available int `json:"available"`
	Locked    int `json:"locked"`
	Sold      int `json:"sold"`
	Blocked   int `json:"blocked"`
}

type showDetailJSON struct {
	showJSON
	PriceCategories []categoryJSON `json:"price_categories"`
}

type cancelShowJSON struct {
	Show            showJSON    `json:"show"`
	CancelledOrders []string    `json:"cancelled_orders"`
	PaidOrders      []orderJSON `json:"paid_orders"` // to refund
}

func (p planRequest) spec() core.PlanSpec {
	spec := core.PlanSpec{Categories: make([]core.PriceCategory, len(p.PriceCategories))}
	for i, c := range p.PriceCategories {
		spec.Categories[i] = core.PriceCategory{Code: c.Code, Name: c.Name, PriceCents: c.PriceCents}
	}
	if p.Grid != nil {
		spec.Grid = &core.GridSpec{Rows: p.Grid.Rows, SeatsPerRow: p.Grid.SeatsPerRow, Category: p.Grid.Category}
		for _, rc := range p.Grid.RowCategories {
			spec.Grid.RowCategories = append(spec.Grid.RowCategories, core.RowCategory(rc))
		}
	}
	spec.Seats = make([]core.SeatSpec, len(p.Seats))
	for i, s := range p.Seats {
		spec.Seats[i] = core.SeatSpec{SeatID: s.SeatID, Section: s.Section, Row: s.Row, Number: s.Number,
			Category: s.Category, X: s.X, Y: s.Y, Accessible: s.Accessible, Rank: s.Rank, AisleAfter: s.AisleAfter}
	}
	return spec
}

func newShowJSON(s core.ShowSummary) showJSON {
	j := showJSON{ID: s.ID, Name: s.Name, Venue: s.Venue, StartsAt: rfc3339(s.StartsAt), Rows: s.Rows, Cols: s.Cols,
		Currency: s.Currency, Status: s.Status.String(), SeatCount: s.SeatCount, RevenueCents: s.RevenueCents,
		Counts: countsJSON{Available: s.Counts.Available, Locked: s.Counts.Locked, Sold: s.Counts.Sold,
			Blocked: s.Counts.Blocked}}
	if !s.SalesEnd.IsZero() {
		j.SalesEnd = rfc3339(s.SalesEnd)
	}
	return j
}

// parseTime reads an RFC 3339 field; empty is the zero time.
func parseTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, &core.Error{Kind: core.KindInvalid, Code: core.CodeInvalidShow, Field: field,
			Message: field + ": not an RFC 3339 time"}
	}
	return t.UTC(), nil
}

func showID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, core.Invalidf("show id in the path must be a positive integer")
	}
	return id, nil
}

// handleCreateShow sets up a show with its plan: 201 with the show, or 400
// naming the field at fault with nothing written.
func (s *Server) handleCreateShow(c echo.Context) error {
	var req createShowRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	startsAt, err := parseTime("starts_at", req.StartsAt)
	if err != nil {
		return err
	}
	salesEnd, err := parseTime("sales_end", req.SalesEnd)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	show, err := s.engine.CreateShow(ctx, core.NewShow{Name: req.Name, Venue: req.Venue, StartsAt: startsAt,
		SalesEnd: salesEnd, Currency: req.Currency, Plan: req.spec(), Best: req.BestAvailable.rules(), Draft: req.Draft})
	if err != nil {
		return err
	}
	return s.writeShow(c, http.StatusCreated, show.ID)
}

// writeShow answers with one show, its counts and price categories.
func (s *Server) writeShow(c echo.Context, status int, id int64) error {
	sum, cats, err := s.engine.ShowDetail(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out := showDetailJSON{showJSON: newShowJSON(sum), PriceCategories: make([]categoryJSON, len(cats))}
	for i, cat := range cats {
		out.PriceCategories[i] = categoryJSON{Code: cat.Code, Name: cat.Name, PriceCents: cat.PriceCents}
	}
	if status == http.StatusCreated {
		c.Response().Header().Set(echo.HeaderLocation, "/api/v1/shows/"+strconv.FormatInt(id, 10))
	}
	return c.JSON(status, out)
}

// handleGetShow returns one show with its seat counts.
func (s *Server) handleGetShow(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	return s.writeShow(c, http.StatusOK, id)
}

// handleReplacePlan swaps prices and seats before the first order (409
// show_on_sale after).
func (s *Server) handleReplacePlan(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	var req planRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if _, err := s.engine.UpdatePlan(c.Request().Context(), id, req.spec()); err != nil {
		return err
	}
	return s.writeShow(c, http.StatusOK, id)
}

// bestRulesAnswerJSON is a show's best-available rules as they now stand.
type bestRulesAnswerJSON struct {
	ShowID      int64 `json:"show_id"`
	PlanVersion int64 `json:"plan_version"`
	bestRulesJSON
}

// handleSetBestRules replaces a show's best-available rules, on sale or
// not: the next choice uses them (core.Engine.SetBestRules).
func (s *Server) handleSetBestRules(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	var req bestRulesJSON
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	show, err := s.engine.SetBestRules(c.Request().Context(), id, req.rules())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newBestRulesAnswer(show))
}

// handleGetBestRules returns a show's best-available rules in the shape
// the PUT takes and answers.
func (s *Server) handleGetBestRules(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	show, err := s.engine.BestRules(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newBestRulesAnswer(show))
}

func newBestRulesAnswer(show core.Show) bestRulesAnswerJSON {
	out := bestRulesAnswerJSON{ShowID: show.ID, PlanVersion: show.PlanVersion, bestRulesJSON: bestRulesJSON{AllowSingles: show.Best.AllowSingles}}
	if show.Best.FocalSet {
		out.Focal = &pointJSON{X: show.Best.FocalX, Y: show.Best.FocalY}
	}
	return out
}

// handleBlocks blocks (POST) or unblocks (DELETE) seats.
func (s *Server) handleBlocks(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	var req blockRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	r := core.BlockRequest{ShowID: id, SeatIDs: req.SeatIDs, Reason: req.Reason}
	state := core.SeatBlocked
	if c.Request().Method == http.MethodDelete {
		if req.Reason != "" && !core.ValidBlockReason(req.Reason) {
			return core.Invalidf("reason %q is not one of house, wheelchair, technical, other", req.Reason)
		}
		state = core.SeatAvailable
		err = s.engine.UnblockSeats(c.Request().Context(), r)
	} else {
		err = s.engine.BlockSeats(c.Request().Context(), r)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"show_id": id, "seat_ids": req.SeatIDs, "state": state.String()})
}

// handleCancelShow takes the show off sale, ends its pending holds and
// lists its paid orders for refund. Repeating it is harmless.
func (s *Server) handleCancelShow(c echo.Context) error {
	id, err := showID(c)
	if err != nil {
		return err
	}
	res, err := s.engine.CancelShow(c.Request().Context(), id, apiActor(c))
	if err != nil {
		return err
	}
	sum, _, err := s.engine.ShowDetail(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out := cancelShowJSON{Show: newShowJSON(sum), CancelledOrders: res.Cancelled, PaidOrders: make([]orderJSON, len(res.Paid))}
	for i, o := range res.Paid {
		out.PaidOrders[i] = newOrderJSON(o)
	}
	return c.JSON(http.StatusOK, out)
}
