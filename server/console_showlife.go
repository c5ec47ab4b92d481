package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/web"
)

// showLifeRoutes mounts a show's edit and cancel pages, for managers.
func (cn *console) showLifeRoutes(g *echo.Group) {
	setUp := cn.requireRole(access.ActShows)
	g.GET("/shows/:id/edit", cn.showEditForm, setUp)
	g.POST("/shows/:id/edit", cn.editShow, setUp)
	g.POST("/shows/:id/prices", cn.repriceShow, setUp)
	g.POST("/shows/:id/plan", cn.replacePlan, setUp)
	g.GET("/shows/:id/cancel", cn.cancelShowForm, setUp)
	g.POST("/shows/:id/cancel", cn.cancelShow, setUp)
	g.POST("/shows/:id/publish", cn.publishShow, setUp)
}

// showEditForm shows the show's details in the form, disabled with the
// reason once the show may no longer be edited.
func (cn *console) showEditForm(c echo.Context) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	plan, err := cn.Engine.PlanCancelShow(c.Request().Context(), id)
	if err != nil {
		return err
	}
	p := cn.page(c, "showedit.title", web.NavShows)
	s := plan.Show
	d := showEditOf(p, s)
	switch {
	case s.Status == core.ShowCancelled:
		d.Locked = "showedit.locked_cancelled"
	case len(plan.Pending) > 0 || len(plan.Paid) > 0:
		d.Locked = "showedit.locked_orders"
	}
	return cn.renderShowEdit(c, p, d, nil, http.StatusOK)
}

// showParam reads the show the route's :id names (404 for an id that
// cannot be one).
func (cn *console) showParam(c echo.Context) (core.Show, error) {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return core.Show{}, echo.ErrNotFound
	}
	return cn.Engine.Store().Show(c.Request().Context(), id)
}

// showEditOf is the edit page of show s as stored, in p's zone.
func showEditOf(p web.Page, s core.Show) web.ShowEditData {
	return web.ShowEditData{Show: s, Form: web.ShowEditForm{Name: s.Name, Venue: s.Venue,
		StartsAt: p.DateTimeLocal(s.StartsAt), SalesEnd: p.DateTimeLocal(s.SalesEnd)}}
}

// priceFields are the show's categories in the prices form: as typed
// (typed, by code) or else as stored.
func (cn *console) priceFields(c echo.Context, s core.Show, typed map[string]string) ([]web.PriceField, error) {
	cats, err := cn.Engine.Store().PriceCategories(c.Request().Context(), s.ID)
	if err != nil {
		return nil, err
	}
	fields := make([]web.PriceField, len(cats))
	for i, k := range cats {
		v, ok := typed[k.Code]
		if !ok {
			v = web.AmountField(k.PriceCents, s.Currency)
		}
		fields[i] = web.PriceField{Code: k.Code, Name: k.Name, Value: v}
	}
	return fields, nil
}

// repriceShow saves the prices form through core.Engine.Reprice (the
// plan's rule: only before the first order); a refusal comes back on the
// form as typed, nothing written.
func (cn *console) repriceShow(c echo.Context) error {
	ctx := c.Request().Context()
	show, err := cn.showParam(c)
	if err != nil {
		return err
	}
	id := show.ID
	p := cn.page(c, "showedit.title", web.NavShows)
	d := showEditOf(p, show)
	cats, err := cn.Engine.Store().PriceCategories(ctx, id)
	if err != nil {
		return err
	}
	typed := make(map[string]string, len(cats))
	changes := make([]core.PriceChange, 0, len(cats))
	var said []string
	for _, k := range cats {
		v := strings.TrimSpace(c.FormValue("price_" + k.Code))
		typed[k.Code] = v
		cents, perr := core.ParseAmount(v, show.Currency)
		if perr != nil && d.PriceError == "" {
			d.PriceError = k.Name + ": " + perr.Error()
		}
		changes = append(changes, core.PriceChange{Code: k.Code, PriceCents: cents})
		said = append(said, k.Code+" "+web.AmountField(cents, show.Currency))
	}
	if d.PriceError == "" {
		if _, err = cn.Engine.Reprice(ctx, id, changes); err == nil {
			cn.audit(c, core.AuditEntry{Action: core.AuditShowReprice, Target: "show:" + strconv.FormatInt(id, 10),
				Detail: map[string]any{"prices": strings.Join(said, ", ") + " " + show.Currency}})
			return c.Redirect(http.StatusSeeOther, web.URL("/shows/"+strconv.FormatInt(id, 10)+"/edit?msg=prices_edited"))
		}
		if err := showEditRefused(err, &d, &d.PriceError); err != nil {
			return err
		}
	}
	return cn.renderShowEditRefused(c, p, d, typed)
}

// showEditRefused puts why an edit was refused on d: the show locked, or
// bad input in *msg; an error it cannot put in words is returned.
func showEditRefused(err error, d *web.ShowEditData, msg *string) error {
	var ce *core.Error
	switch {
	case errors.Is(err, core.ErrShowOnSale):
		d.Locked = "showedit.locked_orders"
	case errors.Is(err, core.ErrShowCancelled):
		d.Locked = "showedit.locked_cancelled"
	case errors.As(err, &ce) && ce.Kind == core.KindInvalid:
		*msg = ce.Message
	default:
		return err
	}
	return nil
}

