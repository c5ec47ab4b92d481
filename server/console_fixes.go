package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
	"seatflow/web"
)

// endOneSession logs out one of the account's other sessions, named by the
// key the sessions page shows (web.SessionKey); this one is ended with
// "log out everywhere". A session ended meanwhile is a message, not an
// error.
func (cn *console) endOneSession(c echo.Context) error {
	s := sessionOf(c)
	ctx := c.Request().Context()
	key := c.FormValue("session")
	if key == "" || key == web.SessionKey(s.session.TokenHash) {
		return errBadRequest
	}
	all, err := cn.DB.StaffSessions(ctx, s.staff.ID, cn.Clock.Now())
	if err != nil {
		return err
	}
	for _, x := range all {
		if web.SessionKey(x.TokenHash) != key {
			continue
		}
		audit := staffAction(c).Entry(cn.Clock.Now(), access.AuditSessionEnd, core.ActorStaffPrefix+s.staff.Username, nil)
		ended, err := cn.DB.EndSession(ctx, s.staff.ID, x.TokenHash, audit)
		if err != nil {
			return err
		}
		if ended {
			cn.streams.endSession(x.TokenHash)
			return c.Redirect(http.StatusSeeOther, web.URL("/sessions?msg=session_ended"))
		}
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/sessions?msg=session_gone"))
}

// noSuchOrder is the order page of a number no order has (a payment for a
// number never placed, a reconcile item naming one): it says no such
// order was ever placed and lists the cases recorded for the number.
func (cn *console) noSuchOrder(c echo.Context, err error) error {
	if !errors.Is(err, core.ErrOrderNotFound) {
		return err
	}
	no := core.NormalizeOrderNo(c.Param("no"))
	cases, cerr := cn.DB.DiscrepancyCases(c.Request().Context(), store.CaseQuery{OrderNo: no})
	if cerr != nil {
		return cerr
	}
	return render(c, http.StatusNotFound, web.NoOrderPage(cn.page(c, "noorder.title", web.NavHolds), no, cases))
}
