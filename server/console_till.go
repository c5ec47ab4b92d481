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
	"seatflow/core/till"
	"seatflow/web"
)

// tillPage is the clerk's till: the open shift and its money so far, or
// the form to open one; ?closed= shows the clerk's shift just closed.
func (cn *console) tillPage(c echo.Context) error {
	d, err := cn.tillData(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.TillPage(cn.page(c, "till.title", web.NavTill), d))
}

func (cn *console) tillData(c echo.Context) (web.TillData, error) {
	ctx := c.Request().Context()
	clerk := sessionOf(c).staff.Username
	d := web.TillData{Tolerance: cn.Till.Tolerance()}
	s, tot, ok, err := cn.Till.Current(ctx, clerk)
	if err != nil {
		return d, err
	}
	if ok {
		d.Current = &till.Report{Shift: s, Totals: tot}
	}
	if id, err := strconv.ParseInt(c.QueryParam("closed"), 10, 64); err == nil {
		if reps, err := cn.shiftReport(c, id); err == nil && reps[0].Clerk == clerk && !reps[0].Open() {
			d.Closed = &reps[0]
		}
	}
	shows, err := cn.DB.Shows(ctx)
	if err != nil {
		return d, err
	}
	for _, sh := range shows {
		if !slices.Contains(d.Currencies, sh.Currency) {
			d.Currencies = append(d.Currencies, sh.Currency)
		}
	}
	if len(d.Currencies) == 0 {
		d.Currencies = []string{"EUR"}
	}
	d.Currency = d.Currencies[0]
	return d, nil
}

// openShift opens the clerk's shift with the float typed.
func (cn *console) openShift(c echo.Context) error {
	d, err := cn.tillData(c)
	if err != nil {
		return err
	}
	p := cn.page(c, "till.title", web.NavTill)
	d.Currency, d.Float = c.FormValue("currency"), strings.TrimSpace(c.FormValue("float"))
	float, err := till.ParseAmount(d.Float, d.Currency)
	if err == nil {
		actor := consoleActor(c)
		_, err = cn.Till.Open(c.Request().Context(), till.OpenRequest{Clerk: sessionOf(c).staff.Username,
			Currency: d.Currency, FloatCents: float, Audit: &actor})
	}
	if err != nil {
		return cn.tillRefused(c, p, d, err)
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/till"))
}

// closeShift closes the clerk's shift with the cash counted.
func (cn *console) closeShift(c echo.Context) error {
	d, err := cn.tillData(c)
	if err != nil {
		return err
	}
	p := cn.page(c, "till.title", web.NavTill)
	if d.Current == nil {
		return cn.tillRefused(c, p, d, core.ErrNoOpenShift)
	}
	d.Counted = strings.TrimSpace(c.FormValue("counted"))
	counted, err := till.ParseAmount(d.Counted, d.Current.Currency)
	var s till.Shift
	if err == nil {
		actor := consoleActor(c)
		s, _, err = cn.Till.Close(c.Request().Context(), till.CloseRequest{Clerk: sessionOf(c).staff.Username,
			CountedCents: counted, Audit: &actor})
	}
	if err != nil {
		return cn.tillRefused(c, p, d, err)
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/till?closed="+strconv.FormatInt(s.ID, 10)))
}

// tillRefused shows the till again with why the form was refused.
func (cn *console) tillRefused(c echo.Context, p web.Page, d web.TillData, err error) error {
	var ce *core.Error
	switch {
	case errors.Is(err, till.ErrShiftOpen):
		d.Error = p.T("till.err_shift_open")
	case errors.Is(err, core.ErrNoOpenShift):
		d.Error = p.T("till.err_no_shift")
	case errors.As(err, &ce) && ce.Kind == core.KindInvalid:
		d.Error = ce.Message
	default:
		return err
	}
	status := http.StatusConflict
	if ce != nil && ce.Kind == core.KindInvalid {
		status = http.StatusUnprocessableEntity
	}
	return render(c, status, web.TillPage(p, d))
}

// shiftReport reads shift id with its money.
func (cn *console) shiftReport(c echo.Context, id int64) ([]till.Report, error) {
	ctx := c.Request().Context()
	s, err := cn.Till.Store().Shift(ctx, id)
	if err != nil {
		return nil, err
	}
	tots, err := cn.Till.Store().ShiftTotals(ctx, []int64{id})
	if err != nil {
		return nil, err
	}
	return []till.Report{{Shift: s, Totals: tots[id]}}, nil
}

// tillShift is one shift's printable report: its clerk's, or a manager's.
func (cn *console) tillShift(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return till.ErrShiftNotFound
	}
	reps, err := cn.shiftReport(c, id)
	if err != nil {
		return err
	}
	p := cn.page(c, "till.title", web.NavTill)
	manager := p.Can(access.ActDiscrepancies)
	if !manager && reps[0].Clerk != sessionOf(c).staff.Username {
		return till.ErrShiftNotFound // another clerk's shift is not this clerk's business
	}
	return render(c, http.StatusOK, web.TillReportPage(p, web.TillReportData{Clerk: reps[0].Clerk,
		Date: reps[0].OpenedAt.In(time.Local).Format(time.DateOnly), Reports: reps, Manager: manager}))
}

// tillReport is a clerk's day: the signed-in clerk's, or (a manager) any
// clerk's by ?clerk=.
func (cn *console) tillReport(c echo.Context) error {
	p := cn.page(c, "till.title", web.NavTill)
	manager := p.Can(access.ActDiscrepancies)
	clerk := sessionOf(c).staff.Username
	if q := strings.TrimSpace(c.QueryParam("clerk")); manager && q != "" {
		clerk = q
	}
	return cn.tillDay(c, p, clerk, manager)
}

// tillDayView is the manager's day: every clerk's shifts.
func (cn *console) tillDayView(c echo.Context) error {
	return cn.tillDay(c, cn.page(c, "till.title", web.NavTill), "", true)
}

func (cn *console) tillDay(c echo.Context, p web.Page, clerk string, manager bool) error {
	day := p.Now.In(time.Local)
	if q := c.QueryParam("date"); q != "" {
		var err error
		if day, err = time.ParseInLocation(time.DateOnly, q, time.Local); err != nil {
			return &core.Error{Kind: core.KindInvalid, Code: "invalid_date", Message: p.T("till.err_date")}
		}
	}
	reps, err := cn.Till.Day(c.Request().Context(), day, time.Local, clerk)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.TillReportPage(p, web.TillReportData{Date: day.Format(time.DateOnly),
		Clerk: clerk, Reports: reps, Manager: manager}))
}

// tillRoutes mounts the till: a clerk's shift, its reports, the day view.
func (cn *console) tillRoutes(g *echo.Group) {
	sell := cn.requireRole(access.ActCounterSale)
	g.GET("/till", cn.tillPage, sell)
	g.POST("/till/open", cn.openShift, sell)
	g.POST("/till/close", cn.closeShift, sell)
	g.GET("/till/report", cn.tillReport, sell)
	g.GET("/till/shifts/:id", cn.tillShift, sell)
	g.GET("/till/day", cn.tillDayView, cn.requireRole(access.ActDiscrepancies))
}
