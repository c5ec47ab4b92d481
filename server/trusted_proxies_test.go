package server

import (
	"net"
	"net/http/httptest"
	"testing"
)

// TestClientIPExtractor: X-Forwarded-For names the client only when the
// connection comes from a trusted proxy.
func TestClientIPExtractor(t *testing.T) {
	_, proxies, _ := net.ParseCIDR("10.1.0.0/16")
	for _, tc := range []struct {
		name    string
		trusted []*net.IPNet
		remote  string
		xff     string
		want    string
	}{
		{"none trusted, forged header", nil, "203.0.113.9", "198.51.100.1", "203.0.113.9"},
		{"none trusted, loopback proxy", nil, "127.0.0.1", "198.51.100.1", "127.0.0.1"},
		{"trusted proxy", []*net.IPNet{proxies}, "10.1.2.3", "198.51.100.1", "198.51.100.1"},
		{"trusted proxy, client forged a hop", []*net.IPNet{proxies}, "10.1.2.3", "192.0.2.66, 198.51.100.1", "198.51.100.1"},
		{"untrusted sender", []*net.IPNet{proxies}, "203.0.113.9", "198.51.100.1", "203.0.113.9"},
		{"no header", []*net.IPNet{proxies}, "10.1.2.3", "", "10.1.2.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote + ":5000"
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			if got := clientIPExtractor(tc.trusted)(r); got != tc.want {
				t.Errorf("client address %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTrustedProxiesSetting(t *testing.T) {
	for _, tc := range []struct {
		value   string
		nets    int
		wantErr bool
	}{
		{"", 0, false},
		{"10.0.0.0/8", 1, false},
		{"10.0.0.0/8, 192.168.1.5/32,::1/128", 3, false},
		{"10.0.0.1", 0, true},
		{"10.0.0.0/8,,", 0, true},
		{"proxy.local/24", 0, true},
	} {
		cfg, err := LoadConfig(mapEnv(map[string]string{"SEATFLOW_TRUSTED_PROXIES": tc.value}))
		if (err != nil) != tc.wantErr || len(cfg.TrustedProxies) != tc.nets {
			t.Errorf("%q: %d nets, err %v; want %d, error %t", tc.value, len(cfg.TrustedProxies), err, tc.nets, tc.wantErr)
		}
	}
}

// TestSecureCookieBehindProxy: the console's cookies are Secure when the
// request came by TLS through a trusted proxy, never on a forged
// X-Forwarded-Proto.
func TestSecureCookieBehindProxy(t *testing.T) {
	_, proxies, _ := net.ParseCIDR("10.1.0.0/16")
	for _, tc := range []struct {
		name    string
		trusted []*net.IPNet
		remote  string
		proto   string
		secure  bool
	}{
		{"plain http", nil, "203.0.113.9", "", false},
		{"forged header, none trusted", nil, "203.0.113.9", "https", false},
		{"forged header from loopback, none trusted", nil, "127.0.0.1", "https", false},
		{"forged header from a private address, none trusted", nil, "10.9.8.7", "https", false},
		{"forged header, untrusted sender", []*net.IPNet{proxies}, "203.0.113.9", "https", false},
		{"TLS at the trusted proxy", []*net.IPNet{proxies}, "10.1.2.3", "https", true},
		{"trusted proxy, plain http", []*net.IPNet{proxies}, "10.1.2.3", "http", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newConsoleEnv(t)
			env.e.IPExtractor = clientIPExtractor(tc.trusted)
			env.e.SchemeExtractor = schemeExtractor(tc.trusted)
			r := httptest.NewRequest("GET", "/console/login", nil)
			r.RemoteAddr = tc.remote + ":5000"
			if tc.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tc.proto)
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, r)
			cookies := rec.Result().Cookies()
			if len(cookies) == 0 {
				t.Fatalf("the login form set no cookie: %d", rec.Code)
			}
			for _, c := range cookies {
				if c.Secure != tc.secure {
					t.Errorf("cookie %s: Secure %t, want %t", c.Name, c.Secure, tc.secure)
				}
			}
		})
	}
}
