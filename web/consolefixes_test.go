package web

import "testing"

func TestDevice(t *testing.T) {
	for _, tc := range []struct{ ua, want string }{
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", "Chrome 120 · Windows"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.61", "Edge 120 · Windows"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15", "Safari 17 · macOS"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1", "Safari 17 · iPhone"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/119.0.6045.169 Mobile/15E148 Safari/604.1", "Chrome 119 · iPhone"},
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36", "Chrome 120 · Android"},
		{"Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0", "Firefox 121 · Linux"},
		{"Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", "Chrome 120 · ChromeOS"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 OPR/105.0.0.0", "Opera 105 · Windows"},
		{"curl/8.5.0", "curl 8"},
		{"Go-http-client/1.1", ""},
		{"", ""},
	} {
		if got := Device(tc.ua); got != tc.want {
			t.Errorf("Device(%q) = %q, want %q", tc.ua, got, tc.want)
		}
	}
}

// TestEngineActorsTranslated: the expiry sweep, as a cancelling path on the
// dashboard and as an actor in the hold bar, reads in Chinese.
func TestEngineActorsTranslated(t *testing.T) {
	zh := Page{Lang: LangZH}
	for _, tc := range []struct{ name, got, want string }{
		{"path", PathName(zh, "sweep"), "超时清扫"},
		{"hold-bar actor", HoldMark{Who: "sweep"}.WhoIn(zh), "超时清扫"},
		{"a person stays as written", HoldMark{Who: "staff:ann"}.WhoIn(zh), "staff:ann"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
