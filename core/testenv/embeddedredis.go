package testenv

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
)

// EmbeddedRedis is an in-process Redis-protocol server (miniredis) for tests
// of the Redis seat store and of what talks to Redis, without a real Redis.
// It keeps nothing across restarts and its TTLs do not expire with wall
// time; the seat store uses neither. (The embedded stack's seat store is
// seats.Memory: no Redis at all.)
type EmbeddedRedis struct {
	srv  *miniredis.Miniredis
	addr string // kept so Addr and URL still answer after Close
}

// StartEmbeddedRedis starts the server on a free loopback port.
func StartEmbeddedRedis() (*EmbeddedRedis, error) {
	srv := miniredis.NewMiniRedis()
	if err := srv.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("testenv: start embedded redis: %w", err)
	}
	return &EmbeddedRedis{srv: srv, addr: srv.Addr()}, nil
}

// Addr is the server's host:port.
func (e *EmbeddedRedis) Addr() string { return e.addr }

// URL is the server's redis:// URL, for Dial.
func (e *EmbeddedRedis) URL() string { return "redis://" + e.addr + "/0" }

// Close stops the server and drops its data.
func (e *EmbeddedRedis) Close() { e.srv.Close() }
