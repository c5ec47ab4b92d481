package server

import (
	"net"
	"strings"

	"github.com/labstack/echo/v4"
)

// clientIPExtractor believes X-Forwarded-For only from the trusted proxies:
// echo's default takes the header from anyone, which lets a client pick
// the address that login throttling and the audit log see.
func clientIPExtractor(trusted []*net.IPNet) echo.IPExtractor {
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// cidrs reads a comma-separated list of CIDRs (SEATFLOW_TRUSTED_PROXIES).
func (p *envParser) cidrs(name string) []*net.IPNet {
	value := strings.TrimSpace(p.getenv(name))
	if value == "" {
		return nil
	}
	var nets []*net.IPNet
	for part := range strings.SplitSeq(value, ",") {
		_, n, err := net.ParseCIDR(strings.TrimSpace(part))
		if err != nil {
			p.fail(name, value, "want comma-separated CIDRs such as 10.0.0.0/8,192.168.1.5/32")
			return nil
		}
		nets = append(nets, n)
	}
	return nets
}

// forwardedSchemeHeaders are what echo's Context.Scheme reads besides TLS.
var forwardedSchemeHeaders = []string{echo.HeaderXForwardedProto, echo.HeaderXForwardedProtocol,
	echo.HeaderXForwardedSsl, echo.HeaderXUrlScheme}

// untrustedSchemeDropped removes the scheme a request claims to have come
// in by unless its sender is a trusted proxy: echo's Scheme believes the
// header from anyone, and it decides the console cookies' Secure flag and
// the address of the links staff hand over.
func untrustedSchemeDropped(trusted []*net.IPNet) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !fromTrustedProxy(c.Request().RemoteAddr, trusted) {
				for _, h := range forwardedSchemeHeaders {
					c.Request().Header.Del(h)
				}
			}
			return next(c)
		}
	}
}

func fromTrustedProxy(remoteAddr string, trusted []*net.IPNet) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	for _, n := range trusted {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}
