package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"seatflow/web"
)

// checkinRoutes mounts a show's check-in page for ops: admitted of
// expected, per gate, and arrivals over time (core/checkin/counts.go).
func (cn *console) checkinRoutes(g *echo.Group, view echo.MiddlewareFunc) {
	g.GET("/shows/:id/checkins", cn.checkinsPage, view)
	g.GET("/shows/:id/checkins/live", cn.checkinsLive, view)
}

func (cn *console) checkinsData(c echo.Context) (web.CheckinsData, error) {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return web.CheckinsData{}, echo.ErrNotFound
	}
	ctx := c.Request().Context()
	show, err := cn.Engine.Store().Show(ctx, id)
	if err != nil {
		return web.CheckinsData{}, err
	}
	d := web.CheckinsData{Show: show}
	if d.Counts, err = cn.Checkins.Counts(ctx, id); err != nil {
		return d, err
	}
	d.Arrivals, err = cn.Checkins.Arrivals(ctx, id)
	return d, err
}

func (cn *console) checkinsPage(c echo.Context) error {
	d, err := cn.checkinsData(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.CheckinsPage(cn.page(c, "checkins.title", web.NavShows), d))
}

func (cn *console) checkinsLive(c echo.Context) error {
	d, err := cn.checkinsData(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.CheckinsLive(cn.page(c, "checkins.title", web.NavShows), d))
}
