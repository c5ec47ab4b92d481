package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/web"
)

// bestRulesRoutes mounts a show's best-available rules page, for managers.
func (cn *console) bestRulesRoutes(g *echo.Group) {
	setUp := cn.requireRole(access.ActShows)
	g.GET("/shows/:id/best-available", cn.bestRules, setUp)
	g.POST("/shows/:id/best-available", cn.saveBestRules, setUp)
}

// bestRules shows the show's rules and the ranking they give.
func (cn *console) bestRules(c echo.Context) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	show, err := cn.Engine.Store().Show(c.Request().Context(), id)
	if err != nil {
		return err
	}
	d := web.BestRulesData{Show: show, Form: web.BestRulesForm{AllowSingles: show.Best.AllowSingles}}
	if show.Best.FocalSet {
		d.Form.Custom, d.Form.X, d.Form.Y = true, strconv.Itoa(show.Best.FocalX), strconv.Itoa(show.Best.FocalY)
	}
	if d.Seats, err = cn.Engine.BestRanking(c.Request().Context(), id, show.Best); err != nil {
		return err
	}
	return render(c, http.StatusOK, web.BestRulesPage(cn.page(c, "bestrules.title", web.NavShows), d))
}

// saveBestRules previews (do=preview: the heat map of the rules in the
// form, nothing stored) or saves the rules, checked as the API checks
// them (core.Engine.SetBestRules). Refused rules come back on the form
// with the reason, the heat map still of the rules in force.
func (cn *console) saveBestRules(c echo.Context) error {
	ctx := c.Request().Context()
	show, err := cn.showParam(c)
	if err != nil {
		return err
	}
	id := show.ID
	p := cn.page(c, "bestrules.title", web.NavShows)
	d := web.BestRulesData{Show: show, Form: web.BestRulesForm{Custom: c.FormValue("focal") == "point",
		X: strings.TrimSpace(c.FormValue("x")), Y: strings.TrimSpace(c.FormValue("y")), AllowSingles: c.FormValue("allow_singles") != ""}}
	rules, ok := bestRulesOf(d.Form)
	if !ok {
		d.Error = p.T("bestrules.err_point")
	} else if c.FormValue("do") == "save" {
		_, err = cn.Engine.SetBestRules(ctx, id, rules)
		if err == nil {
			detail := map[string]any{"allow_singles": rules.AllowSingles} // no focal: the stage centre
			if rules.FocalSet {
				detail["focal"] = d.Form.X + "," + d.Form.Y
			}
			cn.audit(c, core.AuditEntry{Action: core.AuditBestRules, Target: "show:" + strconv.FormatInt(id, 10), Detail: detail})
			return c.Redirect(http.StatusSeeOther, web.URL("/shows/"+strconv.FormatInt(id, 10)+"/best-available?msg=best_rules_saved"))
		}
	} else {
		d.Trying = true
		d.Seats, err = cn.Engine.BestRanking(ctx, id, rules)
	}
	var ce *core.Error
	switch {
	case err == nil:
	case errors.As(err, &ce) && ce.Kind == core.KindInvalid:
		d.Error, d.Trying = ce.Message, false
	default:
		return err
	}
	status := http.StatusOK
	if d.Error != "" {
		status = http.StatusUnprocessableEntity
	}
	if !d.Trying {
		if d.Seats, err = cn.Engine.BestRanking(ctx, id, show.Best); err != nil {
			return err
		}
	}
	return render(c, status, web.BestRulesPage(p, d))
}

// bestRulesOf reads the form's rules; false when a focal point of its own
// is not two whole numbers.
func bestRulesOf(f web.BestRulesForm) (core.BestRules, bool) {
	r := core.BestRules{AllowSingles: f.AllowSingles}
	if !f.Custom {
		return r, true
	}
	x, errX := strconv.Atoi(f.X)
	y, errY := strconv.Atoi(f.Y)
	r.FocalSet, r.FocalX, r.FocalY = true, x, y
	return r, errX == nil && errY == nil
}
