package server

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
	"seatflow/web"
)

// errBadRequest is a console request with a malformed parameter.
var errBadRequest = echo.NewHTTPError(http.StatusBadRequest)

// queryID parses an optional positive id from the query; "" is 0.
func queryID(c echo.Context, name string) (int64, error) {
	v := strings.TrimSpace(c.QueryParam(name))
	if v == "" {
		return 0, nil
	}
	return positiveID(v)
}

func positiveID(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, errBadRequest
	}
	return n, nil
}

// pageParam is the 1-based page number of a list.
func pageParam(c echo.Context) (int, error) {
	v := c.QueryParam("page")
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1_000_000 {
		return 0, errBadRequest
	}
	return n, nil
}

// note reads a required free-text field: trimmed, at most maxNoteLen
// characters; "" when missing.
func note(c echo.Context, name string) string {
	return truncate(strings.TrimSpace(c.FormValue(name)), maxNoteLen)
}

func (cn *console) holds(c echo.Context) error {
	ctx := c.Request().Context()
	q := web.HoldsQuery{Search: strings.TrimSpace(c.QueryParam("q")), Sort: c.QueryParam("sort")}
	var err error
	if q.ShowID, err = queryID(c, "show"); err != nil {
		return err
	}
	if q.UserID, err = queryID(c, "user"); err != nil {
		return err
	}
	if q.Page, err = pageParam(c); err != nil {
		return err
	}
	if q.Sort != "created" {
		q.Sort = "expire"
	}
	pq := store.PendingQuery{Search: q.Search, ShowID: q.ShowID,
		UserID: q.UserID, Sort: q.Sort, Limit: holdsPageSize, Offset: (q.Page - 1) * holdsPageSize}
	// The dashboard's cards link here for the holds they count.
	now := cn.Clock.Now()
	switch q.Due = c.QueryParam("due"); q.Due {
	case "":
	case web.DueSoon:
		pq.ExpireFrom, pq.ExpireTo = now, now.Add(web.ExpiringWindow)
	case web.DueOverdue: // as the dashboard counts them
		pq.ExpireTo = now.Add(-cn.overdueAfter())
	default:
		return errBadRequest
	}
	orders, total, err := cn.DB.PendingOrders(ctx, pq)
	if err != nil {
		return err
	}
	shows, err := cn.Engine.Shows(ctx)
	if err != nil {
		return err
	}
	d := web.HoldsData{Query: q, Orders: orders, Total: total, PageSize: holdsPageSize, Shows: shows}
	return render(c, http.StatusOK, web.HoldsPage(cn.page(c, "holds.title", web.NavHolds), d))
}

// orderData loads an order, its show and its timeline.
func (cn *console) orderData(c echo.Context) (web.OrderData, error) {
	ctx := c.Request().Context()
	no, err := cn.Engine.OrderNo(ctx, c.Param("no"))
	if err != nil {
		return web.OrderData{}, err
	}
	return cn.orderDataOf(c, no)
}

// orderDataOf is the order page's data of order number no.
func (cn *console) orderDataOf(c echo.Context, no string) (web.OrderData, error) {
	ctx := c.Request().Context()
	o, events, err := cn.Engine.Order(ctx, no)
	if err != nil {
		return web.OrderData{}, err
	}
	show, err := cn.Engine.Store().Show(ctx, o.ShowID)
	if err != nil {
		return web.OrderData{}, err
	}
	refunds, err := cn.Refunds.Store().OrderRefunds(ctx, no)
	if err != nil {
		return web.OrderData{}, err
	}
	payments, err := cn.counter.Store().OrderPayments(ctx, no)
	if err != nil {
		return web.OrderData{}, err
	}
	cases, err := cn.DB.DiscrepancyCases(ctx, store.CaseQuery{OrderNo: no})
	if err != nil {
		return web.OrderData{}, err
	}
	var seatTickets []core.SeatTicket
	if o.Status == core.StatusPaid {
		if seatTickets, err = cn.Engine.Store().SeatTickets(ctx, no); err != nil {
			return web.OrderData{}, err
		}
	}
	return web.OrderData{Order: o, SeatTickets: seatTickets, Show: show, Events: events, MaxHold: cn.Engine.MaxHold(),
		Refunds: refunds, RefundApprovalCents: cn.Refunds.ApprovalCents(), Payments: payments, Cases: cases}, nil
}

