package seats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"

	"seatflow/core"
)

// URLForms lists the Redis URLs Dial accepts, for error messages.
const URLForms = "redis://[user:pass@]host:port[/db], rediss://[user:pass@]host:port[/db] (TLS), " +
	"redis-cluster://[user:pass@]host1:port1,host2:port2[,...], " +
	"redis-sentinel://[user:pass@]host1:port1,host2:port2[,...]/master-name[/db]"

// URL schemes of the deployments Dial connects to.
const (
	SchemeNode     = "redis"
	SchemeNodeTLS  = "rediss"
	SchemeCluster  = "redis-cluster"
	SchemeSentinel = "redis-sentinel"
)

// ErrEvictingPolicy is wrapped by the Dial error for a Redis whose
// maxmemory-policy may evict SeatFlow's keys.
var ErrEvictingPolicy = errors.New("evicting maxmemory-policy")

// DialOptions tune the client; zero fields keep the URL's value or the default.
type DialOptions struct {
	// PoolSize caps the connections to Redis (go-redis's default: 10 per
	// GOMAXPROCS), per node on a cluster. The URL's pool_size wins when both
	// are set.
	PoolSize int
	// AllowEviction skips the maxmemory-policy check (SEATFLOW_REDIS_ALLOW_EVICTION).
	AllowEviction bool
	// Logger receives the warning about a server that hides its
	// maxmemory-policy; nil discards it.
	Logger *slog.Logger
}

// URLOptions are go-redis's options for one Redis URL; exactly one field is set.
type URLOptions struct {
	Node     *redis.Options         // redis://, rediss://
	Cluster  *redis.ClusterOptions  // redis-cluster://
	Sentinel *redis.FailoverOptions // redis-sentinel://
}

// ParseURL reads any of the URLForms. Query parameters are go-redis's
// (pool_size, read_timeout, max_retries, ...); a sentinel URL also takes
// sentinel_username and sentinel_password for sentinels that require a
// login of their own (user:pass is the master's). No error repeats the
// password.
func ParseURL(rawURL string) (URLOptions, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return URLOptions{}, badURL(errors.New("no scheme"))
	}
	switch scheme {
	case SchemeNode, SchemeNodeTLS:
		// go-redis takes a missing host for localhost; a URL without one is a mistake.
		if i := strings.IndexAny(rest+"/", "/?"); i == 0 || strings.HasSuffix(rest[:i], "@") {
			return URLOptions{}, badURL(errors.New("no host"))
		}
		opt, err := redis.ParseURL(rawURL)
		if err != nil {
			return URLOptions{}, badURL(err)
		}
		return URLOptions{Node: opt}, nil
	case SchemeCluster:
		opt, err := parseCluster(rest)
		if err != nil {
			return URLOptions{}, badURL(err)
		}
		return URLOptions{Cluster: opt}, nil
	case SchemeSentinel:
		opt, err := parseSentinel(rest)
		if err != nil {
			return URLOptions{}, badURL(err)
		}
		return URLOptions{Sentinel: opt}, nil
	}
	return URLOptions{}, badURL(fmt.Errorf("unknown scheme %q", scheme))
}

func badURL(err error) error {
	// url.Error repeats the whole URL, password included: keep only its cause.
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Errorf("seats: bad redis URL (want %s): %w", URLForms, err)
}

// multiHost is the part after scheme:// of a cluster or sentinel URL.
type multiHost struct {
	userinfo string   // as written (percent-encoded), "" without one
	hosts    []string // host:port, at least one
	path     string   // after the hosts, with its leading "/"
	query    url.Values
}

func splitMultiHost(rest string) (multiHost, error) {
	var m multiHost
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		m.userinfo, authority = authority[:at], authority[at+1:]
	}
	for _, h := range strings.Split(authority, ",") {
		host, port, err := net.SplitHostPort(h)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n <= 0 || n > 65535 {
			return m, fmt.Errorf("address %q is not host:port", h)
		}
		m.hosts = append(m.hosts, h)
	}
	m.path, _, _ = strings.Cut(tail, "?")
	var err error
	if _, q, ok := strings.Cut(tail, "?"); ok {
		if m.query, err = url.ParseQuery(q); err != nil {
			return m, fmt.Errorf("query: %w", err)
		}
	} else {
		m.query = url.Values{}
	}
	return m, nil
}

