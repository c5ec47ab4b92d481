package clustertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// servicesScript is scripts/services.sh of this checkout.
func servicesScript(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test's source")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "scripts", "services.sh")
}

// services runs scripts/services.sh with env added to the test's own.
type services struct {
	t      *testing.T
	script string
	env    []string
}

func (s services) run(args ...string) error {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{s.script}, args...)...)
	cmd.Env = append(os.Environ(), s.env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("services.sh %v: %w\n%s", args, err, out)
	}
	s.t.Logf("services.sh %v: %v", args, time.Since(start).Round(time.Millisecond))
	return nil
}

// privateServices starts a MariaDB and a Redis of the test's own, on free
// ports with their state in the test's temp dir, through the same script
// that runs the shared ones, and stops them when the test ends. Stopping
// these hurts no other test.
type privateServices struct {
	services
	mysqlURL, redisURL string
}

func startPrivateServices(t *testing.T) *privateServices {
	t.Helper()
	port := func() string {
		_, p, _ := net.SplitHostPort(freeAddr(t))
		return p
	}
	mysqlPort, redisPort := port(), port()
	p := &privateServices{
		services: services{t: t, script: servicesScript(t), env: []string{
			"SEATFLOW_SERVICES_DIR=" + t.TempDir(),
			"SEATFLOW_MYSQL_PORT=" + mysqlPort,
			"SEATFLOW_REDIS_PORT=" + redisPort,
		}},
		mysqlURL: fmt.Sprintf("mysql://seatflow:seatflow@tcp(127.0.0.1:%s)/seatflow", mysqlPort),
		redisURL: fmt.Sprintf("redis://127.0.0.1:%s/0", redisPort),
	}
	t.Cleanup(func() {
		if err := p.run("down", "mariadb", "redis"); err != nil {
			t.Errorf("stop private services: %v", err)
		}
	})
	if err := p.run("up", "mariadb", "redis"); err != nil {
		t.Fatal(err)
	}
	return p
}
