package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
	"seatflow/web"
)

// The optional second factor (TOTP): set up and turned off by its owner,
// removed by an admin for someone who lost their phone, asked for at
// sign-in after the password, and required before anything else for the
// roles SEATFLOW_REQUIRE_2FA names.

const (
	// loginCodeTTL is how long a sign-in waits for its code.
	loginCodeTTL = 5 * time.Minute
	// loginCodeTries is how many codes one sign-in may try: with 3 valid
	// codes in a million, five tries leave a guesser no real chance, and
	// every new sign-in costs the password again.
	loginCodeTries = 5
	// offerReuse keeps one offer on screen while its owner types the code
	// (a reload within it shows the same QR code).
	offerReuse = 10 * time.Minute
)

func (cn *console) secondFactorRoutes(g *echo.Group, own, staff echo.MiddlewareFunc) {
	g.POST("/login/code", cn.loginCode)
	g.GET("/account/2fa", cn.secondFactorPage, own)
	g.POST("/account/2fa", cn.confirmSecondFactor, own)
	g.POST("/account/2fa/disable", cn.disableSecondFactor, own)
	g.POST("/staff/:id/2fa-reset", cn.resetSecondFactor, staff)
	g.POST("/staff/:id/2fa-unlock", cn.unlockSecondFactor, staff)
}

// secondFactorPaths are what an account SEATFLOW_REQUIRE_2FA covers may
// use before it has a second factor: setting one up, and leaving.
var secondFactorPaths = map[string]bool{
	web.URL("/account/2fa"): true, web.URL("/account/2fa/disable"): true, web.URL("/logout"): true,
}

// missingSecondFactor sends an account that must have a second factor and
// has none to the page that sets one up, and reports whether it did.
func (cn *console) missingSecondFactor(c echo.Context, s *staffSession) (bool, error) {
	if !cn.SecondFactor.Required(s.staff.Role) || secondFactorPaths[c.Path()] {
		return false, nil
	}
	f, ok, err := cn.DB.TOTP(c.Request().Context(), s.staff.ID)
	if err != nil || (ok && f.Confirmed()) {
		return false, err
	}
	target := web.URL("/account/2fa")
	switch {
	case isHTMX(c):
		c.Response().Header().Set("HX-Redirect", target)
		return true, c.NoContent(http.StatusForbidden)
	case c.Request().Header.Get(echo.HeaderAccept) == "text/event-stream":
		return true, c.NoContent(http.StatusForbidden)
	}
	return true, c.Redirect(http.StatusSeeOther, target)
}

// useCode accepts code for factor f at now once: a valid code of a step not
// accepted before (with confirm, the code that confirms an offer; audit,
// when set, is written with it).
func (cn *console) useCode(ctx context.Context, f access.TOTP, code string, confirm bool, now time.Time, audit *core.AuditEntry) (bool, error) {
	step, valid := access.TOTPStep(f.Secret, code, now)
	if !valid {
		return false, nil
	}
	return cn.DB.UseTOTPStep(ctx, f.StaffID, step, confirm, now, audit)
}

// wrongCode counts a wrong code for staff's factor in the database, where
// every instance sees it, and reports whether it locked the factor.
func (cn *console) wrongCode(c echo.Context, staff access.Staff, now time.Time) (bool, error) {
	ctx := c.Request().Context()
	cn.totpFailures.Inc()
	until, err := cn.DB.FailTOTPCode(ctx, staff.ID, now, core.AuditEntry{At: now, Staff: staff.Username, Role: staff.Role,
		Action: access.AuditTOTPLocked, Target: "staff:" + staff.Username, IP: c.RealIP()})
	if err != nil || until.IsZero() {
		return false, err
	}
	cn.totpLockouts.Inc()
	cn.Logger.WarnContext(ctx, "console: second factor locked after too many wrong codes", "staff", staff.Username,
		"until", until, "ip", c.RealIP())
	return true, nil
}

