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
	return echo.ExtractIPFromXFFHeader(trustOnly(trusted)...)
}

// schemeExtractor believes X-Forwarded-Proto (and its kin) only from the
// trusted proxies: echo's default takes it from any loopback or private
// address. It decides the console cookies' Secure flag and the address of
// the links staff hand over.
func schemeExtractor(trusted []*net.IPNet) echo.SchemeExtractor {
	return echo.ExtractSchemeFromHeaders(trustOnly(trusted)...)
}

// trustOnly trusts the given networks and nothing else, loopback and
// private networks included.
func trustOnly(trusted []*net.IPNet) []echo.TrustOption {
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return opts
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
