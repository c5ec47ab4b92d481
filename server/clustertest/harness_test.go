package clustertest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
	"seatflow/core/store"
)

const (
	apiToken      = "cluster-test-token-0123456789"
	paymentSecret = "cluster-test-payment-secret-0123456789"
)

// buildSeatflow compiles the binary once per test into its temp dir (the
// build cache makes the second test's build a link).
func buildSeatflow(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go toolchain not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "seatflow")
	start := time.Now()
	out, err := exec.Command(gobin, "build", "-o", bin, "seatflow/server/cmd/seatflow").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("built seatflow in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// stack is one real SeatFlow deployment's shared state: a fresh database
// with one show, the Redis and RocketMQ settings, and what the test reads
// back to check invariants.
type stack struct {
	t     *testing.T
	env   map[string]string // SEATFLOW_* of every process
	db    *store.DB
	redis redis.UniversalClient
	seats *seats.Store
	show  core.Show
}

// newStack prepares a fresh database (its show ids start at a random base,
// so the shared Redis never mixes its seats with another test's), connects
// to Redis, and creates a show of rows×cols seats priced 1000..(rows)×1000.
func newStack(t *testing.T, mysqlDSN, redisURL, mqURL string, rows, cols int, extra map[string]string) *stack {
	t.Helper()
	ctx := t.Context()
	db, err := store.Open(ctx, mysqlDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	base, _ := rand.Int(rand.Reader, big.NewInt(1<<40))
	if _, err := db.X().ExecContext(ctx, fmt.Sprintf("ALTER TABLE show_info AUTO_INCREMENT = %d", base.Int64()+1000)); err != nil {
		t.Fatal(err)
	}
	show, err := db.CreateShow(ctx, core.Show{Name: "Cluster " + stacktest.RandHex(3), Venue: "Hall",
		StartsAt: time.Now().Add(24 * time.Hour).UTC(), Rows: rows, Cols: cols}, store.DemoSeats(rows, cols, 1000))
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := seats.Dial(ctx, redisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		rdb.Del(context.Background(), seats.KeySeats(show.ID), seats.KeyLimit(show.ID))
		rdb.Close()
	})
	id := stacktest.RandHex(5)
	env := map[string]string{
		"SEATFLOW_DB":             mysqlDSN,
		"SEATFLOW_REDIS":          redisURL,
		"SEATFLOW_MQ":             mqURL,
		"SEATFLOW_ROCKETMQ_TOPIC": "SF_CLUSTER_" + id,
		"SEATFLOW_ROCKETMQ_GROUP": "sf-cluster-" + id, // one group: the instances share the messages
		"SEATFLOW_API_TOKEN":      apiToken,
		"SEATFLOW_PAYMENT_SECRET": paymentSecret,
		"SEATFLOW_LOG_LEVEL":      "warn",
		// The load comes from one key and one address: it measures the
		// cluster, not the API's abuse limits.
		"SEATFLOW_RATE_PER_KEY": "0", "SEATFLOW_RATE_PER_CLIENT": "0", "SEATFLOW_MAX_HOLDS_PER_CLIENT": "0",
	}
	for k, v := range extra {
		env[k] = v
	}
	return &stack{t: t, env: env, db: db, redis: rdb, seats: seats.New(rdb), show: show}
}

// environ is the process environment of a child: the test's own minus
// every SEATFLOW_* (so nothing leaks in from the developer's shell), plus env.
func environ(env map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SEATFLOW_") {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// instance is one `seatflow serve` process.
type instance struct {
	t    *testing.T
	name string
	bin  string
	env  map[string]string
	addr string
	log  string // stdout and stderr, appended across restarts
	// command builds the process (nil: the binary itself, here); the
	// multi-host tests run it inside a topology host's namespace.
	command func(name string, args ...string) *exec.Cmd

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan error // Wait's result, when the process ends
}

// startInstance starts a server on a free port and waits until it answers.
func (s *stack) startInstance(name, bin string) *instance {
	s.t.Helper()
	return s.startInstanceAt(name, bin, freeAddr(s.t), nil)
}

// startInstanceAt starts a server listening on addr, its process built by
// command (nil: run bin directly), and waits until it answers.
func (s *stack) startInstanceAt(name, bin, addr string, command func(name string, args ...string) *exec.Cmd) *instance {
	s.t.Helper()
	in := &instance{t: s.t, name: name, bin: bin, env: s.env, addr: addr, command: command,
		log: filepath.Join(s.t.TempDir(), name+".log")}
	if err := in.start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() {
		in.mu.Lock()
		cmd, exited := in.cmd, in.exited
		in.mu.Unlock()
		if cmd != nil {
			_ = cmd.Process.Kill()
			<-exited
		}
		if s.t.Failed() {
			in.dumpLog()
		}
	})
	return in
}

func (in *instance) base() string { return "http://" + in.addr }

// start (re)starts the process with the same settings and port and waits
// until it is ready. It returns errors rather than failing the test, so it
// may run on a goroutine of the test's.
func (in *instance) start() error {
	out, err := os.OpenFile(in.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	env := map[string]string{"SEATFLOW_ADDR": in.addr}
	for k, v := range in.env {
		env[k] = v
	}
	cmd := exec.Command(in.bin, "serve")
	if in.command != nil {
		cmd = in.command(in.bin, "serve")
	}
	cmd.Env, cmd.Stdout, cmd.Stderr = environ(env), out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("%s: start: %w", in.name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); out.Close() }()
	in.mu.Lock()
	in.cmd, in.exited = cmd, exited
	in.mu.Unlock()

	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(in.base() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-exited:
			in.dumpLog()
			in.mu.Lock()
			in.cmd = nil
			in.mu.Unlock()
			return fmt.Errorf("%s exited during startup: %w", in.name, err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			in.dumpLog()
			return fmt.Errorf("%s not ready after 90s", in.name)
		}
	}
}

// kill is SIGKILL: no shutdown at all, as in a crash or an OOM kill.
func (in *instance) kill() error {
	in.mu.Lock()
	cmd, exited := in.cmd, in.exited
	in.cmd = nil
	in.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("%s is not running", in.name)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("%s: kill: %w", in.name, err)
	}
	<-exited
	return nil
}

