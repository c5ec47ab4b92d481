package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// serverProfile is a CPU profile of the server under test (--cpu-profile),
// taken through its profiles listener (SEATFLOW_PPROF_ADDR) while the
// scenarios load it. Only busy time is sampled, so the seconds the server
// waits idle for the profile to end add nothing to it.
type serverProfile struct {
	done chan struct{}
	data []byte
	err  error
}

// startProfile asks the server at addr for a CPU profile of d.
func startProfile(ctx context.Context, addr string, d time.Duration) *serverProfile {
	p := &serverProfile{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d/time.Second))
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			p.err = err
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			p.err = fmt.Errorf("CPU profile of the server: %w", err)
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		switch {
		case err != nil:
			p.err = fmt.Errorf("CPU profile of the server: %w", err)
		case resp.StatusCode != http.StatusOK:
			p.err = fmt.Errorf("CPU profile of the server: %s: %.200s", resp.Status, b)
		default:
			p.data = b
		}
	}()
	return p
}

// save waits for the profile and writes it to path.
func (p *serverProfile) save(path string) error {
	<-p.done
	if p.err != nil {
		return p.err
	}
	if err := os.WriteFile(path, p.data, 0o644); err != nil {
		return fmt.Errorf("--cpu-profile: %w", err)
	}
	return nil
}