func (cn *console) order(c echo.Context) error {
	d, err := cn.orderData(c)
	if err != nil {
		return cn.noSuchOrder(c, err)
	}
	switch o := c.QueryParam("outcome"); o {
	case web.OutcomeCancelled, web.OutcomeAlreadyPaid, web.OutcomeAlreadyCancelled, web.OutcomeExtended,
		web.OutcomeRefunded, web.OutcomeSeatsRefunded, web.OutcomeSeatsExchanged, web.OutcomeRefundRequested, web.OutcomeRefundRejected,
		web.OutcomeHeld, web.OutcomePaid, web.OutcomePaidLate:
		d.Outcome = o
	}
	return render(c, http.StatusOK, web.OrderPage(cn.page(c, "order.title", web.NavHolds), d))
}

// forceCancel is the staff cancel, in two steps: the first post (a reason,
// no confirm) shows what will be cancelled; the second (confirm=1) runs the
// engine's cancel-and-release. Losing the race to a payment, a timeout or
// another click is an outcome shown on the order page, not an error.
func (cn *console) forceCancel(c echo.Context) error {
	d, err := cn.orderData(c)
	if err != nil {
		return err
	}
	p := cn.page(c, "order.title", web.NavHolds)
	d.Reason = note(c, "reason")
	if d.Reason == "" {
		d.ReasonMissing = true
		return render(c, http.StatusUnprocessableEntity, web.OrderPage(p, d))
	}
	if c.FormValue("confirm") != "1" {
		d.Confirming = true
		return render(c, http.StatusOK, web.OrderPage(p, d))
	}
	s := sessionOf(c)
	res, err := cn.Engine.CancelAndRelease(c.Request().Context(), core.CancelRequest{OrderNo: d.Order.OrderNo,
		Reason: core.ReasonStaff, Actor: core.ActorStaffPrefix + s.staff.Username, Note: d.Reason, Audit: staffAction(c)})
	if err != nil {
		return err
	}
	outcome := web.OutcomeCancelled
	switch {
	case res.Won:
	case res.Order.Status == core.StatusPaid:
		outcome = web.OutcomeAlreadyPaid
	default:
		outcome = web.OutcomeAlreadyCancelled
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/orders/"+d.Order.OrderNo+"?outcome="+outcome))
}

// extendHold pushes a pending hold's expiry later by whole minutes, with a
// required reason. A refusal by the engine (the limit, an expired hold, an
// order that ended meanwhile) is shown on the order page; the engine audits
// it like a success: staff asked, and the log says what came of it.
func (cn *console) extendHold(c echo.Context) error {
	d, err := cn.orderData(c)
	if err != nil {
		return err
	}
	p := cn.page(c, "order.title", web.NavHolds)
	d.ExtendReason = note(c, "reason")
	minutes, err := strconv.Atoi(strings.TrimSpace(c.FormValue("minutes")))
	if quick := c.FormValue("quick"); quick != "" {
		// A one-click button: its minutes, and a reason saying so.
		minutes, err = strconv.Atoi(quick)
		if err == nil && !slices.Contains(web.QuickExtendMinutes, minutes) {
			err = errBadRequest
		}
		d.ExtendReason = p.Tf("extend.quick_reason", minutes)
	}
	d.ExtendMinutes = minutes
	switch {
	case err != nil || minutes < 1 || minutes > web.MaxExtendMinutes:
		d.ExtendError = "extend.err_minutes"
	case d.ExtendReason == "":
		d.ExtendError = "extend.err_reason"
	}
	if d.ExtendError != "" {
		return render(c, http.StatusUnprocessableEntity, web.OrderPage(p, d))
	}
	s := sessionOf(c)
	_, err = cn.Engine.Extend(c.Request().Context(), d.Order.OrderNo, time.Duration(minutes)*time.Minute,
		core.ActorStaffPrefix+s.staff.Username, d.ExtendReason, staffAction(c))
	status := http.StatusOK
	switch {
	case err == nil:
	case errors.Is(err, core.ErrHoldLimit):
		status, d.ExtendError = http.StatusUnprocessableEntity, "extend.err_limit"
	case errors.Is(err, core.ErrHoldExpired):
		status, d.ExtendError = http.StatusConflict, "extend.err_expired"
	case errors.Is(err, core.ErrOrderNotPending):
	default:
		return err
	}
	if d.ExtendError != "" {
		return render(c, status, web.OrderPage(p, d))
	}
	// Extended, or ended meanwhile: the order page shows how it stands.
	next := web.OutcomeExtended
	if err != nil {
		if next, err = cn.endedOutcome(c, d.Order.OrderNo); err != nil {
			return err
		}
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/orders/"+d.Order.OrderNo+"?outcome="+next))
}

// endedOutcome says how an order that left pending under a staff action ended.
func (cn *console) endedOutcome(c echo.Context, orderNo string) (string, error) {
	o, err := cn.Engine.Store().Order(c.Request().Context(), orderNo)
	if err != nil {
		return "", err
	}
	if o.Status == core.StatusPaid {
		return web.OutcomeAlreadyPaid, nil
	}
	return web.OutcomeAlreadyCancelled, nil
}

func (cn *console) shows(c echo.Context) error {
	shows, err := cn.Engine.ShowSummaries(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.ShowsPage(cn.page(c, "shows.title", web.NavShows), shows))
}

// seatMapData loads a show and its live seat grid.
func (cn *console) seatMapData(c echo.Context) (web.SeatMapData, error) {
	ctx := c.Request().Context()
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return web.SeatMapData{}, echo.ErrNotFound
	}
	show, err := cn.Engine.Store().Show(ctx, id)
	if err != nil {
		return web.SeatMapData{}, err
	}
	seats, err := cn.Engine.SeatMap(ctx, id)
	if err != nil {
		return web.SeatMapData{}, err
	}
	cats, err := cn.Engine.Store().PriceCategories(ctx, id)
	if err != nil {
		return web.SeatMapData{}, err
	}
	return web.SeatMapData{Show: show, Seats: seats, Categories: cats}, nil
}

func (cn *console) seatMap(c echo.Context) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	version := cn.Hub.Version(id) // before the seats are read: see seatEvents
	d, err := cn.seatMapData(c)
	if err != nil {
		return err
	}
	d.Version = version
	p := cn.page(c, "shows.title", web.NavShows)
	return render(c, http.StatusOK, web.SeatMapPage(p, d))
}

