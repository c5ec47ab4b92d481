package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/web"
)

// apiKeyRoutes mounts the admins' API key page: list, add (the new key is
// shown on that one response), revoke. Each change and its audit row
// commit in one transaction (store.CreateAPIKey, store.RevokeAPIKey).
func (cn *console) apiKeyRoutes(g *echo.Group) {
	manage := cn.requireRole(access.ActStaff)
	g.GET("/apikeys", cn.apiKeys, manage)
	g.POST("/apikeys", cn.addAPIKey, manage)
	g.POST("/apikeys/:id/revoke", cn.revokeAPIKey, manage)
}

func (cn *console) apiKeys(c echo.Context) error {
	return cn.renderAPIKeys(c, http.StatusOK, web.APIKeysData{})
}

func (cn *console) renderAPIKeys(c echo.Context, status int, d web.APIKeysData) error {
	var err error
	if d.Keys, err = cn.DB.APIKeys(c.Request().Context()); err != nil {
		return err
	}
	// The page may carry a secret: no cache may keep it.
	c.Response().Header().Set("Cache-Control", "no-store")
	return render(c, status, web.APIKeysPage(cn.page(c, "apikeys.title", web.NavStaff), d))
}

// consoleActor is the signed-in member of staff as an audited actor.
func consoleActor(c echo.Context) core.StaffAction {
	s := sessionOf(c).staff
	return core.StaffAction{Staff: "staff:" + s.Username, Role: s.Role, IP: c.RealIP()}
}

func (cn *console) addAPIKey(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return errBadRequest
	}
	d := web.APIKeysData{Name: strings.TrimSpace(form.Get("name"))}
	_, secret, err := createAPIKey(c.Request().Context(), cn.DB, d.Name, strings.Join(form["scope"], ","), consoleActor(c), cn.Clock.Now())
	if core.ErrorKind(err) == core.KindInvalid {
		var e *core.Error
		errors.As(err, &e)
		d.FormError = e.Message
		return cn.renderAPIKeys(c, http.StatusUnprocessableEntity, d)
	}
	if err != nil {
		return err
	}
	// Rendered, not redirected: the secret must not travel in a URL.
	return cn.renderAPIKeys(c, http.StatusCreated, web.APIKeysData{NewKey: secret})
}

func (cn *console) revokeAPIKey(c echo.Context) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	if _, err := revokeAPIKey(c.Request().Context(), cn.DB, id, consoleActor(c), cn.Clock.Now()); errors.Is(err, access.ErrAPIKeyNotFound) {
		return echo.ErrNotFound
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/apikeys?msg=apikey_revoked"))
}
