// Command rushfloor measures the floor this machine puts under the rush
// (issue 29, BENCHMARKS.md "Rush"): what a server that does no work at
// all can answer, and how fast, to buyers of the rush bench's shape driven
// from the same machine.
//
// It starts itself as a child process, the null server: a net/http server
// on 127.0.0.1 that answers every API request at once with the cheapest
// answer of its variant, A: 503 {"error":{"code":"overloaded"}} with
// Retry-After: 1 (the shed answer); B: 409 {"error":{"code":"seat_unavailable"}}
// (the no-seats storefront: the buyer places again at once). /readyz
// answers 200 "ok", on a listener of its own (-ready same: on the API's
// listener, as the real server serves it). The child inherits this
// process's descriptor limit (the real server's 20,000) and GOMAXPROCS
// (unset: both processes may use every core, as with `seatflow bench rush
// --stack real`). This process is the generator, shaped as
// server/bench/rush.go's buyers: -buyers goroutines, released in the same
// instant, sharing one http.Transport that keeps a connection per buyer,
// each in a closed loop POSTing a ~100-byte order to /api/v1/orders for
// -duration, decoding the error body and Retry-After as the bench's
// apiClient does, sleeping Retry-After after a 503 (the bench adds no
// jitter; -jitter adds up to that fraction), placing again at once after a
// 409, waiting 1 s after no answer and giving up after 5 in a row; beside
// them a /readyz probe every 100 ms on a connection of its own, from this
// process's runtime as the bench's was before it moved its prober to a
// process of its own (-probe-proc: from a process of its own, as the bench
// now probes, to tell the server's delay from the generator's). -requests 1 sends
// each buyer's first request alone: the first wave's cost by itself.
//
// It reports answers/s; answer latency (from before the request is handed
// to the client, as the bench times it, and from the request written to
// the body read) for every answer, each buyer's first (the first wave,
// dial included) and the rest; /readyz worst and p99; CPU seconds (user
// and system) of the server and the generator from /proc/<pid>/stat and of
// the whole machine from /proc/stat; the load average before and after;
// the kernel's listen-queue overflows; the generator's timer lag; and
// Little's law: the mean latency against mean requests in flight divided
// by answers/s.
//
//	go run ./scripts/rushfloor -variant B -buyers 10000 -duration 15s
//	go run ./scripts/rushfloor -variant A -buyers 1000 -json
//	go run ./scripts/rushfloor -variant B -buyers 10000 -probe-proc
//	go run ./scripts/rushfloor -variant A -buyers 10000 -requests 1
//
// "others" in the CPU line is the machine's busy time less the server's
// and the generator's: well above 0, another process shared the cores and
// the run is not a floor.
//
// Linux only in practice (it reads /proc); elsewhere those figures are 0.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The bench's constants (server/bench/rush.go).
const (
	maxFailures    = 5
	failureWait    = time.Second
	noRetryAfter   = time.Second
	probeEvery     = 100 * time.Millisecond
	probeTimeout   = 10 * time.Second
	clientTimeout  = 30 * time.Second
	lagEvery       = 10 * time.Millisecond
	inflightEvery  = 10 * time.Millisecond
	clientIPHeader = "X-SeatFlow-Client-IP"
	clockTicks     = 100 // USER_HZ: /proc's CPU times are in 1/100 s on Linux
)

