package core

import (
	"context"
	"fmt"
	"net/netip"
	"time"
)

// Abuse limits in the engine: one end-user address may hold at most
// Config.MaxHoldsPerClient orders open on one show, so a script with
// made-up user ids cannot hold a whole show from one machine. The address
// comes from the API (the connection's, or X-SeatFlow-Client-IP from a
// key with the client_ip right) as its ClientNet, so an IPv6 client counts
// by its /64; console sales carry none and are not capped. The count is read before the seats are locked, so requests in
// flight at the same moment may each pass: the cap can be exceeded by at
// most the address's concurrent placements, never without end. An instance
// reads it again only when the count it carried since its last read
// reaches the cap (holdscache.go), which is exact on one instance; with
// several, for a second after a read each may let the address reach the
// cap on its own.

// DefaultIPv6Prefix is the IPv6 network counted as one client: an ISP
// gives one customer, often one machine, a whole /64 to pick addresses
// from, so counting single addresses lets one machine pose as billions.
const DefaultIPv6Prefix = 64

// ClientNet is what the per-address limits count an address as (the
// holds cap here, the API's request rate, the console's failed logins):
// an IPv4 address itself, an IPv6 one by its network of v6Prefix bits
// (0: DefaultIPv6Prefix), e.g. 2001:db8:1:2::/64. Anything that is not an
// address is returned as it is.
func ClientNet(addr string, v6Prefix int) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	if v6Prefix <= 0 {
		v6Prefix = DefaultIPv6Prefix
	}
	p, err := ip.Prefix(v6Prefix)
	if err != nil {
		return ip.String()
	}
	return p.String()
}

// ErrTooManyHolds: the address has as many holds open on the show as
// allowed. Retry-After is a hold's length at most; a minute is a fair hint.
var ErrTooManyHolds = &Error{Kind: KindRateLimited, Code: "too_many_holds",
	Message: "too many holds open on this show from your address: pay for or cancel one first"}

// checkClientHolds refuses a placement from r.ClientIP beyond the cap,
// reading the address's count only when the one carried since the last
// read (holdscache.go) does not show it below.
func (e *Engine) checkClientHolds(ctx context.Context, r PlaceRequest) error {
	if e.cfg.MaxHoldsPerClient <= 0 || r.ClientIP == "" || r.BoxOffice {
		return nil
	}
	k, now := holdsKey{r.ShowID, r.ClientIP}, time.Now()
	if e.holds.pass(k, e.cfg.MaxHoldsPerClient, now) {
		return nil
	}
	n, err := e.store.PendingHoldsFrom(ctx, r.ShowID, r.ClientIP)
	if err != nil {
		return err
	}
	e.holds.read(k, n, e.cfg.MaxHoldsPerClient, now)
	if n >= e.cfg.MaxHoldsPerClient {
		return &Error{Kind: KindRateLimited, Code: ErrTooManyHolds.Code, RetryAfter: time.Minute, Message: fmt.Sprintf(
			"%d holds are open on show %d from %s, the most one address may have: pay for or cancel one first",
			n, r.ShowID, r.ClientIP)}
	}
	return nil
}

// Reasons of seatflow_rate_limited_total (counted by the API).
const (
	RateLimitKey       = "key_rate"         // the API key's request rate
	RateLimitClient    = "client_rate"      // one end-user address's request rate
	RateLimitHolds     = "holds_per_client" // one address's open holds on a show
	RateLimitReconcile = "reconcile_rate"   // reconcile started from the API too often
)

// RateLimitReasons lists every reason, for metrics at zero.
var RateLimitReasons = []string{RateLimitKey, RateLimitClient, RateLimitHolds, RateLimitReconcile}
