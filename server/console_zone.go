package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/web"
)

// zoneRoutes mounts the time zone page, where everyone picks the zone
// their console times are shown in. The change and its audit row commit in
// one transaction; the next page is in the new zone.
func (cn *console) zoneRoutes(g *echo.Group, own echo.MiddlewareFunc) {
	g.GET("/account/zone", cn.zoneForm, own)
	g.POST("/account/zone", cn.setZone, own)
}

func (cn *console) zoneForm(c echo.Context) error {
	return cn.renderZone(c, http.StatusOK, web.ZoneData{Zone: sessionOf(c).staff.TimeZone})
}

func (cn *console) renderZone(c echo.Context, status int, d web.ZoneData) error {
	return render(c, status, web.ZonePage(cn.page(c, "zone.title", ""), d))
}

// setZone stores the zone named in the form, or the server's for an empty
// one. A name the zone database does not know comes back on the form.
func (cn *console) setZone(c echo.Context) error {
	s, name := sessionOf(c), strings.TrimSpace(c.FormValue("time_zone"))
	if _, err := core.TimeZone(name); err != nil {
		return cn.renderZone(c, http.StatusUnprocessableEntity, web.ZoneData{Zone: name, Error: "zone.err_invalid"})
	}
	if err := cn.DB.SetStaffTimeZone(c.Request().Context(), s.staff.ID, name,
		staffAction(c).Entry(cn.Clock.Now(), core.AuditTimeZone, "staff:"+s.staff.Username, nil)); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/account/zone?msg=zone_changed"))
}
