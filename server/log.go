package server

import (
	"context"
	"io"
	"log/slog"
	"path"
	"strings"

	"seatflow/core"
	"seatflow/web"
)

// NewLogger returns a JSON logger whose every line carries the trace id of
// the context it is logged with, so one request's lines (and the timeout hops
// it started) can be found together.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(traceHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})})
}

type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := core.TraceID(ctx); id != "" {
		r.AddAttrs(slog.String("trace_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}

// secretPathPrefixes are the paths whose rest is a secret: a password
// reset link's token sets the account's password for a day, for whoever
// reads it in a log. They are prefixes, not routes, so a mistyped or
// unrouted variant of a link is redacted too.
var secretPathPrefixes = []string{web.URL("/reset/")}

// redactedPath is a request path as the log may show it: the secret part
// of a path that carries one is replaced.
func redactedPath(p string) string {
	clean := path.Clean(p)
	for _, prefix := range secretPathPrefixes {
		if strings.HasPrefix(clean, prefix) {
			return prefix + "[redacted]"
		}
	}
	return p
}
