package web

import (
	"context"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// render is a component's HTML, for the tests of what a page shows.
func render(t *testing.T, c templ.Component) string {
	t.Helper()
	var b strings.Builder
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
