package server

import (
	"errors"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"seatflow/core"
	"seatflow/core/access"
)

// Abuse limits of the API: a request rate per API key and per end-user
// address (token buckets, per instance), the engine's cap on one address's
// holds per show (core/abuse.go), and reconcile started from the API at
// most once per reconcileAPIEvery. A refusal is 429 with Retry-After and
// counts in seatflow_rate_limited_total{key,reason}.

// clientIPHeader is where a front end holding a key with the client_ip
// right names its visitor's address.
const clientIPHeader = "X-SeatFlow-Client-IP"

// reconcileAPIEvery bounds reconcile runs started through the API: each is
// a full pass over the stores.
const reconcileAPIEvery = 10 * time.Second

// limiterIdle is how long an unused bucket is kept; limiterPruneAt is the
// count past which idle ones are swept (addresses made up by a scanner).
// After a sweep the next one waits until the set has doubled: in a rush
// 10,000 buyers' addresses are all in use, and sweeping them on every
// request took a third of the server's CPU under one lock.
const (
	limiterIdle    = time.Minute
	limiterPruneAt = 10_000
)

const (
	contextKeyAPIKey   = "api.key"
	contextKeyClientIP = "api.client_ip"
)

// RateLimits are the SEATFLOW_RATE_* settings: requests per second (0: no
// limit); a burst of twice as many is allowed.
type RateLimits struct {
	PerKey, PerClient int
	// IPv6Prefix (SEATFLOW_IPV6_PREFIX) is the network size an IPv6
	// client counts by; 0 is core.DefaultIPv6Prefix.
	IPv6Prefix int
}

type abuseLimits struct {
	cfg     RateLimits
	limited *prometheus.CounterVec
	clock   func() time.Time

	mu            sync.Mutex
	keys, clients bucketSet
	lastReconcile time.Time
}

// bucketSet is the buckets of one kind by id, and the size at which its
// idle ones are next swept.
type bucketSet struct {
	byID    map[string]*bucket
	pruneAt int
}

func newBucketSet() bucketSet {
	return bucketSet{byID: map[string]*bucket{}, pruneAt: limiterPruneAt}
}

type bucket struct {
	lim  *rate.Limiter
	used time.Time
}

func newAbuseLimits(cfg RateLimits, reg prometheus.Registerer) *abuseLimits {
	a := &abuseLimits{cfg: cfg, clock: time.Now, keys: newBucketSet(), clients: newBucketSet(),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "seatflow_rate_limited_total",
			Help: "API requests refused by an abuse limit, by API key (prefix, or SEATFLOW_API_TOKEN) and reason."},
			[]string{"key", "reason"})}
	reg.MustRegister(a.limited)
	a.zeroRateLimited()
	return a
}

// keyLabel names a key in metrics and logs without its secret.
func keyLabel(k access.APIKey) string {
	if k.ID == 0 {
		return bootstrapKey.Name
	}
	return k.Prefix
}

// take takes one token from the bucket of id, made at perSecond when new;
// it returns how long until one would be there when there is none.
func (a *abuseLimits) take(buckets *bucketSet, id string, perSecond int) (bool, time.Duration) {
	now := a.clock()
	a.mu.Lock()
	defer a.mu.Unlock()
	b := buckets.byID[id]
	if b == nil {
		if len(buckets.byID) >= buckets.pruneAt {
			for k, b := range buckets.byID {
				if now.Sub(b.used) > limiterIdle {
					delete(buckets.byID, k)
				}
			}
			buckets.pruneAt = max(limiterPruneAt, 2*len(buckets.byID))
		}
		b = &bucket{lim: rate.NewLimiter(rate.Limit(perSecond), 2*perSecond)}
		buckets.byID[id] = b
	}
	b.used = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

func (a *abuseLimits) refuse(key, reason, message string, after time.Duration) error {
	a.limited.WithLabelValues(key, reason).Inc()
	return &core.Error{Kind: core.KindRateLimited, Code: "rate_limited", Message: message, RetryAfter: after}
}

// middleware runs after the key check: it finds the request's end-user
// address and applies the key's and the address's request rates.
func (a *abuseLimits) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		key, _ := c.Get(contextKeyAPIKey).(access.APIKey)
		ip, err := clientAddress(c, key)
		if err != nil {
			return err
		}
		ip = core.ClientNet(ip, a.cfg.IPv6Prefix)
		c.Set(contextKeyClientIP, ip)
		label := keyLabel(key)
		if a.cfg.PerKey > 0 {
			if ok, wait := a.take(&a.keys, label, a.cfg.PerKey); !ok {
				return a.refuse(label, core.RateLimitKey, "this API key sends more requests than allowed; slow down", wait)
			}
		}
		if a.cfg.PerClient > 0 {
			if ok, wait := a.take(&a.clients, ip, a.cfg.PerClient); !ok {
				return a.refuse(label, core.RateLimitClient, "too many requests from this address; slow down", wait)
			}
		}
		err = next(c)
		if errors.Is(err, core.ErrTooManyHolds) {
			a.limited.WithLabelValues(label, core.RateLimitHolds).Inc()
		}
		return err
	}
}

// reserveReconcile lets one API-started reconcile through per
// reconcileAPIEvery on this instance. undo gives the slot back when the run
// did not start (another instance held the lease).
func (a *abuseLimits) reserveReconcile(key access.APIKey) (undo func(), err error) {
	now := a.clock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if wait := a.lastReconcile.Add(reconcileAPIEvery).Sub(now); wait > 0 {
		a.limited.WithLabelValues(keyLabel(key), core.RateLimitReconcile).Inc()
		return nil, &core.Error{Kind: core.KindRateLimited, Code: "rate_limited", RetryAfter: wait,
			Message: "a reconcile run was started through the API less than 10 s ago"}
	}
	prev := a.lastReconcile
	a.lastReconcile = now
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.lastReconcile.Equal(now) {
			a.lastReconcile = prev
		}
	}, nil
}

// clientAddress is the end user a request counts for: X-SeatFlow-Client-IP
// from a key with the client_ip right, else the connection's address (or
// the trusted proxy's X-Forwarded-For: SEATFLOW_TRUSTED_PROXIES).
func clientAddress(c echo.Context, key access.APIKey) (string, error) {
	h := strings.TrimSpace(c.Request().Header.Get(clientIPHeader))
	if h == "" || !key.Allows(access.ScopeClientIP) {
		return c.RealIP(), nil
	}
	addr, err := netip.ParseAddr(h)
	if err != nil || addr.Zone() != "" {
		return "", core.Invalidf("%s %q is not an IP address", clientIPHeader, truncate(h, 64))
	}
	return addr.Unmap().String(), nil
}

// clientIPOf is the address middleware found for the request, as the
// limits count it (core.ClientNet: an IPv6 one by its network).
func clientIPOf(c echo.Context) string {
	ip, _ := c.Get(contextKeyClientIP).(string)
	return ip
}

// zeroRateLimited makes every reason's series exist for the bootstrap key
// from the start, so an alert can be written before the first refusal.
func (a *abuseLimits) zeroRateLimited() {
	for _, r := range core.RateLimitReasons {
		a.limited.WithLabelValues(bootstrapKey.Name, r)
	}
}