func main() {
	serve := flag.String("serve", "", "internal: run as the null server of this variant (A or B)")
	readyOn := flag.String("ready", "own", "where /readyz is served: own (a listener of its own) or same (the API's listener)")
	variant := flag.String("variant", "B", "A: every answer 503 overloaded with Retry-After: 1; B: every answer 409 seat_unavailable")
	buyers := flag.Int("buyers", 10_000, "buyers, each with a connection of its own")
	duration := flag.Duration("duration", 15*time.Second, "how long the buyers place orders")
	jitter := flag.Float64("jitter", 0, "add up to this fraction of Retry-After at random to each wait (the bench adds none)")
	asJSON := flag.Bool("json", false, "print the result as one JSON line after the report")
	requests := flag.Int("requests", 0, "each buyer sends at most this many requests (0: no limit; 1: the first wave alone)")
	probeProc := flag.Bool("probe-proc", false, "probe /readyz from a process of its own instead of the generator's (as the bench probes)")
	probeURL := flag.String("probe", "", "internal: probe this URL until standard input closes, then print the samples")
	flag.Parse()
	if *probeURL != "" {
		runProbeProc(*probeURL)
		return
	}
	if *serve != "" {
		if err := runServer(*serve, *readyOn); err != nil {
			fmt.Fprintln(os.Stderr, "rushfloor server:", err)
			os.Exit(1)
		}
		return
	}
	if err := validate(*variant, *readyOn, *buyers, *duration, *jitter); err != nil || *requests < 0 {
		fmt.Fprintln(os.Stderr, "rushfloor:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, config{variant: *variant, ready: *readyOn, buyers: *buyers, duration: *duration, jitter: *jitter,
		requests: *requests, probeProc: *probeProc})
	if err != nil {
		fmt.Fprintln(os.Stderr, "rushfloor:", err)
		os.Exit(1)
	}
	res.print(os.Stdout)
	if *asJSON {
		b, _ := json.Marshal(res) // cannot fail: plain fields
		fmt.Println(string(b))
	}
}

func validate(variant, ready string, buyers int, duration time.Duration, jitter float64) error {
	if variant != "A" && variant != "B" {
		return fmt.Errorf("-variant %q: want A or B", variant)
	}
	if ready != "own" && ready != "same" {
		return fmt.Errorf("-ready %q: want own or same", ready)
	}
	if buyers <= 0 || duration <= 0 || jitter < 0 {
		return errors.New("-buyers and -duration must be positive, -jitter not negative")
	}
	if lim := noFile(); lim > 0 && buyers > lim-256 {
		return fmt.Errorf("-buyers %d: do not fit %d descriptors with 256 to spare", buyers, lim)
	}
	return nil
}

// --- the null server ---

