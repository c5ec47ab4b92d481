package server

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"seatflow/web"
)

// A form that fails validation is answered on its POST URL, so the address
// bar shows that URL; reopening it (a reload after the fact, a bookmark, a
// shared link) must lead back to the page of the form, not to a 404. Each
// action route gets a GET that redirects to its page.
var reopenRoutes = []struct{ action, page string }{
	{"/orders/:no/cancel", ""},
	{"/orders/:no/extend", ""},
	{"/orders/:no/refund", ""},
	{"/orders/:no/pay", ""},
	{"/shows/:id/block", ""},
	{"/shows/:id/unblock", ""},
	{"/shows/:id/counter", ""},
	{"/discrepancies/:id/take", ""},
	{"/discrepancies/:id/move", ""},
	{"/discrepancies/:id/note", ""},
	{"/reconcile/run", ""},
	{"/reconcile/dry-run", ""},
	{"/reconcile/runs/:id/apply", ""},
	{"/staff/:id/disable", "/staff"},
	{"/staff/:id/enable", "/staff"},
}

// mountReopen registers the redirects; page "" is the action's parent path.
func (cn *console) mountReopen(g *echo.Group, mw echo.MiddlewareFunc) {
	for _, r := range reopenRoutes {
		page := r.page
		if page == "" {
			page = path.Dir(r.action)
		}
		g.GET(r.action, func(c echo.Context) error {
			to := page
			for _, name := range c.ParamNames() {
				to = strings.Replace(to, ":"+name, url.PathEscape(c.Param(name)), 1)
			}
			return c.Redirect(http.StatusSeeOther, web.URL(to))
		}, mw)
	}
}