// secondFactorLocked answers a sign-in whose factor is locked: 429 with
// when the lock ends.
func (cn *console) secondFactorLocked(c echo.Context, f access.TOTP, now time.Time) error {
	c.Response().Header().Set("Retry-After", fmt.Sprint(int(f.LockedUntil.Sub(now).Seconds())+1))
	return cn.renderLogin(c, http.StatusTooManyRequests, web.LoginData{Error: "login.code_locked"})
}

// askForCode is the sign-in's second step: the password was right, the
// account has a second factor. No session exists until the code is.
func (cn *console) askForCode(c echo.Context, staff access.Staff, next string) error {
	token, now := newToken(), cn.Clock.Now()
	if err := cn.DB.CreateLoginChallenge(c.Request().Context(), hashToken(token),
		store.LoginChallenge{StaffID: staff.ID, Next: truncate(next, 512)}, now, now.Add(loginCodeTTL)); err != nil {
		return err
	}
	cn.clearCookie(c, loginCookie, web.URL("/login"))
	return cn.renderLoginCode(c, http.StatusOK, web.LoginCodeData{Challenge: token})
}

func (cn *console) renderLoginCode(c echo.Context, status int, d web.LoginCodeData) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return render(c, status, web.LoginCodePage(cn.page(c, "login.code_title", ""), d))
}

// loginCode checks the code of a waiting sign-in. The challenge token is
// the form's CSRF defence: only the browser that gave the password has it.
func (cn *console) loginCode(c echo.Context) error {
	ctx, now, token := c.Request().Context(), cn.Clock.Now(), c.FormValue("challenge")
	if !sameOriginPost(c.Request()) || token == "" {
		return cn.renderLogin(c, http.StatusForbidden, web.LoginData{Error: "login.expired"})
	}
	ch, err := cn.DB.TryLoginChallenge(ctx, hashToken(token), now, loginCodeTries)
	if errors.Is(err, access.ErrNoChallenge) {
		return cn.renderLogin(c, http.StatusUnauthorized, web.LoginData{Error: "login.code_expired"})
	}
	if err != nil {
		return err
	}
	staff, err := cn.DB.StaffByID(ctx, ch.StaffID)
	if err != nil && !errors.Is(err, access.ErrStaffNotFound) {
		return err
	}
	f, ok, err := cn.DB.TOTP(ctx, ch.StaffID)
	if err != nil {
		return err
	}
	if staff.ID == 0 || staff.Disabled || !ok || !f.Confirmed() {
		// Disabled, or the factor removed, since the password was given.
		return errors.Join(cn.DB.DeleteLoginChallenge(ctx, hashToken(token)),
			cn.renderLogin(c, http.StatusUnauthorized, web.LoginData{Error: "login.code_expired"}))
	}
	// Wrong codes count as the account's failed logins: with the password
	// known, new sign-ins must not give endless fresh tries at the code.
	if cn.accountLimiter.over(staff.Username) {
		return cn.throttled(c, web.LoginData{}, loginTryWindow)
	}
	if f.Locked(now) {
		return errors.Join(cn.DB.DeleteLoginChallenge(ctx, hashToken(token)), cn.secondFactorLocked(c, f, now))
	}
	valid, err := cn.useCode(ctx, f, c.FormValue("code"), false, now, nil)
	if err != nil {
		return err
	}
	if !valid {
		cn.accountLimiter.allow(staff.Username)
		cn.audit(c, core.AuditEntry{Staff: staff.Username, Role: staff.Role, Action: access.AuditLoginCodeFailed})
		if locked, err := cn.wrongCode(c, staff, now); err != nil {
			return err
		} else if locked {
			if f, _, err = cn.DB.TOTP(ctx, staff.ID); err != nil {
				return err
			}
			return errors.Join(cn.DB.DeleteLoginChallenge(ctx, hashToken(token)), cn.secondFactorLocked(c, f, now))
		}
		return cn.renderLoginCode(c, http.StatusUnauthorized, web.LoginCodeData{Challenge: token, Error: "login.code_wrong"})
	}
	if err := cn.DB.DeleteLoginChallenge(ctx, hashToken(token)); err != nil {
		return err
	}
	return cn.startSession(c, staff, ch.Next)
}