// runServer serves until its standard input closes (the generator ended)
// or it is signalled. It prints "api=ADDR ready=ADDR" once listening.
func runServer(variant, readyOn string) error {
	var status int
	var body []byte
	hdr := http.Header{"Content-Type": {"application/json"}, "Cache-Control": {"no-store"}}
	switch variant {
	case "A":
		status, body = http.StatusServiceUnavailable, []byte(`{"error":{"code":"overloaded"}}`)
		hdr["Retry-After"] = []string{"1"}
	case "B":
		status, body = http.StatusConflict, []byte(`{"error":{"code":"seat_unavailable"}}`)
	default:
		return fmt.Errorf("variant %q", variant)
	}
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	okBody := []byte("ok")
	ready := func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = []string{"text/plain"}
		w.Header()["Content-Length"] = []string{"2"}
		_, _ = w.Write(okBody)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if readyOn == "same" && r.URL.Path == "/readyz" {
			ready(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body) // the order is read, as a real handler would
		h := w.Header()
		for k, v := range hdr {
			h[k] = v
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
	lc := net.ListenConfig{}
	ctx := context.Background()
	apiLn, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	readyAddr := apiLn.Addr().String()
	srvs := []*http.Server{{Handler: api, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}}
	lns := []net.Listener{apiLn}
	if readyOn == "own" {
		readyLn, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		readyAddr = readyLn.Addr().String()
		srvs = append(srvs, &http.Server{Handler: http.HandlerFunc(ready), ReadHeaderTimeout: 10 * time.Second})
		lns = append(lns, readyLn)
	}
	for i, s := range srvs {
		go func() { _ = s.Serve(lns[i]) }()
	}
	fmt.Printf("api=%s ready=%s\n", apiLn.Addr(), readyAddr)
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(done) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
	for _, s := range srvs {
		_ = s.Close()
	}
	return nil
}

// --- the generator ---

type config struct {
	variant, ready string
	buyers         int
	duration       time.Duration
	jitter         float64
	requests       int  // per buyer, 0: no limit
	probeProc      bool // /readyz probed from a process of its own
}

// Summary is a latency distribution in milliseconds.
type Summary struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

func summarize(us []int32) Summary {
	if len(us) == 0 {
		return Summary{}
	}
	slices.Sort(us)
	var sum float64
	for _, v := range us {
		sum += float64(v)
	}
	pct := func(p float64) float64 {
		rank := int(math.Ceil(p / 100 * float64(len(us))))
		return float64(us[min(max(rank, 1), len(us))-1]) / 1000
	}
	return Summary{Count: len(us), Mean: sum / float64(len(us)) / 1000, P50: pct(50), P99: pct(99), Max: float64(us[len(us)-1]) / 1000}
}

// CPU is a process's (or the machine's) CPU time in seconds.
type CPU struct {
	User float64 `json:"user_s"`
	Sys  float64 `json:"sys_s"`
}

func (c CPU) total() float64 { return c.User + c.Sys }

// Result is one run.
type Result struct {
	Variant   string  `json:"variant"`
	Ready     string  `json:"ready_listener"`
	Buyers    int     `json:"buyers"`
	Duration  float64 `json:"duration_s"`
	Jitter    float64 `json:"jitter"`
	Requests  int     `json:"requests_per_buyer"`
	ProbeProc bool    `json:"probe_own_process"`
	GoMaxProc int     `json:"gomaxprocs"`
	Cores     int     `json:"cores"`
	Answers   int64   `json:"answers"`
	PerSecond float64 `json:"answers_per_s"`
	Statuses  map[string]int64
	GaveUp    int64  `json:"buyers_gave_up"`
	NoAnswer  string `json:"first_no_answer,omitempty"`
	// Latencies from before the request is handed to the client (the
	// bench's measure, dial and pool wait included) to the body read.
	All   Summary `json:"all"`
	First Summary `json:"first_wave"`
	Rest  Summary `json:"rest"`
	// From the request written (httptrace WroteRequest) to the body read.
	WrittenAll   Summary `json:"written_all"`
	WrittenFirst Summary `json:"written_first_wave"`
	WrittenRest  Summary `json:"written_rest"`
	// FirstWaveDone is when the last buyer's first answer came, from the start.
	FirstWaveDone float64 `json:"first_wave_done_ms"`
	ReadyProbes   int     `json:"ready_probes"`
	ReadyFailed   int     `json:"ready_failed"`
	Readyz        Summary `json:"readyz"`
	Lag           Summary `json:"generator_timer_lag"`
	// Little's law: mean requests in flight (sampled) ÷ answers/s against
	// the mean latency.
	InFlight      float64 `json:"mean_in_flight"`
	LittleMean    float64 `json:"little_mean_ms"`
	Server        CPU     `json:"server_cpu"`
	Generator     CPU     `json:"generator_cpu"`
	Machine       CPU     `json:"machine_cpu"` // every process's, from /proc/stat, over the same window
	MachineIdle   float64 `json:"machine_idle_s"`
	Window        float64 `json:"cpu_window_s"`
	LoadBefore    string  `json:"loadavg_before"`
	LoadAfter     string  `json:"loadavg_after"`
	ListenOverflo int64   `json:"listen_overflows"`
	ListenDrops   int64   `json:"listen_drops"`
	SynCookies    int64   `json:"syncookies_sent"`
	SynRetrans    int64   `json:"syn_retransmits"`
}

// tally is one buyer's share.
type tally struct {
	total, written []int32 // µs
	first          int32
	firstWritten   int32
	firstDone      time.Duration
	status         map[string]int64
	gaveUp         bool
	noAnswer       string // the first request with no answer ran into
}

// errBody is the part of an error answer the bench decodes.
type errBody struct {
	Error struct {
		Code  string   `json:"code"`
		Seats []string `json:"seats"`
	} `json:"error"`
}

func run(ctx context.Context, cfg config) (*Result, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	child := exec.Command(exe, "-serve", cfg.variant, "-ready", cfg.ready)
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := child.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := child.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = stdin.Close() // the child ends when its standard input does
		_ = child.Process.Signal(syscall.SIGTERM)
		_ = child.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("null server: %w", err)
	}
	var apiAddr, readyAddr string
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "api=%s ready=%s", &apiAddr, &readyAddr); err != nil {
		return nil, fmt.Errorf("null server said %q: %w", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()

	res := &Result{Variant: cfg.variant, Ready: cfg.ready, Buyers: cfg.buyers, Duration: cfg.duration.Seconds(),
		Jitter: cfg.jitter, Requests: cfg.requests, ProbeProc: cfg.probeProc, GoMaxProc: runtime.GOMAXPROCS(0), Cores: runtime.NumCPU(), Statuses: map[string]int64{}}

	tr := &http.Transport{ // as server/bench/api.go's newAPIClient, MaxConnsPerHost as runRush sets it
		MaxIdleConns:        cfg.buyers + 8,
		MaxIdleConnsPerHost: cfg.buyers + 8,
		MaxConnsPerHost:     cfg.buyers,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	hc := &http.Client{Transport: tr, Timeout: clientTimeout}
	defer tr.CloseIdleConnections()
	url := "http://" + apiAddr + "/api/v1/orders"

	time.Sleep(500 * time.Millisecond) // the child settles
	res.LoadBefore = loadAvg()
	var inFlight atomic.Int64
	var wg sync.WaitGroup
	gate := make(chan struct{})
	tallies := make([]*tally, cfg.buyers)
	var start time.Time
	var deadline time.Time
	for i := range cfg.buyers {
		t := &tally{status: map[string]int64{}, first: -1}
		tallies[i] = t
		user := int64(i + 1)
		body := fmt.Appendf(nil, `{"user_id":%d,"show_id":1,"seat_ids":["R001-S%02d","R001-S%02d"],"channel":"web"}`, user, i%50+1, (i+1)%50+1)
		addr := fmt.Sprintf("10.%d.%d.%d", user>>16&0xff, user>>8&0xff, user&0xff)
		wg.Go(func() {
			<-gate
			buy(ctx, hc, url, body, addr, deadline, start, cfg.jitter, cfg.requests, &inFlight, t)
		})
	}
	stopProbe := startProbe(ctx, "http://"+readyAddr+"/readyz")
	if cfg.probeProc {
		if stopProbe, err = startProbeProc(exe, "http://"+readyAddr+"/readyz"); err != nil {
			return nil, err
		}
	}
	stopLag := startLag(ctx)
	stopInflight := sampleInflight(ctx, &inFlight)
	net0 := netstat()
	srv0, gen0 := procCPU(child.Process.Pid), procCPU(os.Getpid())
	mach0, idle0 := machineCPU()
	start = time.Now()
	deadline = start.Add(cfg.duration)
	close(gate)
	wg.Wait()
	window := time.Since(start)
	srv1, gen1 := procCPU(child.Process.Pid), procCPU(os.Getpid())
	mach1, idle1 := machineCPU()
	net1 := netstat()
	probes, ready := stopProbe()
	res.Lag = stopLag()
	meanInFlight := stopInflight()
	res.LoadAfter = loadAvg()

	res.Server = CPU{srv1.User - srv0.User, srv1.Sys - srv0.Sys}
	res.Generator = CPU{gen1.User - gen0.User, gen1.Sys - gen0.Sys}
	res.Machine = CPU{mach1.User - mach0.User, mach1.Sys - mach0.Sys}
	res.MachineIdle = idle1 - idle0
	res.Window = window.Seconds()
	res.ListenOverflo = net1["ListenOverflows"] - net0["ListenOverflows"]
	res.ListenDrops = net1["ListenDrops"] - net0["ListenDrops"]
	res.SynCookies = net1["SyncookiesSent"] - net0["SyncookiesSent"]
	res.SynRetrans = net1["TCPSynRetrans"] - net0["TCPSynRetrans"]
	res.ReadyProbes, res.ReadyFailed = len(probes), ready
	res.Readyz = summarize(probes)

	var all, first, rest, wAll, wFirst, wRest []int32
	var firstDone time.Duration
	for _, t := range tallies {
		for k, v := range t.status {
			res.Statuses[k] += v
		}
		if t.gaveUp {
			res.GaveUp++
		}
		if res.NoAnswer == "" {
			res.NoAnswer = t.noAnswer
		}
		all, wAll = append(all, t.total...), append(wAll, t.written...)
		if t.first >= 0 {
			first, wFirst = append(first, t.first), append(wFirst, t.firstWritten)
			firstDone = max(firstDone, t.firstDone)
			rest, wRest = append(rest, t.total[1:]...), append(wRest, t.written[1:]...)
		}
	}
	res.Answers = int64(len(all))
	res.PerSecond = float64(res.Answers) / window.Seconds()
	res.All, res.First, res.Rest = summarize(all), summarize(first), summarize(rest)
	res.WrittenAll, res.WrittenFirst, res.WrittenRest = summarize(wAll), summarize(wFirst), summarize(wRest)
	res.FirstWaveDone = float64(firstDone) / float64(time.Millisecond)
	res.InFlight = meanInFlight
	if res.PerSecond > 0 {
		res.LittleMean = meanInFlight / res.PerSecond * 1000
	}
	return res, nil
}

// buy is one buyer: placements in a closed loop until the deadline.
func buy(ctx context.Context, hc *http.Client, url string, body []byte, addr string, deadline, start time.Time,
	jitter float64, requests int, inFlight *atomic.Int64, t *tally) {
	failures := 0
	for sent := 0; ctx.Err() == nil && time.Now().Before(deadline) && (requests == 0 || sent < requests); sent++ {
		var t0 time.Time
		var wrote atomic.Int64 // set on the transport's write goroutine
		tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			GotConn:      func(httptrace.GotConnInfo) {}, // the bench traces GotConn; its cost is kept
			WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(time.Since(t0).Nanoseconds()) },
		})
		req, err := http.NewRequestWithContext(tctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			t.status["bad request: "+err.Error()]++
			t.gaveUp = true
			return
		}
		req.Header.Set("Authorization", "Bearer rushfloor-null-token")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(clientIPHeader, addr)
		inFlight.Add(1)
		t0 = time.Now()
		status, retryAfter, err := do(hc, req)
		done := time.Now()
		inFlight.Add(-1)
		if status == 0 {
			t.status["no answer"]++
			if t.noAnswer == "" {
				t.noAnswer = err.Error()
			}
			if ctx.Err() != nil {
				return
			}
			if failures++; failures >= maxFailures {
				t.gaveUp = true
				return
			}
			sleep(ctx, failureWait)
			continue
		}
		failures = 0
		d := int32(min(done.Sub(t0).Microseconds(), math.MaxInt32))
		w := d
		if at := wrote.Load(); at > 0 {
			w = int32(min(done.Sub(t0.Add(time.Duration(at))).Microseconds(), math.MaxInt32))
		}
		t.total, t.written = append(t.total, d), append(t.written, w)
		if t.first < 0 {
			t.first, t.firstWritten, t.firstDone = d, w, done.Sub(start)
		}
		t.status[strconv.Itoa(status)]++
		switch status {
		case http.StatusServiceUnavailable, http.StatusTooManyRequests:
			wait := retryAfter
			if wait <= 0 {
				wait = noRetryAfter
			}
			if jitter > 0 {
				wait += time.Duration(rand.Float64() * jitter * float64(wait))
			}
			sleep(ctx, wait)
		case http.StatusConflict:
			// placed again at once, with other seats (the null server does
			// not care which)
		default:
			t.gaveUp = true
			return
		}
	}
}

