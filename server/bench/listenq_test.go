package bench

import (
	"os"
	"path/filepath"
	"testing"
)

func TestListenOverflows(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       int64
		ok         bool
	}{
		{"counted", "TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 0 17 19\nIpExt: InNoRoutes\nIpExt: 0\n", 17, true},
		{"none", "TcpExt: SyncookiesSent ListenDrops\nTcpExt: 0 19\n", 0, false},
		{"no TcpExt", "IpExt: InNoRoutes\nIpExt: 0\n", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "netstat")
			if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := listenOverflows(path)
			if (err == nil) != c.ok || got != c.want {
				t.Errorf("got %d, %v; want %d, ok %v", got, err, c.want, c.ok)
			}
		})
	}
}