// user decodes the userinfo: username ("" for a password-only login) and password.
func (m multiHost) user() (string, string, error) {
	if m.userinfo == "" {
		return "", "", nil
	}
	u, err := url.Parse("redis://" + m.userinfo + "@h")
	if err != nil {
		return "", "", errors.New("the user:password part is not percent-encoded correctly")
	}
	pass, _ := u.User.Password()
	return u.User.Username(), pass, nil
}

// goRedisURL is the redis://first-host/path?addr=other-hosts&query form
// that go-redis's cluster and failover parsers read.
func (m multiHost) goRedisURL(userinfo, path string, q url.Values) string {
	for _, h := range m.hosts[1:] {
		q.Add("addr", h)
	}
	if userinfo != "" {
		userinfo += "@"
	}
	return "redis://" + userinfo + m.hosts[0] + path + "?" + q.Encode()
}

func parseCluster(rest string) (*redis.ClusterOptions, error) {
	m, err := splitMultiHost(rest)
	if err != nil {
		return nil, err
	}
	if m.path != "" && m.path != "/" && m.path != "/0" {
		return nil, errors.New("a cluster has only database 0: no /db path")
	}
	if _, _, err := m.user(); err != nil {
		return nil, err
	}
	return redis.ParseClusterURL(m.goRedisURL(m.userinfo, "", m.query))
}

func parseSentinel(rest string) (*redis.FailoverOptions, error) {
	m, err := splitMultiHost(rest)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(strings.TrimPrefix(m.path, "/"), "/")
	if parts[0] == "" || len(parts) > 2 {
		return nil, errors.New("want /master-name or /master-name/db after the sentinel addresses")
	}
	db := "0"
	if len(parts) == 2 {
		db = parts[1]
	}
	q := m.query
	sentinelUser, sentinelPass := q.Get("sentinel_username"), q.Get("sentinel_password")
	q.Del("sentinel_username")
	q.Del("sentinel_password")
	q.Set("master_name", parts[0])
	// go-redis reads a failover URL's user:pass as the sentinels' login; ours
	// is the master's, set below.
	opt, err := redis.ParseFailoverURL(m.goRedisURL("", "/"+db, q))
	if err != nil {
		return nil, err
	}
	if m.userinfo != "" {
		if opt.Username, opt.Password, err = m.user(); err != nil {
			return nil, err
		}
	}
	opt.SentinelUsername, opt.SentinelPassword = sentinelUser, sentinelPass
	return opt, nil
}

// Dial connects to any of the URLForms and pings it with ctx.
//
// Defaults, each overridable by the URL's query (go-redis names, e.g.
// ?pool_size=50&read_timeout=2s&max_retries=3): dial timeout 2s, read and
// write timeouts 1s, pool size go-redis's 10 per GOMAXPROCS (every script
// runs in well under a millisecond, so that is plenty), and no retries: the
// scripts are not idempotent, and a Lock retried after a late reply would
// find its own seats taken and report them unavailable. A cluster client
// still follows MOVED and ASK redirects (max_redirects, default 3), which
// the slot moves of a failover need; its redirect loop also retries a
// command once after a network error or timeout, with the same risk.
// DisableIdentity is always set: the in-process server and older Redis
// versions do not know CLIENT SETINFO.
func Dial(ctx context.Context, rawURL string) (redis.UniversalClient, error) {
	return DialWith(ctx, rawURL, DialOptions{})
}

