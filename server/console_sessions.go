package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"seatflow/core/access"
	"seatflow/web"
)

// sessionRoutes mounts the sessions page, where everyone sees their own
// sessions and ends the others or all of them, and the staff page's action
// that ends another account's sessions. Each ending and its audit row
// commit in one transaction (store.EndSessions); the streams of the ended
// sessions on this instance end at once, those on other instances at their
// next keep-alive, when the session is no longer found.
func (cn *console) sessionRoutes(g *echo.Group, own echo.MiddlewareFunc) {
	g.GET("/sessions", cn.sessionsPage, own)
	g.POST("/sessions/end-others", cn.endOtherSessions, own)
	g.POST("/sessions/end-all", cn.endAllSessions, own)
	g.POST("/sessions/end", cn.endOneSession, own)
	g.POST("/staff/:id/sessions/end", cn.endStaffSessions, cn.requireRole(access.ActStaff))
}

// liveSession returns the session with tokenHash and its account while it
// is usable: access.ErrNoSession when it is unknown, expired, its account
// disabled, or it was unused for SessionIdle. An idle session is deleted
// here and its streams on this instance end, as at a logout.
func (cn *console) liveSession(ctx context.Context, tokenHash string) (access.Session, access.Staff, error) {
	now := cn.Clock.Now()
	sess, staff, err := cn.DB.Session(ctx, tokenHash, now)
	if err != nil {
		return access.Session{}, access.Staff{}, err
	}
	if !sess.Live(now, cn.SessionIdle) {
		if err := cn.DB.DeleteSession(ctx, tokenHash); err != nil {
			// It stays refused: the idle rule is checked on every use.
			cn.Logger.WarnContext(ctx, "console: deleting an idle session", "err", err)
		}
		cn.streams.endSession(tokenHash)
		return access.Session{}, access.Staff{}, access.ErrNoSession
	}
	return sess, staff, nil
}

// touchSession records a use of sess. Every console request reads the
// session row anyway, so this writes only when the recorded use is a
// minute old (access.SessionTouchEvery): a clerk clicking all day costs one
// UPDATE a minute, not one per request, and the idle rule loses at most
// that minute of precision.
func (cn *console) touchSession(ctx context.Context, sess access.Session) {
	now := cn.Clock.Now()
	if !sess.TouchDue(now) {
		return
	}
	if err := cn.DB.TouchSession(ctx, sess.TokenHash, now, access.SessionTouchEvery); err != nil {
		// Bookkeeping only: the request goes on; the next one tries again.
		cn.Logger.WarnContext(ctx, "console: recording a session's use", "err", err)
	}
}

func (cn *console) sessionsPage(c echo.Context) error {
	s := sessionOf(c)
	now := cn.Clock.Now()
	all, err := cn.DB.StaffSessions(c.Request().Context(), s.staff.ID, now)
	if err != nil {
		return err
	}
	d := web.SessionsData{Current: s.session.TokenHash}
	for _, x := range all {
		if x.Live(now, cn.SessionIdle) {
			d.Sessions = append(d.Sessions, x)
		}
	}
	return render(c, http.StatusOK, web.SessionsPage(cn.page(c, "sessions.title", ""), d))
}

// endOtherSessions logs the account out everywhere but here.
func (cn *console) endOtherSessions(c echo.Context) error {
	s := sessionOf(c)
	if err := cn.endSessions(c, s.staff.ID, s.session.TokenHash, access.AuditSessionsEndOthers); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/sessions?msg=sessions_ended"))
}

// endAllSessions logs the account out everywhere, here too.
func (cn *console) endAllSessions(c echo.Context) error {
	if err := cn.endSessions(c, sessionOf(c).staff.ID, "", access.AuditSessionsEndAll); err != nil {
		return err
	}
	cn.clearCookie(c, sessionCookie, web.Prefix)
	return c.Redirect(http.StatusSeeOther, web.URL("/login?msg=logged_out"))
}

// endStaffSessions is an admin logging another account out everywhere.
func (cn *console) endStaffSessions(c echo.Context) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	if id == sessionOf(c).staff.ID {
		// One's own sessions are ended from the sessions page, which
		// says which one is this.
		return errBadRequest
	}
	if err := cn.endSessions(c, id, "", access.AuditStaffSessionsEnd); err != nil {
		return err // an unknown account is access.ErrStaffNotFound: 404
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/staff?msg=staff_sessions_ended"))
}

// endSessions ends the sessions of account staffID but keep, audited as
// action by the request's staff, and their streams on this instance.
func (cn *console) endSessions(c echo.Context, staffID int64, keep, action string) error {
	ended, err := cn.DB.EndSessions(c.Request().Context(), staffID, keep, staffAction(c).Entry(cn.Clock.Now(), action, "", nil))
	if err != nil {
		return err
	}
	for _, h := range ended {
		cn.streams.endSession(h)
	}
	return nil
}