// seatPanel is the HTMX fragment describing one seat and its holder.
func (cn *console) seatPanel(c echo.Context) error {
	d, err := cn.seatMapData(c)
	if err != nil {
		return err
	}
	panel := web.SeatPanelData{Show: d.Show}
	found := false
	for _, s := range d.Seats {
		if s.SeatID == c.Param("seat") {
			panel.Seat, found = s, true
			break
		}
	}
	if !found {
		return echo.ErrNotFound
	}
	if panel.Seat.OrderNo != "" {
		o, err := cn.Engine.Store().Order(c.Request().Context(), panel.Seat.OrderNo)
		if err != nil && !errors.Is(err, core.ErrOrderNotFound) {
			return err
		}
		if err == nil {
			panel.Order = &o
		}
	}
	return render(c, http.StatusOK, web.SeatPanel(cn.page(c, "shows.title", web.NavShows), panel))
}

// reconcileRunsShown is how many runs the reconcile page lists;
// reconcileRunsRead how many it reads to find them among the empty sweeps
// (a sweep every 30 s: about four hours).
const (
	reconcileRunsShown = 20
	reconcileRunsRead  = 500
)

func (cn *console) reconcile(c echo.Context) error {
	d := web.ReconcileData{Available: cn.Reconcile != nil, ShowSweeps: c.QueryParam("sweeps") == "1"}
	if d.Available {
		runs, err := cn.Reconcile.RecentRuns(c.Request().Context(), reconcileRunsRead)
		if err != nil {
			return err
		}
		for _, r := range runs {
			switch {
			case !d.ShowSweeps && r.EmptySweep():
				d.HiddenSweeps++
			case len(d.Runs) < reconcileRunsShown:
				d.Runs = append(d.Runs, r)
			}
		}
	}
	return render(c, http.StatusOK, web.ReconcilePage(cn.page(c, "reconcile.title", web.NavReconcile), d))
}

