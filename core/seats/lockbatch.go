package seats

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Locks that arrive together are sent as one pipeline of lock.lua calls:
// at 64 clients each placement's own EVALSHA round trip (a write and a read
// system call, a wake-up on each side) was a good part of the server's and
// Redis's CPU per order. Each call is still its own script run, atomic and
// answered alone, exactly as sent one by one.
const (
	lockRunners  = 4  // pipelines in flight at once
	lockMaxBatch = 64 // calls per pipeline
)

// lockCall is one Lock on its way to Redis.
type lockCall struct {
	keys []string
	args []any
	res  []string
	err  error
}

// runLocks answers a batch of lock calls, one pipeline for all of them.
func (s *Store) runLocks(ctx context.Context, batch []*lockCall) {
	if len(batch) == 1 {
		c := batch[0]
		c.res, c.err = s.lock.Run(ctx, s.rdb, c.keys, c.args...).StringSlice()
		return
	}
	cmds := make([]*redis.Cmd, len(batch))
	// Each command carries its own result or error; Pipelined's error is
	// the first of them.
	_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range batch {
			cmds[i] = s.lock.EvalSha(ctx, p, c.keys, c.args...)
		}
		return nil
	})
	for i, c := range batch {
		if c.res, c.err = cmds[i].StringSlice(); redis.HasErrorPrefix(c.err, "NOSCRIPT") {
			// A Redis that lost its script cache (a restart, a failover):
			// Run loads it again.
			c.res, c.err = s.lock.Run(ctx, s.rdb, c.keys, c.args...).StringSlice()
		}
	}
}
