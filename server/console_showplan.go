package server

import (
	"context"
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/web"
)

// The edit page's plan form replaces a show's whole plan (categories with
// their prices, and seats) through core.Engine.UpdatePlan, as PUT
// /api/v1/shows/{id}/plan does: only until the first order (show_on_sale).
// It reads the same fields as the new show form (planFromForm).

// planFormOf fills the plan form with the show's plan as stored: its
// categories as "code,name,price" lines, a grid of its rows and seats per
// row, the category when there is one.
func (cn *console) planFormOf(ctx context.Context, s core.Show) (web.NewShowData, error) {
	cats, err := cn.Engine.Store().PriceCategories(ctx, s.ID)
	if err != nil {
		return web.NewShowData{}, err
	}
	seats, err := cn.Engine.Store().Seats(ctx, s.ID)
	if err != nil {
		return web.NewShowData{}, err
	}
	var lines strings.Builder
	w := csv.NewWriter(&lines)
	for _, k := range cats {
		_ = w.Write([]string{k.Code, k.Name, web.AmountField(k.PriceCents, s.Currency)}) // a strings.Builder never fails
	}
	w.Flush()
	rows, perRow := 0, 0
	for _, st := range seats {
		rows, perRow = max(rows, st.Row), max(perRow, st.Col)
	}
	d := web.NewShowData{Currency: s.Currency, Categories: lines.String(), Source: "grid",
		Rows: strconv.Itoa(rows), PerRow: strconv.Itoa(perRow)}
	if len(cats) == 1 {
		d.GridCategory = cats[0].Code
	}
	return d, nil
}

// replacePlan previews or saves the plan form; a refusal comes back on the
// form with its reason and the entries as typed, nothing written.
func (cn *console) replacePlan(c echo.Context) error {
	show, err := cn.showParam(c)
	if err != nil {
		return err
	}
	id := show.ID
	p := cn.page(c, "showedit.title", web.NavShows)
	d := showEditOf(p, show)
	d.Plan = web.NewShowData{Currency: show.Currency, Categories: c.FormValue("categories"), Source: c.FormValue("source"),
		Rows: c.FormValue("rows"), PerRow: c.FormValue("seats_per_row"), GridCategory: strings.TrimSpace(c.FormValue("grid_category"))}
	spec, csvPlan, err := planFromForm(c, &d.Plan, show.Currency)
	var v web.ShowPreview
	if err == nil {
		if v.Categories, v.Seats, err = core.BuildPlan(spec); err == nil {
			err = everyCategoryUsed(v)
		}
	}
	if err == nil && c.FormValue("preview") != "" {
		d.PlanPreview = &v
		return cn.renderShowEdit(c, p, d, nil, http.StatusOK)
	}
	if err == nil {
		if _, err = cn.Engine.UpdatePlan(c.Request().Context(), id, spec); err == nil {
			cn.audit(c, core.AuditEntry{Action: core.AuditShowPlan, Target: "show:" + strconv.FormatInt(id, 10),
				Detail: map[string]any{"seats": len(v.Seats), "categories": len(v.Categories)}})
			return c.Redirect(http.StatusSeeOther, web.URL("/shows/"+strconv.FormatInt(id, 10)+"/edit?msg=plan_replaced"))
		}
	}
	if core.ErrorKind(err) == core.KindInvalid {
		d.PlanError = planMessage(err, csvPlan)
	} else if err := showEditRefused(err, &d, &d.PlanError); err != nil {
		return err
	}
	return cn.renderShowEditRefused(c, p, d, nil)
}
