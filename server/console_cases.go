package server

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/store"
	"seatflow/web"
)

// The discrepancy case pages: ops' queue, one case with its history, and
// the take / move / note forms. Every change goes through core.Cases (the
// state machine) and is audited.

// caseFilter reads the queue's filter from the query; a malformed one is a
// bad request rather than an empty list.
func caseFilter(c echo.Context) (web.CaseFilter, error) {
	f := web.CaseFilter{State: c.QueryParam("state"), Kind: c.QueryParam("kind"),
		Owner: strings.ToLower(strings.TrimSpace(c.QueryParam("owner"))), Unowned: c.QueryParam("unowned") == "1"}
	switch f.State {
	case "":
		f.State = web.CaseStateActive
	case web.CaseStateActive, web.CaseStateAll:
	default:
		if !core.CaseState(f.State).Valid() {
			return f, errBadRequest
		}
	}
	if f.Kind != "" && !slices.Contains(web.DiscrepancyKinds, f.Kind) {
		return f, errBadRequest
	}
	if utf8.RuneCountInString(f.Owner) > 64 || (f.Owner != "" && f.Unowned) {
		return f, errBadRequest
	}
	return f, nil
}

// discrepancies is the queue: a state tab, kind and owner filters, the
// oldest case first.
func (cn *console) discrepancies(c echo.Context) error {
	ctx := c.Request().Context()
	f, err := caseFilter(c)
	if err != nil {
		return err
	}
	page, err := pageParam(c)
	if err != nil {
		return err
	}
	// One row more than a page tells whether there is a next page.
	items, err := cn.DB.DiscrepancyCases(ctx, store.CaseQuery{States: f.States(), Kind: f.Kind, Owner: f.Owner,
		Unowned: f.Unowned, Limit: listPageSize + 1, Offset: (page - 1) * listPageSize})
	if err != nil {
		return err
	}
	counts, err := cn.DB.CaseCounts(ctx)
	if err != nil {
		return err
	}
	d := web.DiscrepanciesData{Filter: f, Items: items, Counts: counts, Page: page}
	if len(items) > listPageSize {
		d.Items, d.More = items[:listPageSize], true
	}
	return render(c, http.StatusOK, web.DiscrepanciesPage(cn.page(c, "disc.title", web.NavDiscrepancies), d))
}

// caseData loads the case named in the path and its history.
func (cn *console) caseData(c echo.Context) (web.CaseData, error) {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return web.CaseData{}, echo.ErrNotFound
	}
	ctx := c.Request().Context()
	dc, err := cn.DB.DiscrepancyCase(ctx, id)
	if err != nil {
		return web.CaseData{}, err
	}
	hist, err := cn.DB.CaseHistory(ctx, id)
	if err != nil {
		return web.CaseData{}, err
	}
	return web.CaseData{Case: dc, History: hist}, nil
}

func (cn *console) discrepancyCase(c echo.Context) error {
	d, err := cn.caseData(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.CasePage(cn.page(c, "case.title", web.NavDiscrepancies), d))
}

func (cn *console) takeCase(c echo.Context) error {
	return cn.changeCase(c, "case_taken", func(id int64, staff, text string) (core.DiscrepancyCase, error) {
		return cn.cases.Take(c.Request().Context(), id, staff, text, staffAction(c))
	})
}

func (cn *console) moveCase(c echo.Context) error {
	to := core.CaseState(c.FormValue("to"))
	if !to.Valid() {
		return errBadRequest
	}
	return cn.changeCase(c, "case_moved", func(id int64, staff, text string) (core.DiscrepancyCase, error) {
		return cn.cases.Move(c.Request().Context(), id, to, staff, text, staffAction(c))
	})
}

func (cn *console) noteCase(c echo.Context) error {
	return cn.changeCase(c, "case_noted", func(id int64, staff, text string) (core.DiscrepancyCase, error) {
		return cn.cases.Note(c.Request().Context(), id, staff, text, staffAction(c))
	})
}

// caseRefusals maps the workflow's refusals to the case page's message and
// status; anything else is an error page.
var caseRefusals = []struct {
	err    error
	key    string
	status int
}{
	{core.ErrInvalidTransition, "case.err_transition", http.StatusConflict},
	{core.ErrCaseClosed, "case.err_closed", http.StatusConflict},
	{core.ErrNoteRequired, "case.err_note", http.StatusUnprocessableEntity},
	{core.ErrCaseBusy, "case.err_busy", http.StatusConflict},
	{core.ErrSelfApproval, "case.err_self_approval", http.StatusForbidden},
	{core.ErrLinkedApproval, "case.err_linked_approval", http.StatusForbidden},
	{core.ErrAwaitingApproval, "case.err_awaiting_approval", http.StatusConflict},
}

// changeCase runs one workflow step for the signed-in member of staff. A
// step the machine refuses re-renders the case page with why; a change
// (audited by the workflow in its transaction: from, to, owner, note)
// redirects to the case.
func (cn *console) changeCase(c echo.Context, notice string,
	step func(id int64, staff, note string) (core.DiscrepancyCase, error)) error {
	d, err := cn.caseData(c)
	if err != nil {
		return err
	}
	s := sessionOf(c)
	text := note(c, "note")
	id := d.Case.ID
	_, err = step(id, s.staff.Username, text)
	for _, r := range caseRefusals {
		if err != nil && errors.Is(err, r.err) {
			d.FormError, d.To, d.Note = r.key, c.FormValue("to"), text
			return render(c, r.status, web.CasePage(cn.page(c, "case.title", web.NavDiscrepancies), d))
		}
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/discrepancies/"+strconv.FormatInt(id, 10)+"?msg="+notice))
}