// terminate sends SIGTERM and returns how long the graceful shutdown took
// and the exit error (nil for status 0).
func (in *instance) terminate(limit time.Duration) (time.Duration, error) {
	in.mu.Lock()
	cmd, exited := in.cmd, in.exited
	in.cmd = nil
	in.mu.Unlock()
	if cmd == nil {
		return 0, fmt.Errorf("%s is not running", in.name)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	select {
	case err := <-exited:
		return time.Since(start), err
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-exited
		return time.Since(start), fmt.Errorf("%s still running %v after SIGTERM", in.name, limit)
	}
}

func (in *instance) dumpLog() {
	b, err := os.ReadFile(in.log)
	if err != nil {
		return
	}
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	in.t.Logf("---- last lines of %s's log:\n%s", in.name, b)
}

// metric returns the sum of a counter's series in the instance's /metrics.
func (in *instance) metric(name string) (float64, error) {
	resp, err := http.Get(in.base() + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("metric line %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// runTool runs a one-shot seatflow command (e.g. reconcile --once) with the
// stack's settings.
func (s *stack) runTool(bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(s.t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = environ(s.env)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// ---------------------------------------------------------------------------
// The API as the load sees it.

// call is one API call's outcome; err is a transport error (no answer).
type call struct {
	op         string
	status     int
	code       string
	retryAfter string // the Retry-After header
	body       map[string]any
	err        error
}

type apiClient struct{ http *http.Client }

func newAPIClient() *apiClient {
	return &apiClient{http: &http.Client{Timeout: 20 * time.Second}}
}

func (c *apiClient) do(op, method, url string, body []byte, header map[string]string) call {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return call{op: op, err: err}
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return call{op: op, err: err}
	}
	defer resp.Body.Close()
	res := call{op: op, status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		res.err = err
		return res
	}
	_ = json.Unmarshal(b, &res.body)
	if e, ok := res.body["error"].(map[string]any); ok {
		res.code, _ = e["code"].(string)
	}
	return res
}

func (c *apiClient) place(base string, user, show int64, seatIDs []string) call {
	b, _ := json.Marshal(map[string]any{"user_id": user, "show_id": show, "seat_ids": seatIDs})
	return c.do("place", "POST", base+"/api/v1/orders", b, nil)
}

func (c *apiClient) cancel(base, orderNo string, user int64) call {
	b, _ := json.Marshal(map[string]any{"user_id": user})
	return c.do("cancel", "POST", base+"/api/v1/orders/"+orderNo+"/cancel", b, nil)
}

// pay sends a correctly signed payment callback.
func (c *apiClient) pay(base, orderNo, txnID string, amount int64) call {
	b, _ := json.Marshal(map[string]any{"order_no": orderNo, "txn_id": txnID, "amount_cents": amount})
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte(paymentSecret))
	mac.Write([]byte(ts + "."))
	mac.Write(b)
	return c.do("pay", "POST", base+"/api/v1/payments/callback", b, map[string]string{
		"X-SeatFlow-Timestamp": ts, "X-SeatFlow-Signature": hex.EncodeToString(mac.Sum(nil))})
}

// ---------------------------------------------------------------------------
// Load: placements, payments and cancels over a set of instances.

// placed is an order the API accepted (201).
type placed struct {
	orderNo string
	user    int64
	amount  int64
}

// sentPayment is a callback the API answered 200.
type sentPayment struct {
	orderNo, txnID, result string
}

// tally records what the load saw.
type tally struct {
	mu          sync.Mutex
	statuses    map[string]map[int]int // op → status → count
	codes       map[string]int         // op/status/code → count, for the report
	noAnswer    map[string]int         // op → transport errors (instance down)
	bad         []string               // answers a client must never get (5xx other than 503, or any 5xx where forbidden)
	unavailable int                    // 503 answers
	placeFailed []time.Time            // when a placement got a 5xx or no answer
	orders      []placed
	payments    []sentPayment
}

func newTally() *tally {
	return &tally{statuses: map[string]map[int]int{}, codes: map[string]int{}, noAnswer: map[string]int{}}
}

// record counts c; allow503 says whether 503 store_unavailable is an
// acceptable answer right now (a store is down).
func (tl *tally) record(c call, allow503 bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if c.op == "place" && (c.status == 0 || c.status >= 500) {
		tl.placeFailed = append(tl.placeFailed, time.Now())
	}
	if c.err != nil && c.status == 0 {
		tl.noAnswer[c.op]++
		return
	}
	if tl.statuses[c.op] == nil {
		tl.statuses[c.op] = map[int]int{}
	}
	tl.statuses[c.op][c.status]++
	tl.codes[fmt.Sprintf("%s %d %s", c.op, c.status, c.code)]++
	if c.status == http.StatusServiceUnavailable {
		tl.unavailable++
	}
	switch {
	case c.status == http.StatusServiceUnavailable && c.code == core.ErrStoreUnavailable.Code && allow503 && c.retryAfter != "":
	case c.status >= 500:
		if len(tl.bad) < 20 {
			tl.bad = append(tl.bad, fmt.Sprintf("%s: %d %s (Retry-After %q) %v", c.op, c.status, c.code, c.retryAfter, c.body))
		} else {
			tl.bad[19] = "... and more"
		}
	}
}

func (tl *tally) count503() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.unavailable
}

func (tl *tally) addOrder(p placed) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.orders = append(tl.orders, p)
}

func (tl *tally) addPayment(p sentPayment) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.payments = append(tl.payments, p)
}

func (tl *tally) report(t *testing.T) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	keys := make([]string, 0, len(tl.codes))
	for k := range tl.codes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-45s %d\n", k, tl.codes[k])
	}
	for op, n := range tl.noAnswer {
		fmt.Fprintf(&b, "  %-45s %d\n", op+" (no answer: instance down)", n)
	}
	t.Logf("load: %d orders placed, %d payments answered\n%s", len(tl.orders), len(tl.payments), b.String())
}