// do is the bench's apiClient.doStatus for an error answer: the body read
// whole, decoded, Retry-After parsed.
func do(hc *http.Client, req *http.Request) (status int, retryAfter time.Duration, err error) {
	resp, err := hc.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	if resp.StatusCode/100 != 2 {
		var eb errBody
		_ = json.Unmarshal(raw, &eb)
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			retryAfter = time.Duration(secs) * time.Second
		}
	}
	return resp.StatusCode, retryAfter, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// startProbe asks url every probeEvery on a connection of its own until
// the returned function is called, which returns the latencies (µs) and
// the failures.
func startProbe(ctx context.Context, url string) func() ([]int32, int) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	ctx, cancel := context.WithCancel(ctx)
	var samples []int32
	failed := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(probeEvery)
		defer tick.Stop()
		for {
			pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
			t0 := time.Now()
			ok := false
			req, _ := http.NewRequestWithContext(pctx, http.MethodGet, url, nil)
			if resp, err := hc.Do(req); err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				ok = err == nil && resp.StatusCode == http.StatusOK
			}
			d := time.Since(t0)
			pcancel()
			if ctx.Err() != nil {
				return
			}
			samples = append(samples, int32(min(d.Microseconds(), math.MaxInt32)))
			if !ok {
				failed++
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() ([]int32, int) {
		cancel()
		<-done
		return samples, failed
	}
}

