package server

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDocument is the API's contract (OpenAPI 3.1), committed beside the
// handlers it describes; openapi_test.go keeps the two in step.
//
//go:embed openapi.json
var openAPIDocument []byte

// handleOpenAPI serves the document with no key, so client generators and
// fuzzers can read it.
func handleOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIDocument)
}
