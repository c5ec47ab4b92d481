package seats

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Script calls that arrive together (placements' locks, payments' marks of
// seats sold) are sent as one pipeline: at 64 clients each call's own
// EVALSHA round trip (a write and a read system call, a wake-up on each
// side) was a good part of the server's and Redis's CPU per order. Each
// call is still its own script run, atomic and answered alone, exactly as
// sent one by one.
const (
	scriptRunners  = 4  // pipelines in flight at once
	scriptMaxBatch = 64 // calls per pipeline
)

// scriptCall is one script run on its way to Redis; res holds its reply.
type scriptCall struct {
	script *redis.Script
	keys   []string
	args   []any
	res    *redis.Cmd
}

// runScripts answers a batch of script calls, one pipeline for all of them.
func (s *Store) runScripts(ctx context.Context, batch []*scriptCall) {
	if len(batch) == 1 {
		c := batch[0]
		c.res = c.script.Run(ctx, s.rdb, c.keys, c.args...)
		return
	}
	// Each command carries its own result or error; Pipelined's error is
	// the first of them.
	_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range batch {
			c.res = c.script.EvalSha(ctx, p, c.keys, c.args...)
		}
		return nil
	})
	for _, c := range batch {
		if redis.HasErrorPrefix(c.res.Err(), "NOSCRIPT") {
			// A Redis that lost its script cache (a restart, a failover):
			// Run loads it again.
			c.res = c.script.Run(ctx, s.rdb, c.keys, c.args...)
		}
	}
}

// runScript runs script through the gathered pipelines.
func (s *Store) runScript(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	c := &scriptCall{script: script, keys: keys, args: args}
	s.scripts.Do(ctx, c)
	return c.res
}