func (cn *console) runReconcile(c echo.Context) error {
	if cn.Reconcile == nil {
		return echo.ErrNotFound
	}
	run, err := cn.Reconcile.RunNow(c.Request().Context())
	if core.ErrorKind(err) == core.KindConflict {
		return c.Redirect(http.StatusSeeOther, web.URL("/reconcile?msg=reconcile_busy"))
	}
	if err != nil {
		return err
	}
	found, fixed, errs := run.Totals()
	cn.audit(c, core.AuditEntry{Action: core.AuditReconcileRun, Target: "reconcile_run:" + strconv.FormatInt(run.ID, 10),
		Detail: map[string]any{"found": found, "fixed": fixed, "errors": errs}})
	return c.Redirect(http.StatusSeeOther, web.URL("/reconcile?msg=reconcile_done"))
}

func (cn *console) auditLog(c echo.Context) error {
	before, err := queryID(c, "before")
	if err != nil {
		return err
	}
	f := web.AuditFilter{Staff: strings.TrimSpace(c.QueryParam("staff")), Action: strings.TrimSpace(c.QueryParam("action")),
		Target: strings.TrimSpace(c.QueryParam("target"))}
	if no := strings.TrimSpace(c.QueryParam("order")); no != "" {
		f.Target = "order:" + no
	}
	entries, err := cn.DB.AuditLog(c.Request().Context(), store.AuditQuery{Staff: f.Staff, Action: f.Action,
		Target: f.Target, Before: before, Limit: listPageSize + 1})
	if err != nil {
		return err
	}
	d := web.AuditData{Entries: entries, Filter: f}
	if len(entries) > listPageSize {
		d.Entries = entries[:listPageSize]
		d.Older = d.Entries[listPageSize-1].ID
	}
	return render(c, http.StatusOK, web.AuditPage(cn.page(c, "audit.title", web.NavAudit), d))
}

func (cn *console) staffList(c echo.Context) error {
	return cn.renderStaff(c, http.StatusOK, web.StaffData{})
}

func (cn *console) renderStaff(c echo.Context, status int, d web.StaffData) error {
	var err error
	if d.Accounts, err = cn.DB.StaffList(c.Request().Context()); err != nil {
		return err
	}
	if d.TwoStep, err = cn.DB.TOTPEnrolled(c.Request().Context()); err != nil {
		return err
	}
	if d.TwoStepLocked, err = cn.DB.TOTPLocked(c.Request().Context(), cn.Clock.Now()); err != nil {
		return err
	}
	return render(c, status, web.StaffPage(cn.page(c, "staff.title", web.NavStaff), d))
}

func (cn *console) staffAdd(c echo.Context) error {
	d := web.StaffData{Username: strings.ToLower(strings.TrimSpace(c.FormValue("username"))),
		Role: access.Role(c.FormValue("role"))}
	// The admin never types or learns the new person's password: the page
	// shows a one-time link to set it, once, as makeResetLink does.
	ctx, now := c.Request().Context(), cn.Clock.Now()
	s, err := createStaffForLink(ctx, cn.DB, d.Username, string(d.Role), consoleActor(c).Staff, now)
	if key := staffFormError(err); key != "" {
		d.FormError = key
		return cn.renderStaff(c, http.StatusUnprocessableEntity, d)
	}
	if err != nil {
		return err
	}
	cn.audit(c, core.AuditEntry{Action: core.AuditStaffAdd, Target: "staff:" + s.Username,
		Detail: map[string]any{"role": string(s.Role)}})
	path, err := createResetLink(ctx, cn.DB, s, staffAction(c).Entry(now, access.AuditPasswordResetLink, "staff:"+s.Username, nil))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return cn.renderStaff(c, http.StatusOK, web.StaffData{ResetFor: s.Username, Added: true,
		ResetLink: c.Scheme() + "://" + c.Request().Host + path})
}

func (cn *console) staffDisable(c echo.Context) error {
	return cn.setStaffDisabled(c, true, core.AuditStaffDisable)
}

func (cn *console) staffEnable(c echo.Context) error {
	return cn.setStaffDisabled(c, false, core.AuditStaffEnable)
}

func (cn *console) setStaffDisabled(c echo.Context, disabled bool, action string) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	if id == sessionOf(c).staff.ID {
		// An admin who locks themselves out needs another admin to get back.
		return errBadRequest
	}
	s, err := cn.DB.SetStaffDisabled(c.Request().Context(), id, disabled)
	if err != nil {
		return err
	}
	if disabled {
		cn.streams.endStaff(id)
	}
	cn.audit(c, core.AuditEntry{Action: action, Target: "staff:" + s.Username})
	return c.Redirect(http.StatusSeeOther, web.URL("/staff?msg=staff_updated"))
}
