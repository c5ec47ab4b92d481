package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// The rush's /readyz prober is a process of its own, `seatflow bench
// probe` (not in the usage: only the bench starts it). Probed from the
// bench's process, a probe's goroutine waited in the bench's Go scheduler
// behind ~10,000 runnable buyers: against a server doing nothing it took
// 0.75-1.5 s at worst, from a process of its own 87-112 ms
// (scripts/rushfloor -probe-proc). Its figure was the bench's delay, not
// the server's; from its own process it is what a load balancer sees.

// probeCommand is the prober's subcommand of `seatflow bench`.
const probeCommand = "probe"

// probeSample is one probe: a JSON line on the prober's standard output.
type probeSample struct {
	Took time.Duration `json:"took_ns"`
	Err  string        `json:"err,omitempty"` // why it failed; empty: 200
}

// runProber is `seatflow bench probe --url URL [--every D] [--timeout D]`:
// it GETs url every --every, each bounded by --timeout, and writes one
// probeSample per probe to out, until in (the bench's end of a pipe)
// closes or ctx ends.
func runProber(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("bench probe", flag.ContinueOnError)
	url := fs.String("url", "", "the URL to probe, e.g. http://127.0.0.1:9091/readyz")
	every := fs.Duration("every", probeEvery, "time between the starts of two probes")
	timeout := fs.Duration("timeout", probeTimeout, "bound of one probe")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" || *every <= 0 || *timeout <= 0 || fs.NArg() > 0 {
		return errors.New("bench probe: want --url, a positive --every and --timeout, and no other argument")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, in)
		cancel()
	}()
	// A connection of its own per probe, as a kubelet probes.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}}
	enc := json.NewEncoder(out)
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for {
		pctx, pcancel := context.WithTimeout(ctx, *timeout)
		t0 := time.Now()
		err := probeOnce(pctx, hc, *url)
		took := time.Since(t0)
		pcancel()
		if ctx.Err() != nil {
			return nil // stopped: the probe in flight was cut short by us
		}
		s := probeSample{Took: took}
		if err != nil {
			s.Err = err.Error()
		}
		if err := enc.Encode(s); err != nil {
			return fmt.Errorf("bench probe: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// probeOnce GETs url and wants a 200.
func probeOnce(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(body))
	}
	return nil
}

// probeStartWait bounds the wait for the prober's first sample.
const probeStartWait = 30 * time.Second

// startProbe runs the prober against url in a child process and returns
// once its first sample is in (the prober runs, and url answers); stop
// ends it and returns what it saw.
func startProbe(ctx context.Context, url string) (stop func() (probeResult, error), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the seatflow binary: %w", err)
	}
	cmd := exec.Command(exe, "bench", probeCommand, "--url", url,
		"--every", probeEvery.String(), "--timeout", probeTimeout.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = childAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the /readyz prober: %w", err)
	}
	res := probeResult{URL: url}
	var (
		samples []time.Duration
		readErr error
		first   = make(chan struct{})
		ended   = make(chan struct{}) // the prober's output is read to its end
	)
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var s probeSample
			if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
				readErr = fmt.Errorf("the /readyz prober wrote %q: %w", sc.Text(), err)
				_, _ = io.Copy(io.Discard, out) // let it finish
				return
			}
			if res.Probes == 0 {
				close(first)
			}
			res.Probes++
			res.Worst = max(res.Worst, s.Took)
			samples = append(samples, s.Took)
			if s.Err != "" {
				if res.Failed++; res.FirstFailure == "" {
					res.FirstFailure = s.Err
				}
			}
		}
		readErr = sc.Err()
	}()
	stop = func() (probeResult, error) {
		_ = in.Close()
		<-ended
		err := cmd.Wait()
		if err != nil {
			err = fmt.Errorf("the /readyz prober: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		res.Latency = summarize(samples)
		return res, errors.Join(readErr, err)
	}
	select {
	case <-first:
		return stop, nil
	case <-ended:
		_, err = stop()
		return nil, errors.Join(errors.New("the /readyz prober stopped before its first probe"), err)
	case <-ctx.Done():
		_, err = stop()
		return nil, errors.Join(ctx.Err(), err)
	case <-time.After(probeStartWait):
		_, err = stop()
		return nil, errors.Join(fmt.Errorf("no /readyz probe of %s in %v", url, probeStartWait), err)
	}
}
