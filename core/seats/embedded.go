package seats

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
)

// Embedded is an in-process Redis-protocol server (miniredis) for running
// without a real Redis. It keeps nothing across restarts and its TTLs do not
// expire with wall time; the seat store uses neither.
type Embedded struct {
	srv  *miniredis.Miniredis
	addr string // kept so Addr and URL still answer after Close
}

// StartEmbedded starts the server on a free loopback port.
func StartEmbedded() (*Embedded, error) {
	srv := miniredis.NewMiniRedis()
	if err := srv.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("seats: start embedded redis: %w", err)
	}
	return &Embedded{srv: srv, addr: srv.Addr()}, nil
}

// Addr is the server's host:port.
func (e *Embedded) Addr() string { return e.addr }

// URL is the server's redis:// URL, for Dial.
func (e *Embedded) URL() string { return "redis://" + e.addr + "/0" }

// Close stops the server and drops its data.
func (e *Embedded) Close() { e.srv.Close() }