// DialWith is Dial with explicit options; unless o.AllowEviction, it also
// refuses a server whose maxmemory-policy can evict our keys (see checkEviction).
func DialWith(ctx context.Context, rawURL string, o DialOptions) (redis.UniversalClient, error) {
	opts, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	// go-redis prints its own lines to stderr (one per failed dial during an
	// outage, unstructured, without trace ids). Every failure also comes
	// back to us as an error, which the engine logs with its order and
	// trace, so the library's copy is noise. Its logger is process-wide;
	// storing the same no-op logger again is harmless (an atomic store).
	redis.SetLogger(&logging.VoidLogger{})
	var client redis.UniversalClient
	var where string
	switch {
	case opts.Node != nil:
		n := opts.Node
		n.DisableIdentity = true
		setDefaults(&n.DialTimeout, &n.ReadTimeout, &n.WriteTimeout, &n.MaxRetries, &n.PoolSize, o)
		client, where = redis.NewClient(n), fmt.Sprintf("redis at %s db %d", n.Addr, n.DB)
	case opts.Cluster != nil:
		c := opts.Cluster
		c.DisableIdentity = true
		setDefaults(&c.DialTimeout, &c.ReadTimeout, &c.WriteTimeout, &c.MaxRetries, &c.PoolSize, o)
		// go-redis re-reads the slot map on a MOVED reply, but not when a
		// master stops answering: until the failed master is back (and
		// redirects), commands for its slots would go to it for the whole
		// default interval of 60s, long after its replica took over. Read
		// the map (one CLUSTER SLOTS, in the background) at most every second
		// instead, so a failover is followed within about a second of it.
		c.ClusterStateReloadInterval = time.Second
		client, where = redis.NewClusterClient(c), "redis cluster at "+strings.Join(c.Addrs, ",")
	default:
		s := opts.Sentinel
		s.DisableIdentity = true
		setDefaults(&s.DialTimeout, &s.ReadTimeout, &s.WriteTimeout, &s.MaxRetries, &s.PoolSize, o)
		client = redis.NewFailoverClient(s)
		where = fmt.Sprintf("redis master %s of the sentinels at %s db %d", s.MasterName, strings.Join(s.SentinelAddrs, ","), s.DB)
	}
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, &core.Error{Kind: core.KindUnavailable, Code: core.ErrStoreUnavailable.Code,
			Message: "seats: ping " + where, Err: err}
	}
	if !o.AllowEviction {
		logger := o.Logger
		if logger == nil {
			logger = slog.New(slog.DiscardHandler)
		}
		if err := checkEviction(ctx, client, logger); err != nil {
			_ = client.Close()
			return nil, fmt.Errorf("seats: %s: %w", where, err)
		}
	}
	return client, nil
}

func setDefaults(dial, read, write *time.Duration, retries, pool *int, o DialOptions) {
	if *dial == 0 {
		*dial = 2 * time.Second
	}
	if *read == 0 {
		*read = time.Second
	}
	if *write == 0 {
		*write = time.Second
	}
	if *retries == 0 {
		*retries = -1 // go-redis: -1 disables retries, 0 means its default of 3
	}
	if *pool == 0 && o.PoolSize > 0 {
		*pool = o.PoolSize
	}
}

// checkEviction refuses a Redis that may evict our keys: the seats and
// counter hashes carry no TTL and are the only record of a hold until its
// order is paid, so an evicted hash frees seats that a pending order still
// holds, and a second buyer can lock them. Only the allkeys-* policies evict
// keys without a TTL; the volatile-* ones choose among keys that have one,
// so for SeatFlow's keys they behave as noeviction (a write fails with OOM
// when memory is full, which the engine reports as an error). Anything else,
// including a policy unknown today, counts as evicting. On a cluster every
// master is checked; on Sentinel, the current master. A server that does not
// let us read CONFIG (managed services rename or forbid it) gets a warning:
// refusing it would lock those users out, and the policy is then the
// operator's to check.
func checkEviction(ctx context.Context, client redis.UniversalClient, logger *slog.Logger) error {
	// check reads one server's policy; on names it in messages ("" for the
	// server the caller's error already names).
	check := func(ctx context.Context, c *redis.Client, on string) error {
		res, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
		var reply redis.Error
		if errors.As(err, &reply) || (err == nil && res["maxmemory-policy"] == "") {
			logger.Warn("seats: cannot read maxmemory-policy: make sure it is noeviction or volatile-*, "+
				"or seat holds can be evicted while their orders are pending", "server", on, "err", err)
			return nil
		}
		if err != nil {
			return &core.Error{Kind: core.KindUnavailable, Code: core.ErrStoreUnavailable.Code,
				Message: strings.TrimSpace("seats: read maxmemory-policy " + on), Err: err}
		}
		policy := res["maxmemory-policy"]
		if policy == "noeviction" || strings.HasPrefix(policy, "volatile-") {
			return nil
		}
		if on != "" {
			on = " on " + on
		}
		return fmt.Errorf("%w %s%s can drop seat holds while their orders are pending: "+
			"set noeviction (or a volatile-* policy), or SEATFLOW_REDIS_ALLOW_EVICTION=true to accept that risk",
			ErrEvictingPolicy, policy, on)
	}
	if cc, ok := client.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			return check(ctx, c, "master "+c.Options().Addr)
		})
	}
	c, ok := client.(*redis.Client)
	if !ok {
		return fmt.Errorf("seats: unexpected client type %T", client)
	}
	return check(ctx, c, "")
}