// startProbeProc runs the probe in a child process of its own (-probe):
// the returned function ends it and returns what it saw.
func startProbeProc(exe, url string) (func() ([]int32, int), error) {
	cmd := exec.Command(exe, "-probe", url)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() ([]int32, int) {
		_ = in.Close()
		_ = cmd.Wait()
		var r probeOut
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			fmt.Fprintln(os.Stderr, "rushfloor: probe process:", err)
			return nil, 0
		}
		return r.Samples, r.Failed
	}, nil
}

// probeOut is what a probe process prints.
type probeOut struct {
	Samples []int32 `json:"samples_us"`
	Failed  int     `json:"failed"`
}

// runProbeProc is the probe process: it probes url until its standard
// input closes, then prints the samples.
func runProbeProc(url string) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := startProbe(ctx, url)
	_, _ = io.Copy(io.Discard, os.Stdin)
	samples, failed := stop()
	cancel()
	b, _ := json.Marshal(probeOut{samples, failed}) // cannot fail: plain fields
	fmt.Println(string(b))
}

// startLag measures how late a timer of lagEvery fires in this process.
func startLag(ctx context.Context) func() Summary {
	ctx, cancel := context.WithCancel(ctx)
	var samples []int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			t0 := time.Now()
			select {
			case <-ctx.Done():
				return
			case <-time.After(lagEvery):
				samples = append(samples, int32(max(0, time.Since(t0)-lagEvery).Microseconds()))
			}
		}
	}()
	return func() Summary {
		cancel()
		<-done
		return summarize(samples)
	}
}

