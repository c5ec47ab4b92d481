package stacktest

import (
	"context"
	"net"
	"os"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// ErrReadTimeout is the error go-redis returns when a reply does not arrive
// within the client's read timeout: the command may or may not have run.
var ErrReadTimeout error = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}

// RedisFault intercepts one command of a stack's Redis client, at the exact
// point a test names, instead of hoping a sleep lands there.
type RedisFault struct {
	// Match picks the command to intercept: the first one from now on for
	// which it returns true.
	Match func(cmd redis.Cmder) bool
	// Before, if set, runs just before the command goes to the server (a
	// competing call between two steps of the code under test).
	Before func(ctx context.Context)
	// Lost keeps the command from the server: it never runs, and the caller
	// sees ErrReadTimeout (a request lost on the way).
	Lost bool
	// After, if set, gets the server's answer and returns what the caller
	// sees (ErrReadTimeout after a command that ran: its reply was lost).
	After func(ctx context.Context, err error) error

	armed atomic.Bool
	fired atomic.Bool
}

// Fired reports whether the fault has intercepted its command.
func (f *RedisFault) Fired() bool { return f.fired.Load() }

// InjectRedis arms f on s.Redis (a stack of EachRedis). An EVALSHA of a script the server has not
// cached is let through untouched: it does not run, and go-redis sends EVAL
// next, which is the command intercepted instead.
func (s *Stack) InjectRedis(f *RedisFault) *RedisFault {
	f.armed.Store(true)
	s.Redis.AddHook(faultHook{f: f, rdb: s.Redis})
	return f
}

type faultHook struct {
	f   *RedisFault
	rdb redis.UniversalClient
}

func (faultHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (faultHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h faultHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.f.armed.Load() || !h.f.Match(cmd) || !h.willRun(ctx, cmd) || !h.f.armed.CompareAndSwap(true, false) {
			return next(ctx, cmd)
		}
		h.f.fired.Store(true)
		if h.f.Before != nil {
			h.f.Before(ctx)
		}
		err := ErrReadTimeout
		if !h.f.Lost {
			err = next(ctx, cmd)
		}
		if h.f.After != nil {
			err = h.f.After(ctx, err)
		}
		return err
	}
}

// willRun is false for an EVALSHA the server would answer NOSCRIPT.
func (h faultHook) willRun(ctx context.Context, cmd redis.Cmder) bool {
	if cmd.Name() != "evalsha" {
		return true
	}
	sha, _ := cmd.Args()[1].(string)
	cached, err := h.rdb.ScriptExists(ctx, sha).Result()
	return err == nil && len(cached) == 1 && cached[0]
}

// ScriptCall splits an EVAL or EVALSHA command into its keys and arguments;
// ok is false for any other command.
func ScriptCall(cmd redis.Cmder) (keys []string, argv []any, ok bool) {
	if name := cmd.Name(); name != "eval" && name != "evalsha" {
		return nil, nil, false
	}
	args := cmd.Args()
	if len(args) < 3 {
		return nil, nil, false
	}
	n, isInt := args[2].(int)
	if !isInt || len(args) < 3+n {
		return nil, nil, false
	}
	for _, k := range args[3 : 3+n] {
		s, _ := k.(string)
		keys = append(keys, s)
	}
	return keys, args[3+n:], true
}