// loadConfig shapes a load run.
type loadConfig struct {
	workers int
	// duration bounds the load; stop, when not nil, ends it earlier.
	duration time.Duration
	stop     <-chan struct{}
	users    int64
	maxSeats int
	// allow503 reports whether a store is down at the moment (503 is then a
	// fine answer); nil means never.
	allow503 func() bool
}

// runLoad places orders on random instances and, for each accepted one,
// pays it (sometimes twice: a duplicate; sometimes after it expired: a
// discrepancy), cancels it, or lets it expire. bases returns the instance
// URLs to pick from. It returns when duration has passed (or stop is
// closed) and every payment it scheduled has been sent.
func runLoad(t *testing.T, s *stack, cfg loadConfig, bases func() []string, tl *tally) {
	c := newAPIClient()
	allow := func() bool { return cfg.allow503 != nil && cfg.allow503() }
	// A call sent while a store was down may answer 503 when its deadline
	// runs out, after the topology is whole again: it is judged by whether
	// the store was down when it began or when it ended.
	record := func(do func() call) call {
		began := allow()
		res := do()
		tl.record(res, began || allow())
		return res
	}
	end := time.Now().Add(cfg.duration)
	running := func() bool {
		select {
		case <-cfg.stop:
			return false
		default:
			return time.Now().Before(end)
		}
	}
	holdTTL, _ := time.ParseDuration(s.env["SEATFLOW_HOLD_TTL"])
	var late sync.WaitGroup // late payments, sent after their order expired
	var wg sync.WaitGroup
	for w := range cfg.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := newRand(uint64(w))
			pick := func() string { b := bases(); return b[rnd.IntN(len(b))] }
			for i := 0; running(); i++ {
				user := 1 + rnd.Int64N(cfg.users)
				row := 1 + rnd.IntN(s.show.Rows)
				col := 1 + rnd.IntN(s.show.Cols)
				n := 1 + rnd.IntN(cfg.maxSeats)
				var ids []string
				for k := 0; k < n && col+k <= s.show.Cols; k++ {
					ids = append(ids, fmt.Sprintf("%s-%d", store.RowName(row), col+k))
				}
				res := record(func() call { return c.place(pick(), user, s.show.ID, ids) })
				if res.status == http.StatusCreated {
					o := placed{orderNo: res.body["order_no"].(string), user: user, amount: int64(res.body["amount_cents"].(float64))}
					tl.addOrder(o)
					txn := fmt.Sprintf("T-%d-%d-%s", w, i, stacktest.RandHex(3))
					// The instance is picked here: rnd is this worker's
					// alone, and a late payment runs on a goroutine of its own.
					payAt := pick()
					pay := func() {
						res := record(func() call { return c.pay(payAt, o.orderNo, txn, o.amount) })
						if res.status == http.StatusOK {
							tl.addPayment(sentPayment{orderNo: o.orderNo, txnID: txn, result: res.body["result"].(string)})
						}
					}
					switch r := rnd.IntN(100); {
					case r < 30: // pay at once, on any instance
						pay()
						if r < 5 { // the gateway sends the same callback again
							pay()
						}
					case r < 50: // the customer gives up
						record(func() call { return c.cancel(pick(), o.orderNo, o.user) })
					case r < 54: // paid after the hold ran out: a discrepancy
						late.Add(1)
						go func() {
							defer late.Done()
							time.Sleep(holdTTL + 3*time.Second)
							pay()
						}()
					default: // left to expire
					}
				}
				// Reads, as the front end does them.
				if i%5 == 0 {
					record(func() call {
						return c.do("seats", "GET", fmt.Sprintf("%s/api/v1/shows/%d/seats", pick(), s.show.ID), nil, nil)
					})
				}
				time.Sleep(time.Duration(20+rnd.IntN(40)) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	late.Wait()
}

// waitNoPending waits until no order of the stack is pending.
func (s *stack) waitNoPending(within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var n int
		if err := s.db.X().Get(&n, "SELECT COUNT(*) FROM order_info WHERE status = 0"); err != nil {
			s.t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d orders still pending %v after the load", n, within)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// newRand is a worker's own generator (math/rand/v2's top-level functions
// would do too, but a seed in the log makes a run easier to discuss).
func newRand(worker uint64) *mrand.Rand {
	return mrand.New(mrand.NewPCG(worker, uint64(time.Now().UnixNano())))
}

// exitCode is a process's exit status from Wait's error (-1: no status).
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