// renderShowEditRefused answers a refused edit with the page: 409 when
// the show is locked, 422 for bad input; typed keeps the prices as typed.
func (cn *console) renderShowEditRefused(c echo.Context, p web.Page, d web.ShowEditData, typed map[string]string) error {
	status := http.StatusUnprocessableEntity
	if d.Locked != "" {
		status = http.StatusConflict
	}
	return cn.renderShowEdit(c, p, d, typed, status)
}

// renderShowEdit answers with the edit page: the prices form as typed
// (typed) or stored, the plan form as sent or else as stored.
func (cn *console) renderShowEdit(c echo.Context, p web.Page, d web.ShowEditData, typed map[string]string, status int) error {
	var err error
	if d.Prices, err = cn.priceFields(c, d.Show, typed); err != nil {
		return err
	}
	if d.Plan.Source == "" {
		if d.Plan, err = cn.planFormOf(c.Request().Context(), d.Show); err != nil {
			return err
		}
	}
	return render(c, status, web.ShowEditPage(p, d))
}

// editShow saves the form through core.Engine.EditShow, so it is checked
// and refused as PATCH /api/v1/shows/{id} is; a refusal comes back on the
// form with its reason, nothing written.
func (cn *console) editShow(c echo.Context) error {
	ctx := c.Request().Context()
	show, err := cn.showParam(c)
	if err != nil {
		return err
	}
	id := show.ID
	p := cn.page(c, "showedit.title", web.NavShows)
	f := web.ShowEditForm{Name: strings.TrimSpace(c.FormValue("name")), Venue: strings.TrimSpace(c.FormValue("venue")),
		StartsAt: strings.TrimSpace(c.FormValue("starts_at")), SalesEnd: strings.TrimSpace(c.FormValue("sales_end"))}
	d := web.ShowEditData{Show: show, Form: f}
	patch := core.ShowPatch{Name: &f.Name, Venue: &f.Venue}
	starts, ok1 := formTime(f.StartsAt, p.Loc)
	salesEnd, ok2 := formTime(f.SalesEnd, p.Loc)
	switch {
	case !ok1:
		d.Error = p.T("showedit.err_starts")
	case !ok2:
		d.Error = p.T("showedit.err_sales_end")
	default:
		patch.StartsAt, patch.SalesEnd = &starts, &salesEnd
		var edited core.Show
		if edited, err = cn.Engine.EditShow(ctx, id, patch); err == nil {
			detail := map[string]any{"name": edited.Name, "venue": edited.Venue, "starts_at": edited.StartsAt.Format(time.RFC3339)}
			if !edited.SalesEnd.IsZero() {
				detail["sales_end"] = edited.SalesEnd.Format(time.RFC3339)
			}
			cn.audit(c, core.AuditEntry{Action: core.AuditShowEdit, Target: "show:" + strconv.FormatInt(id, 10), Detail: detail})
			return c.Redirect(http.StatusSeeOther, web.URL("/shows/"+strconv.FormatInt(id, 10)+"/edit?msg=show_edited"))
		}
		if err := showEditRefused(err, &d, &d.Error); err != nil {
			return err
		}
	}
	return cn.renderShowEditRefused(c, p, d, nil)
}

// formTime reads a datetime-local value in the console's zone; "" is the
// zero time.
func formTime(v string, loc *time.Location) (time.Time, bool) {
	if v == "" {
		return time.Time{}, true
	}
	t, err := time.ParseInLocation(web.DateTimeLocalLayout, v, loc)
	if err != nil {
		// A browser sends seconds when the input's step asks for them.
		if t, err = time.ParseInLocation(web.DateTimeLocalLayout+":05", v, loc); err != nil {
			return time.Time{}, false
		}
	}
	return t.UTC(), true
}

// cancelShowForm lists what cancelling would do (or, once cancelled, the
// paid orders to refund).
func (cn *console) cancelShowForm(c echo.Context) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	plan, err := cn.Engine.PlanCancelShow(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.CancelShowPage(cn.page(c, "cancelshow.title", web.NavShows), web.CancelShowData{Plan: plan}))
}

// cancelShow cancels the show through core.Engine.CancelShow, the API's
// path: off sale first, then every pending hold ended through
// CancelAndRelease. Audited with the holds it ended and the paid orders
// left to refund.
func (cn *console) cancelShow(c echo.Context) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	res, err := cn.Engine.CancelShow(c.Request().Context(), id, core.ActorStaffPrefix+sessionOf(c).staff.Username)
	if err != nil {
		return err
	}
	paid := make([]string, len(res.Paid))
	for i, o := range res.Paid {
		paid[i] = o.OrderNo
	}
	cn.audit(c, core.AuditEntry{Action: core.AuditShowCancel, Target: "show:" + strconv.FormatInt(id, 10),
		Detail: map[string]any{"name": res.Show.Name, "cancelled_orders": res.Cancelled, "paid_orders": paid}})
	return c.Redirect(http.StatusSeeOther, web.URL("/shows/"+strconv.FormatInt(id, 10)+"/cancel?msg=show_cancelled"))
}

// publishShow puts a draft show on sale, audited.
func (cn *console) publishShow(c echo.Context) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	show, err := cn.Engine.PublishShow(c.Request().Context(), id)
	if err != nil {
		return err
	}
	cn.audit(c, core.AuditEntry{Action: core.AuditShowPublish, Target: "show:" + strconv.FormatInt(id, 10),
		Detail: map[string]any{"name": show.Name}})
	return c.Redirect(http.StatusSeeOther, web.URL("/shows/"+strconv.FormatInt(id, 10)+"/edit?msg=show_published"))
}