func (cn *console) secondFactorPage(c echo.Context) error {
	return cn.renderSecondFactor(c, http.StatusOK, "")
}

// renderSecondFactor shows the account's factor, or an offer to set one up
// (the one offered last when it is recent, so a reload keeps the QR code).
func (cn *console) renderSecondFactor(c echo.Context, status int, errKey string) error {
	ctx, s, now := c.Request().Context(), sessionOf(c), cn.Clock.Now()
	d := web.SecondFactorData{Required: cn.SecondFactor.Required(s.staff.Role), Error: errKey}
	f, ok, err := cn.DB.TOTP(ctx, s.staff.ID)
	if err != nil {
		return err
	}
	switch {
	case ok && f.Confirmed():
		d.Confirmed = f.ConfirmedAt
	case ok && now.Sub(f.CreatedAt) < offerReuse:
		d.Secret = f.Secret
	default:
		if d.Secret, err = access.NewTOTPSecret(s.staff.Username); err != nil {
			return err
		}
		if err := cn.DB.OfferTOTP(ctx, s.staff.ID, d.Secret, now); errors.Is(err, access.ErrTOTPNoKey) {
			d.Secret, d.Error, status = "", "totp.no_key", http.StatusServiceUnavailable
		} else if err != nil {
			return err
		}
	}
	if d.Secret != "" {
		if d.QR, err = web.QRCode(access.TOTPURL(d.Secret, s.staff.Username)); err != nil {
			return err
		}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return render(c, status, web.SecondFactorPage(cn.page(c, "totp.title", ""), d))
}

func (cn *console) confirmSecondFactor(c echo.Context) error {
	ctx, s, now := c.Request().Context(), sessionOf(c), cn.Clock.Now()
	f, ok, err := cn.DB.TOTP(ctx, s.staff.ID)
	if err != nil {
		return err
	}
	if !ok || f.Confirmed() {
		return c.Redirect(http.StatusSeeOther, web.URL("/account/2fa"))
	}
	// The password again: a stolen session alone must not put the thief's
	// factor on the account and lock its owner out.
	if cn.accountLimiter.over(s.staff.Username) {
		return cn.renderSecondFactor(c, http.StatusTooManyRequests, "login.throttled")
	}
	if right, err := cn.ownPasswordRight(ctx, s.staff.Username, c.FormValue("password")); err != nil {
		return err
	} else if !right {
		return cn.renderSecondFactor(c, http.StatusUnprocessableEntity, "totp.err_enable")
	}
	audit := staffAction(c).Entry(now, access.AuditTOTPEnable, "staff:"+s.staff.Username, nil)
	valid, err := cn.useCode(ctx, f, c.FormValue("code"), true, now, &audit)
	if err != nil {
		return err
	}
	if !valid {
		return cn.renderSecondFactor(c, http.StatusUnprocessableEntity, "totp.err_enable")
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/?msg=totp_enabled"))
}

// disableSecondFactor turns one's factor off: the password and a code
// both, so neither a stolen session nor a stolen phone alone can.
func (cn *console) disableSecondFactor(c echo.Context) error {
	ctx, s, now := c.Request().Context(), sessionOf(c), cn.Clock.Now()
	if cn.SecondFactor.Required(s.staff.Role) {
		return cn.renderSecondFactor(c, http.StatusConflict, "totp.required_keep")
	}
	f, ok, err := cn.DB.TOTP(ctx, s.staff.ID)
	if err != nil {
		return err
	}
	if !ok || !f.Confirmed() {
		return c.Redirect(http.StatusSeeOther, web.URL("/account/2fa"))
	}
	if cn.accountLimiter.over(s.staff.Username) {
		return cn.renderSecondFactor(c, http.StatusTooManyRequests, "login.throttled")
	}
	if f.Locked(now) {
		return cn.renderSecondFactor(c, http.StatusTooManyRequests, "login.code_locked")
	}
	right, err := cn.ownPasswordRight(ctx, s.staff.Username, c.FormValue("password"))
	if err != nil {
		return err
	}
	if !right {
		return cn.renderSecondFactor(c, http.StatusUnprocessableEntity, "totp.err_disable")
	}
	if valid, err := cn.useCode(ctx, f, c.FormValue("code"), false, now, nil); err != nil {
		return err
	} else if !valid {
		cn.accountLimiter.allow(s.staff.Username) // a wrong code counts like a wrong password
		if locked, err := cn.wrongCode(c, s.staff, now); err != nil {
			return err
		} else if locked {
			return cn.renderSecondFactor(c, http.StatusTooManyRequests, "login.code_locked")
		}
		return cn.renderSecondFactor(c, http.StatusUnprocessableEntity, "totp.err_disable")
	}
	if _, err := cn.DB.DeleteTOTP(ctx, s.staff.ID, staffAction(c).Entry(now, access.AuditTOTPDisable, "staff:"+s.staff.Username, nil)); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/?msg=totp_disabled"))
}

func (cn *console) resetSecondFactor(c echo.Context) error {
	target, ok, err := cn.staffTarget(c)
	if !ok {
		return err
	}
	if _, err := cn.DB.DeleteTOTP(c.Request().Context(), target.ID,
		staffAction(c).Entry(cn.Clock.Now(), access.AuditTOTPReset, "staff:"+target.Username, nil)); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/staff?msg=staff_updated"))
}

// unlockSecondFactor lifts the lock wrong codes put on an account's
// factor, keeping the factor: for its owner, who is known to the admin.
func (cn *console) unlockSecondFactor(c echo.Context) error {
	target, ok, err := cn.staffTarget(c)
	if !ok {
		return err
	}
	if _, err := cn.DB.UnlockTOTP(c.Request().Context(), target.ID, cn.Clock.Now(),
		staffAction(c).Entry(cn.Clock.Now(), access.AuditTOTPUnlock, "staff:"+target.Username, nil)); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/staff?msg=staff_updated"))
}

// StaffResetSecondFactor is `seatflow staff reset-2fa NAME`: removes the
// account's second factor, for the admin who lost their phone.
func StaffResetSecondFactor(ctx context.Context, db *store.DB, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: seatflow staff reset-2fa NAME")
	}
	s, err := cliStaff(ctx, db, args[0])
	if err != nil {
		return fmt.Errorf("staff reset-2fa: %w", err)
	}
	had, err := db.DeleteTOTP(ctx, s.ID, core.AuditEntry{At: time.Now().UTC(), Staff: cliActor.Staff,
		Action: access.AuditTOTPReset, Target: "staff:" + s.Username})
	if err != nil {
		return fmt.Errorf("staff reset-2fa: %w", err)
	}
	if !had {
		_, err = fmt.Fprintf(stdout, "%s has no second factor\n", s.Username)
		return err
	}
	_, err = fmt.Fprintf(stdout, "removed the second factor of %s: the next sign-in needs the password only\n", s.Username)
	return err
}

// StaffUnlockSecondFactor is `seatflow staff unlock-2fa NAME`: lifts the
// lock wrong codes put on the account's second factor, keeping the factor.
func StaffUnlockSecondFactor(ctx context.Context, db *store.DB, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: seatflow staff unlock-2fa NAME")
	}
	s, err := cliStaff(ctx, db, args[0])
	if err != nil {
		return fmt.Errorf("staff unlock-2fa: %w", err)
	}
	now := time.Now().UTC()
	was, err := db.UnlockTOTP(ctx, s.ID, now, core.AuditEntry{At: now, Staff: cliActor.Staff,
		Action: access.AuditTOTPUnlock, Target: "staff:" + s.Username})
	if err != nil {
		return fmt.Errorf("staff unlock-2fa: %w", err)
	}
	if !was {
		_, err = fmt.Fprintf(stdout, "the second factor of %s is not locked\n", s.Username)
		return err
	}
	_, err = fmt.Fprintf(stdout, "unlocked the second factor of %s\n", s.Username)
	return err
}
