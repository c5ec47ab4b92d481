package server

import (
	"errors"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"seatflow/web"
)

// Body limits of the console's requests. A form is a few fields; the
// exceptions are the new-show form and the edit page's plan form, which
// carry a seat plan file, and an offline gate's scans (console_door.go).
const (
	// consoleSignInLimit bounds the forms anyone may post without a
	// session (login, its second-factor code, a reset link's): a name, a
	// password or code, a token and the page to return to.
	consoleSignInLimit = 8 << 10
	// consoleFormLimit bounds a signed-in staff form. The longest is a list
	// of seats to block, the request the API bounds at apiBodyLimit.
	consoleFormLimit = 64 << 10
	// consolePlanLimit bounds the plan forms: the plan file (at most
	// maxPlanUpload) and the form's other fields.
	consolePlanLimit = maxPlanUpload + consoleFormLimit
)

// consoleBodyLimit is the body limit of a console route, and whether the
// route takes multipart bodies (file uploads).
func consoleBodyLimit(route string) (limit int64, multipart bool) {
	switch route {
	case web.URL("/shows"), web.URL("/shows/:id/plan"):
		return consolePlanLimit, true
	case web.URL("/login"), web.URL("/login/code"), web.URL("/reset/:token"):
		return consoleSignInLimit, false
	case web.URL("/door/sync"):
		return doorSyncBodyLimit, false
	}
	return consoleFormLimit, false
}

// limitBodies bounds every console request body before anything reads
// it: a declared length over the route's limit is refused (413) unread,
// multipart where no file is expected is refused (415) unread, and a
// form is parsed here, in full or not at all, within the limit. Parsing
// here matters: FormValue ignores parse errors, so a form cut off at the
// limit would read as an empty one later. A multipart form is kept in
// memory whole (the limit is its size): nothing spills to disk.
func limitBodies(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		limit, multipartOK := consoleBodyLimit(c.Path())
		if r.ContentLength > limit {
			return echo.ErrStatusRequestEntityTooLarge
		}
		mediaType, _, _ := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
		multipart := mediaType == echo.MIMEMultipartForm
		if multipart && !multipartOK {
			return echo.ErrUnsupportedMediaType
		}
		if r.Body == nil || r.Body == http.NoBody {
			return next(c)
		}
		r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
		if r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodPatch {
			return next(c)
		}
		var err error
		if multipart {
			err = r.ParseMultipartForm(limit)
		} else {
			err = r.ParseForm()
		}
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			return echo.ErrStatusRequestEntityTooLarge
		}
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest).SetInternal(err)
		}
		return next(c)
	}
}
