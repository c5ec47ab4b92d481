package server

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"seatflow/core/access"
	"seatflow/web"
)

// deadLettersPageSize bounds the dead-letter list: a page of thousands
// means an outage, and the metric says so better than a long page.
const deadLettersPageSize = 200

// deadLetterRoutes mounts the dead-letter page (ops and admin, the roles
// that run reconcile).
func (cn *console) deadLetterRoutes(g *echo.Group) {
	ops := cn.requireRole(access.ActReconcile)
	g.GET("/dead-letters", cn.deadLetters, ops)
	g.POST("/dead-letters/:id/retry", cn.retryDeadLetter, ops)
}

func (cn *console) deadLetters(c echo.Context) error {
	letters, err := cn.DB.DeadLetters(c.Request().Context(), deadLettersPageSize)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.DeadLettersPage(cn.page(c, "dead_letters.title", web.NavDeadLetters),
		web.DeadLettersData{Letters: letters, Limit: deadLettersPageSize}))
}

// retryDeadLetter sends a dead letter's timeout message again and removes
// it, audited (core.Engine.RetryDeadLetter). One retried meanwhile by
// someone else is a 404 page.
func (cn *console) retryDeadLetter(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	if _, err := cn.Engine.RetryDeadLetter(c.Request().Context(), cn.DB, id, staffAction(c)); err != nil {
		return err // ErrDeadLetterNotFound: the 404 page
	}
	return c.Redirect(http.StatusSeeOther, web.URL("/dead-letters?msg=dead_letter_retried"))
}
