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

type viaKey struct{}

// WithVia returns ctx carrying who passed the request on to the engine (an
// API key: api:<key prefix>), so the order's events name it beside the
// customer they act for.
func WithVia(ctx context.Context, via string) context.Context {
	return context.WithValue(ctx, viaKey{}, via)
}

// Via returns ctx's go-between, or "".
func Via(ctx context.Context) string {
	v, _ := ctx.Value(viaKey{}).(string)
	return v
}

// withVia adds ctx's go-between to an event's detail.
func withVia(ctx context.Context, d map[string]any) map[string]any {
	if v := Via(ctx); v != "" {
		d["via"] = v
	}
	return d
}
