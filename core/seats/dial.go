package seats

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"

	"seatflow/core"
)

// DialOptions tune the client; zero fields keep the URL's value or the default.
type DialOptions struct {
	// PoolSize caps the connections to Redis (go-redis's default: 10 per
	// GOMAXPROCS). The URL's pool_size wins when both are set.
	PoolSize int
}

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
	return DialWith(ctx, rawURL, DialOptions{})
}

// DialWith is Dial with explicit options.
func DialWith(ctx context.Context, rawURL string, o DialOptions) (redis.UniversalClient, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		// url.Error repeats the whole URL, password included: keep only its cause.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("seats: bad redis URL (want redis://[user:pass@]host:port/db): %w", err)
	}
	// go-redis prints its own lines to stderr (one per failed dial during an
	// outage, unstructured, without trace ids). Every failure also comes
	// back to us as an error, which the engine logs with its order and
	// trace, so the library's copy is noise. Its logger is process-wide;
	// storing the same no-op logger again is harmless (an atomic store).
	redis.SetLogger(&logging.VoidLogger{})
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
	if opt.PoolSize == 0 && o.PoolSize > 0 {
		opt.PoolSize = o.PoolSize
	}
	client := redis.NewClient(opt)
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, &core.Error{Kind: core.KindUnavailable, Code: core.ErrStoreUnavailable.Code,
			Message: fmt.Sprintf("seats: ping redis at %s db %d", opt.Addr, opt.DB), Err: err}
	}
	return client, nil
}
