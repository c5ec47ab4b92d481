package server

import (
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// consoleGzip compresses the console's pages, CSS and JS (a 20,000-seat map
// is megabytes of HTML; on a phone's link that is seconds). Event streams
// are left alone: each would keep a compressor's state (hundreds of KB) for
// as long as the map stays open, to save little on events of a few hundred
// bytes.
func consoleGzip() echo.MiddlewareFunc {
	return middleware.GzipWithConfig(middleware.GzipConfig{
		Level: 1, // seat markup is so repetitive that the fastest level shrinks it 13x at a quarter of level 5's CPU
		Skipper: func(c echo.Context) bool {
			return strings.HasSuffix(c.Path(), "/events")
		},
	})
}
