package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// TestMain lets this test binary be the rush's /readyz prober: the rush
// starts os.Executable() as `bench probe` (prober.go), and in a test run
// that is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "bench" && os.Args[2] == probeCommand {
		if err := Run(context.Background(), os.Args[2:], os.Getenv, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
