package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
	"seatflow/web"
)

// Passwords and roles: staff change their own password (which ends their
// other sessions), an admin hands over a one-time reset link instead of
// typing a password for someone, and an admin changes roles. Every change
// is audited in the transaction that makes it.

// resetCookie carries the reset form's double-submit token: the page is
// for someone with no session, like the login page.
const resetCookie = "seatflow_reset"

func (cn *console) passwordRoutes(g *echo.Group, own, staff echo.MiddlewareFunc) {
	g.GET("/account/password", cn.passwordForm, own)
	g.POST("/account/password", cn.changePassword, own)
	g.POST("/staff/:id/role", cn.setStaffRole, staff)
	g.POST("/staff/:id/reset-link", cn.makeResetLink, staff)
	g.GET("/reset/:token", cn.resetForm, noReferrer)
	g.POST("/reset/:token", cn.resetPassword, noReferrer)
}

// noReferrer keeps a reset link's token out of Referer headers.
func noReferrer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Referrer-Policy", "no-referrer")
		c.Response().Header().Set("Cache-Control", "no-store")
		return next(c)
	}
}

// hashPassword checks a new password for username and hashes it, holding
// one of the login's hashing slots: hashing is what a flood costs the
// server, whichever form sends it.
func (cn *console) hashPassword(ctx context.Context, password, username string) (string, error) {
	if err := access.ValidPassword(password, username); err != nil {
		return "", err
	}
	select {
	case cn.hashSlots <- struct{}{}:
		defer func() { <-cn.hashSlots }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(hash), nil
}

// ownPasswordRight checks the signed-in account's password, asked again
// for a change that needs it. A stolen session must not become a way to
// guess the password: a wrong one counts as the account's failed login
// (callers refuse first while accountLimiter is over).
func (cn *console) ownPasswordRight(ctx context.Context, username, password string) (bool, error) {
	_, hash, err := cn.DB.StaffLogin(ctx, username)
	if err != nil {
		return false, err
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil {
		cn.accountLimiter.allow(username)
		return false, nil
	}
	return true, nil
}

func (cn *console) passwordForm(c echo.Context) error {
	return render(c, http.StatusOK, web.PasswordPage(cn.page(c, "password.title", ""), web.PasswordData{}))
}

func (cn *console) changePassword(c echo.Context) error {
	ctx, s := c.Request().Context(), sessionOf(c)
	refuse := func(status int, key string) error {
		return render(c, status, web.PasswordPage(cn.page(c, "password.title", ""), web.PasswordData{Error: key}))
	}
	if cn.accountLimiter.over(s.staff.Username) {
		c.Response().Header().Set("Retry-After", fmt.Sprint(int(loginTryWindow/time.Second)))
		return refuse(http.StatusTooManyRequests, "login.throttled")
	}
	if right, err := cn.ownPasswordRight(ctx, s.staff.Username, c.FormValue("current")); err != nil {
		return err
	} else if !right {
		return refuse(http.StatusUnprocessableEntity, "password.err_current")
	}
	if c.FormValue("password") != c.FormValue("confirm") {
		return refuse(http.StatusUnprocessableEntity, "password.err_confirm")
	}
	hash, err := cn.hashPassword(ctx, c.FormValue("password"), s.staff.Username)
	if key := staffFormError(err); key != "" {
		return refuse(http.StatusUnprocessableEntity, key)
	}
	if err != nil {
		return err
	}
	if err := cn.DB.SetPassword(ctx, s.staff.ID, hash, s.session.TokenHash,
		staffAction(c).Entry(cn.Clock.Now(), access.AuditPasswordChange, "staff:"+s.staff.Username, nil)); err != nil {
		return err
	}
	cn.streams.end(func(st *openStream) bool { return st.staffID == s.staff.ID && st.tokenHash != s.session.TokenHash })
	return c.Redirect(http.StatusSeeOther, web.URL("/?msg=password_changed"))
}

// staffTarget reads the account a staff action names by :id: 404 when
// there is none, and acting on oneself refused (an admin who demotes or
// locks out themselves needs another admin to get back). ok is false when
// it has answered the request itself, with err as the answer.
func (cn *console) staffTarget(c echo.Context) (target access.Staff, ok bool, err error) {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return access.Staff{}, false, echo.ErrNotFound
	}
	if id == sessionOf(c).staff.ID {
		return access.Staff{}, false, cn.renderStaff(c, http.StatusConflict, web.StaffData{FormError: "staff.err_self"})
	}
	target, err = cn.DB.StaffByID(c.Request().Context(), id)
	if errors.Is(err, access.ErrStaffNotFound) {
		return access.Staff{}, false, echo.ErrNotFound
	}
	return target, err == nil, err
}

func (cn *console) setStaffRole(c echo.Context) error {
	target, ok, err := cn.staffTarget(c)
	if !ok {
		return err
	}
	role, err := access.ParseRole(c.FormValue("role"))
	if err != nil {
		return cn.renderStaff(c, http.StatusUnprocessableEntity, web.StaffData{FormError: "staff.err_role"})
	}
	if _, err := cn.DB.SetStaffRole(c.Request().Context(), target.ID, role, staffAction(c).Entry(cn.Clock.Now(), access.AuditStaffRole, "", nil)); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/staff?msg=staff_updated"))
}

// makeResetLink shows a new reset link for the account once, on the page
// itself: a redirect would put it in the URL and the browser's history.
func (cn *console) makeResetLink(c echo.Context) error {
	target, ok, err := cn.staffTarget(c)
	if !ok {
		return err
	}
	if target.Disabled {
		return echo.ErrNotFound
	}
	path, err := createResetLink(c.Request().Context(), cn.DB, target, staffAction(c).Entry(cn.Clock.Now(), access.AuditPasswordResetLink, "staff:"+target.Username, nil))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return cn.renderStaff(c, http.StatusOK, web.StaffData{ResetFor: target.Username,
		ResetLink: c.Scheme() + "://" + c.Request().Host + path})
}

// createResetLink stores a new link for s (replacing older ones) and
// returns its path: the one path for the console and `seatflow staff
// reset-link`.
func createResetLink(ctx context.Context, db *store.DB, s access.Staff, audit core.AuditEntry) (string, error) {
	token := newToken()
	if err := db.CreatePasswordReset(ctx, s.ID, hashToken(token), audit.At, audit.At.Add(access.PasswordResetTTL), audit); err != nil {
		return "", err
	}
	return web.URL("/reset/" + token), nil
}

func (cn *console) resetForm(c echo.Context) error {
	s, err := cn.DB.PasswordReset(c.Request().Context(), hashToken(c.Param("token")), cn.Clock.Now())
	if errors.Is(err, access.ErrResetLinkInvalid) {
		return cn.renderReset(c, http.StatusNotFound, web.ResetData{Error: "reset.invalid"})
	}
	if err != nil {
		return err
	}
	return cn.renderReset(c, http.StatusOK, web.ResetData{Username: s.Username})
}

func (cn *console) renderReset(c echo.Context, status int, d web.ResetData) error {
	if d.Username != "" {
		d.Path = web.URL("/reset/" + c.Param("token"))
		d.Token = newToken()
		cn.setCookie(c, resetCookie, d.Token, d.Path, time.Hour)
	}
	return render(c, status, web.ResetPage(cn.page(c, "reset.title", ""), d))
}

func (cn *console) resetPassword(c echo.Context) error {
	ctx, tokenHash, now := c.Request().Context(), hashToken(c.Param("token")), cn.Clock.Now()
	s, err := cn.DB.PasswordReset(ctx, tokenHash, now)
	if errors.Is(err, access.ErrResetLinkInvalid) {
		return cn.renderReset(c, http.StatusNotFound, web.ResetData{Error: "reset.invalid"})
	}
	if err != nil {
		return err
	}
	d := web.ResetData{Username: s.Username}
	if !formTokenValid(c, resetCookie) {
		d.Error = "login.expired"
		return cn.renderReset(c, http.StatusForbidden, d)
	}
	if c.FormValue("password") != c.FormValue("confirm") {
		d.Error = "password.err_confirm"
		return cn.renderReset(c, http.StatusUnprocessableEntity, d)
	}
	hash, err := cn.hashPassword(ctx, c.FormValue("password"), s.Username)
	if key := staffFormError(err); key != "" {
		d.Error = key
		return cn.renderReset(c, http.StatusUnprocessableEntity, d)
	}
	if err != nil {
		return err
	}
	audit := core.AuditEntry{At: now, Action: access.AuditPasswordReset, IP: c.RealIP()}
	if _, err := cn.DB.UsePasswordReset(ctx, tokenHash, hash, now, audit); errors.Is(err, access.ErrResetLinkInvalid) {
		return cn.renderReset(c, http.StatusNotFound, web.ResetData{Error: "reset.invalid"})
	} else if err != nil {
		return err
	}
	cn.streams.endStaff(s.ID)
	cn.clearCookie(c, resetCookie, web.URL("/reset/"+c.Param("token")))
	return c.Redirect(http.StatusSeeOther, web.URL("/login?msg=password_reset"))
}

// StaffResetLink is `seatflow staff reset-link NAME`: a one-time link to
// set the account's password, for the admin who has none left to ask.
func StaffResetLink(ctx context.Context, db *store.DB, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: seatflow staff reset-link NAME")
	}
	s, err := cliStaff(ctx, db, args[0])
	if err != nil {
		return fmt.Errorf("staff reset-link: %w", err)
	}
	if s.Disabled {
		return fmt.Errorf("staff reset-link: %s is disabled", s.Username)
	}
	path, err := createResetLink(ctx, db, s, core.AuditEntry{At: time.Now().UTC(), Staff: cliActor.Staff,
		Action: access.AuditPasswordResetLink, Target: "staff:" + s.Username})
	if err != nil {
		return fmt.Errorf("staff reset-link: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "password link for %s (works once, for %v), on this server's address:\n  %s\n",
		s.Username, access.PasswordResetTTL, path)
	return err
}