// sampleInflight averages the requests in flight every inflightEvery.
func sampleInflight(ctx context.Context, n *atomic.Int64) func() float64 {
	ctx, cancel := context.WithCancel(ctx)
	var sum, count float64
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(inflightEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sum += float64(n.Load())
				count++
			}
		}
	}()
	return func() float64 {
		cancel()
		<-done
		if count == 0 {
			return 0
		}
		return sum / count
	}
}

// --- /proc ---

// procCPU is utime and stime of a process (fields 14 and 15 of its stat).
func procCPU(pid int) CPU {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return CPU{}
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return CPU{}
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return CPU{u / clockTicks, k / clockTicks}
}

// machineCPU is the machine's user (with nice), system (with irq and
// softirq) and idle (with iowait) seconds from /proc/stat.
func machineCPU() (CPU, float64) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPU{}, 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return CPU{}, 0
	}
	v := make([]float64, 8)
	for i := range v {
		v[i], _ = strconv.ParseFloat(f[i+1], 64)
		v[i] /= clockTicks
	}
	return CPU{v[0] + v[1], v[2] + v[5] + v[6]}, v[3] + v[4]
}

func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// netstat is /proc/net/netstat's and /proc/net/snmp's counters by name.
func netstat() map[string]int64 {
	m := map[string]int64{}
	for _, file := range []string{"/proc/net/netstat", "/proc/net/snmp"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		lines := strings.Split(string(raw), "\n")
		for i := 0; i+1 < len(lines); i += 2 {
			names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
			for j := 1; j < len(names) && j < len(values); j++ {
				n, _ := strconv.ParseInt(values[j], 10, 64)
				m[names[j]] = n
			}
		}
	}
	return m
}

