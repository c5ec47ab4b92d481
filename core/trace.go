package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

type traceKey struct{}

// WithTraceID returns ctx carrying a trace id, so a timeout hop, its log
// lines and its events can be tied back to the request that placed the order.
func WithTraceID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, traceKey{}, id)
}

// TraceID returns ctx's trace id, or "".
func TraceID(ctx context.Context) string {
	id, _ := ctx.Value(traceKey{}).(string)
	return id
}

// NewTraceID returns a random 16-hex-digit id.
func NewTraceID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
