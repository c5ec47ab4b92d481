package seats

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
)

// Dial connects to redis://[user:pass@]host:port/db and pings it with ctx.
//
// Defaults, each overridable by the URL's query (go-redis names, e.g.
// ?pool_size=50&read_timeout=2s&max_retries=3): dial timeout 2s, read and
// write timeouts 1s, pool size go-redis's 10 per GOMAXPROCS (every script
// runs in well under a millisecond, so that is plenty), and no retries: the
// scripts are not idempotent, and a Lock retried after a late reply would
// find its own seats taken and report them unavailable.
// DisableIdentity is always set: the in-process server and older Redis
// versions do not know CLIENT SETINFO.
func Dial(ctx context.Context, rawURL string) (redis.UniversalClient, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		// url.Error repeats the whole URL, password included: keep only its cause.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("seats: bad redis URL (want redis://[user:pass@]host:port/db): %w", err)
	}
	opt.DisableIdentity = true
	if opt.DialTimeout == 0 {
		opt.DialTimeout = 2 * time.Second
	}
	if opt.ReadTimeout == 0 {
		opt.ReadTimeout = time.Second
	}
	if opt.WriteTimeout == 0 {
		opt.WriteTimeout = time.Second
	}
	if opt.MaxRetries == 0 {
		opt.MaxRetries = -1 // go-redis: -1 disables retries, 0 means its default of 3
	}
	client := redis.NewClient(opt)
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, &core.Error{Kind: core.KindUnavailable, Code: core.ErrStoreUnavailable.Code,
			Message: fmt.Sprintf("seats: ping redis at %s db %d", opt.Addr, opt.DB), Err: err}
	}
	return client, nil
}