func noFile() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return int(r.Cur)
}

// --- report ---

func (r *Result) print(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	lat := func(s Summary) string {
		return fmt.Sprintf("n=%d mean %.1f p50 %.1f p99 %.1f max %.1f ms", s.Count, s.Mean, s.P50, s.P99, s.Max)
	}
	p("rushfloor: variant %s, %d buyers, %v, /readyz on %s listener (probe in own process: %v), GOMAXPROCS %d of %d cores, jitter %.2f, requests per buyer %d (0: no limit)",
		r.Variant, r.Buyers, time.Duration(r.Duration*float64(time.Second)), r.Ready, r.ProbeProc, r.GoMaxProc, r.Cores, r.Jitter, r.Requests)
	p("load average before %s, after %s", r.LoadBefore, r.LoadAfter)
	p("answers %d, %.0f/s over %.2f s; statuses %v; buyers gave up %d", r.Answers, r.PerSecond, r.Window, r.Statuses, r.GaveUp)
	if r.NoAnswer != "" {
		p("first request with no answer: %s", r.NoAnswer)
	}
	p("latency, from Do (the bench's measure)   all:   %s", lat(r.All))
	p("                                         first: %s (last first answer at %.0f ms)", lat(r.First), r.FirstWaveDone)
	p("                                         rest:  %s", lat(r.Rest))
	p("latency, from request written            all:   %s", lat(r.WrittenAll))
	p("                                         first: %s", lat(r.WrittenFirst))
	p("                                         rest:  %s", lat(r.WrittenRest))
	p("/readyz: %d probes, %d failed, %s", r.ReadyProbes, r.ReadyFailed, lat(r.Readyz))
	p("generator timer lag (10 ms timer): %s", lat(r.Lag))
	p("Little: mean in flight %.0f ÷ %.0f/s = %.1f ms, measured mean %.1f ms", r.InFlight, r.PerSecond, r.LittleMean, r.All.Mean)
	busy := r.Machine.total()
	p("CPU over %.2f s (%.2f core-s available): server %.2f s (user %.2f sys %.2f), generator %.2f s (user %.2f sys %.2f); machine busy %.2f s (user %.2f sys+irq %.2f), idle %.2f s, others %.2f s",
		r.Window, r.Window*float64(r.Cores), r.Server.total(), r.Server.User, r.Server.Sys, r.Generator.total(), r.Generator.User, r.Generator.Sys,
		busy, r.Machine.User, r.Machine.Sys, r.MachineIdle, busy-r.Server.total()-r.Generator.total())
	if r.Answers > 0 {
		p("CPU per answer: server %.1f µs, generator %.1f µs, machine %.1f µs",
			r.Server.total()/float64(r.Answers)*1e6, r.Generator.total()/float64(r.Answers)*1e6, busy/float64(r.Answers)*1e6)
	}
	p("kernel: listen overflows %d, listen drops %d, SYN cookies sent %d, SYN retransmits %d", r.ListenOverflo, r.ListenDrops, r.SynCookies, r.SynRetrans)
}
