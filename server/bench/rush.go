package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The rush (issue 29): every buyer of an on-sale starts in the same
// instant, each naming its own address (X-SeatFlow-Client-IP, the bench's
// key holds the client_ip right), reading the show's availability beside
// the plan the run read once, placing 1 to 4 seats it saw free, retrying on 409 with others it saw free and waiting out
// Retry-After on 503 and 429, as a storefront does, until the show is sold
// out. Goodput is compared with a smaller rush of the same run.

// Queue modes of the rush.
const (
	QueueOff  = "off"
	QueueOn   = "on"
	QueueBoth = "both"
)

// Bounds of the rush's shape.
const (
	rushRowSeats = 50        // seats per row of a rush show's grid
	maxBuyers    = 1_000_000 // addresses are drawn from 10.0.0.0/8, one per buyer
	// fdHeadroom is the bench's own descriptors besides the buyers'
	// connections: setup, the database, logs, the pipes to the prober.
	fdHeadroom = 256
)

// Buyer behaviour.
const (
	// maxFailures ends a buyer after this many failed requests in a row
	// (no answer, or a 5xx other than a shed 503).
	maxFailures = 5
	failureWait = time.Second // before retrying a failed request
	// noRetryAfter is the wait after a 503 or 429 without Retry-After.
	noRetryAfter = time.Second
	probeEvery   = 100 * time.Millisecond
	probeTimeout = 10 * time.Second
)

// shedKey counts the 503s of overload protection apart from other 503s.
const (
	shedKey     = "503 overloaded"
	noAnswerKey = "no answer"
	// resentKey counts requests resent because the server had closed
	// their kept-alive connection as idle (closedUnread).
	resentKey = "resent: connection closed idle"
)

func (o Options) validateRush() error {
	for _, c := range []struct {
		name string
		v    int
	}{{"buyers", o.Buyers}, {"baseline-buyers", o.BaselineBuyers}, {"seats", o.RushSeats}, {"joins", o.Joins}} {
		if c.v <= 0 {
			return fmt.Errorf("bench: --%s %d: must be positive", c.name, c.v)
		}
	}
	if o.Buyers > maxBuyers || o.BaselineBuyers > maxBuyers {
		return fmt.Errorf("bench: --buyers and --baseline-buyers: at most %d", maxBuyers)
	}
	if o.RushSeats > rushRowSeats && o.RushSeats%rushRowSeats != 0 {
		return fmt.Errorf("bench: --seats %d: want up to %d or a multiple of it (rows of %d)", o.RushSeats, rushRowSeats, rushRowSeats)
	}
	if o.Conns < 0 {
		return fmt.Errorf("bench: --conns %d: must not be negative", o.Conns)
	}
	if o.ServerNoFile < 0 || o.ServerNoFile > 0 && o.ServerNoFile < minServerNoFile {
		return fmt.Errorf("bench: --server-nofile %d: want 0 or at least %d", o.ServerNoFile, minServerNoFile)
	}
	if lim := fdLimit(); lim > 0 && rushConns(o.Conns, max(o.Buyers, o.BaselineBuyers)) > lim-fdHeadroom {
		return fmt.Errorf("bench: --conns: %d connections do not fit the bench's %d descriptors (ulimit -n) with %d to spare; "+
			"run several benches with fewer --buyers against one server instead (BENCHMARKS.md, rush)",
			rushConns(o.Conns, max(o.Buyers, o.BaselineBuyers)), lim, fdHeadroom)
	}
	switch o.Queue {
	case QueueOff, QueueOn, QueueBoth:
	default:
		return fmt.Errorf("bench: --queue %q: want off, on or both", o.Queue)
	}
	return validBuyersMode(o.BuyersMode)
}

// rushConns is the buyers' connections: conns, or one per buyer.
// minServerNoFile leaves the server room for its stores beside a few
// connections; below it the server refuses to start (connCap).
const minServerNoFile = 512

func rushConns(conns, buyers int) int {
	if conns == 0 || conns > buyers {
		return buyers
	}
	return conns
}

// rushSpec is one rush: buyers against a fresh show.
type rushSpec struct {
	label  string
	buyers int
	conns  int
	seats  int
	queue  bool
	best   bool  // the buyers ask for the best available (rushbest.go)
	users  int64 // the rush's buyers are users (and addresses) users+1 ...
	until  time.Duration
}

// rushResult is what one rush measured.
type rushResult struct {
	Label   string        `json:"label"`
	Buyers  int           `json:"buyers"`
	Conns   int           `json:"conns"`
	Queue   bool          `json:"queue"`
	Best    bool          `json:"best_available"`
	Show    int64         `json:"show_id"`
	Seats   int           `json:"seats"`
	Holds   int64         `json:"holds"`       // 201 answers of POST /orders
	SellOut time.Duration `json:"sell_out_ns"` // from the start to the last hold
	Goodput float64       `json:"holds_per_s"` // Holds / SellOut
	// Latencies: placements answered 201 or 409 (decided), 503 overloaded
	// answers on any route (shed), availability reads answered 200.
	Decided Summary `json:"decided"`
	Shed    Summary `json:"shed"`
	Reads   Summary `json:"map_reads"`
	// With the queue: joins and polls answered 201/200, placements carrying
	// an admission answered 201 or 409.
	Joins    Summary `json:"joins,omitzero"`
	Polls    Summary `json:"polls,omitzero"`
	Admitted Summary `json:"admitted_placements,omitzero"`
	// Statuses counts every answer by status, shed 503s apart, and
	// requests that got none.
	Statuses     map[string]int64 `json:"statuses"`
	Other5xx     int64            `json:"other_5xx"`
	SoldOut409   int64            `json:"sold_out_409s"`  // best available: 409s saying no seat is left
	GaveUp       int64            `json:"buyers_gave_up"` // after maxFailures, or an unexpected 4xx
	FirstFailure string           `json:"first_failure,omitempty"`
	// FirstNoAnswer is what the first request with no answer ran into.
	FirstNoAnswer string      `json:"first_no_answer,omitempty"`
	Ready         probeResult `json:"readyz"`
	// Lag is how late the bench's own timer fired, every lagEvery over the
	// rush: the load generator shares the CPUs, and answers it was too
	// busy to read in time count in every latency above.
	Lag Summary `json:"bench_lag"`
	// ListenOverflows is how many connections the kernel refused over the
	// rush for a full listen queue (machine-wide; -1: not readable).
	ListenOverflows int64     `json:"listen_overflows"`
	Mem             memWindow `json:"server_memory"`
	Check           seatCheck `json:"check"`
	Fair            *fairness `json:"fairness,omitempty"`
}

// tally is one buyer's share of a rush, merged into the result at its end.
type tally struct {
	decided, shed, reads, joins, polls, admitted []time.Duration
	status                                       map[string]int64
	holds                                        int64
	soldOut409                                   int64 // best available: 409s saying no seat is left
	lastHold                                     time.Duration
	failure                                      error
	gaveUp                                       bool
	noAnswer                                     error // the first request with no answer
	// Queue: when the join was sent and answered (since the start),
	// whether the buyer arrived after opening, its last position seen.
	joinSent, joinDone time.Duration
	late               bool
	position           int64
}

// rushRun is a rush in progress, shared by its buyers.
type rushRun struct {
	spec    rushSpec
	api     *apiClient
	show    int64
	start   time.Time
	soldOut atomic.Bool // a buyer saw no free seat: the storefront shows sold out
	plan    []string    // every seat id of the show, read once (a storefront's CDN copy)

	mu      sync.Mutex
	tallies []*tally
}

// buyer is one storefront visitor.
type buyer struct {
	run    *rushRun
	user   int64
	header http.Header
	lateAt time.Time // queue: arrives then, after opening (zero: at once)
	t      *tally
}

// buyerAddr is buyer n's own address in 10.0.0.0/8.
func buyerAddr(n int64) string {
	return fmt.Sprintf("10.%d.%d.%d", n>>16&0xff, n>>8&0xff, n&0xff)
}

// runRush creates a show through the API, starts every buyer in the same
// instant and returns when the show is sold out (or spec.until passed),
// then checks the seats. mem follows the server's memory (nil: not known).
func runRush(ctx context.Context, s *stack, spec rushSpec, mem *procSampler, p *progress) (rushResult, error) {
	res := rushResult{Label: spec.label, Buyers: spec.buyers, Conns: spec.conns, Queue: spec.queue, Best: spec.best, Seats: spec.seats}
	show, err := s.newShowAPI(ctx, spec.seats)
	if err != nil {
		return res, err
	}
	res.Show = show
	var opensAt time.Time
	late := 0
	if spec.queue {
		opensAt, late = time.Now().Add(openAfter(spec.buyers)), lateBuyers(spec.buyers)
		if err := enableQueue(ctx, s.api, show, opensAt); err != nil {
			return res, err
		}
	}
	api := newAPIClient(s.api.base, s.api.token, s.api.secret, spec.conns)
	api.hc.Transport.(*http.Transport).MaxConnsPerHost = spec.conns
	defer api.close()
	states, err := s.api.seatStates(ctx, show)
	if err != nil {
		return res, fmt.Errorf("read the plan of show %d: %w", show, err)
	}
	r := &rushRun{spec: spec, api: api, show: show, plan: slices.Sorted(maps.Keys(states))}
	if mem != nil {
		mem.reset()
	}
	probe, err := startProbe(ctx, s.opsBase+"/readyz")
	if err != nil {
		return res, err
	}
	lag := startLag(ctx)
	overflowsBefore, overflowErr := listenOverflows(procNetstat)
	rctx, cancel := context.WithTimeout(ctx, spec.until)
	defer cancel()
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range spec.buyers {
		n := spec.users + int64(i) + 1
		b := &buyer{run: r, user: n, header: http.Header{clientIPHeader: {buyerAddr(n)}},
			t: &tally{status: map[string]int64{}}}
		if k := i - (spec.buyers - late); k >= 0 {
			b.lateAt = opensAt.Add(probeEvery + time.Duration(k)*lateGap)
		}
		wg.Go(func() {
			<-gate
			b.buy(rctx)
			r.mu.Lock()
			r.tallies = append(r.tallies, b.t)
			r.mu.Unlock()
		})
	}
	t := p.track(spec.label, int64(spec.buyers), func() (int64, string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return int64(len(r.tallies)), "buyers done"
	})
	r.start = time.Now()
	close(gate)
	wg.Wait()
	t.done()
	timedOut := rctx.Err() != nil
	if res.Ready, err = probe(); err != nil {
		return res, err
	}
	res.Lag = lag()
	if after, err := listenOverflows(procNetstat); err == nil && overflowErr == nil {
		res.ListenOverflows = after - overflowsBefore
	} else {
		res.ListenOverflows = -1 // not readable here (not Linux): reported absent
	}
	if mem != nil {
		if res.Mem, err = mem.window(); err != nil {
			return res, err
		}
	}
	res.merge(r.tallies)
	if spec.queue {
		res.Fair = newFairness(r.tallies, opensAt.Sub(r.start))
	}
	p.logf("checking seats of show %d", show)
	if res.Check, err = checkSeats(ctx, s, []int64{show}); err != nil {
		return res, err
	}
	switch {
	case timedOut:
		return res, fmt.Errorf("%s: not sold out after %v: %d of %d seats taken", spec.label, spec.until, res.Check.Taken, spec.seats)
	case res.Check.Taken != spec.seats && res.Holds < int64(spec.buyers):
		// Every buyer leaving with a hold before the last seats went is
		// demand met, not a failure: a 409 is likelier for 4 seats than
		// for 1, so holds come out near 2 seats, and 1,000 buyers may
		// leave a few of 2,000 seats.
		return res, fmt.Errorf("%s: buyers stopped with %d of %d seats taken (answers %v; first failure: %s)", spec.label, res.Check.Taken, spec.seats, res.Statuses, res.FirstFailure)
	case !res.Check.ok():
		return res, fmt.Errorf("%s: seat check failed: %v", spec.label, res.Check.Examples)
	}
	return res, nil
}

// merge adds up the buyers' tallies.
func (res *rushResult) merge(tallies []*tally) {
	var decided, shed, reads, joins, polls, admitted []time.Duration
	res.Statuses = map[string]int64{}
	for _, t := range tallies {
		decided, shed, reads = append(decided, t.decided...), append(shed, t.shed...), append(reads, t.reads...)
		joins, polls, admitted = append(joins, t.joins...), append(polls, t.polls...), append(admitted, t.admitted...)
		for k, v := range t.status {
			res.Statuses[k] += v
		}
		res.Holds += t.holds
		res.SoldOut409 += t.soldOut409
		res.SellOut = max(res.SellOut, t.lastHold)
		if t.gaveUp {
			res.GaveUp++
		}
		if t.noAnswer != nil && res.FirstNoAnswer == "" {
			res.FirstNoAnswer = t.noAnswer.Error()
		}
		if t.failure != nil && res.FirstFailure == "" {
			res.FirstFailure = t.failure.Error()
		}
	}
	for k, v := range res.Statuses {
		if code, err := strconv.Atoi(k); err == nil && code >= 500 {
			res.Other5xx += v
		}
	}
	if res.SellOut > 0 {
		res.Goodput = float64(res.Holds) / res.SellOut.Seconds()
	}
	res.Decided, res.Shed, res.Reads = summarize(decided), summarize(shed), summarize(reads)
	res.Joins, res.Polls, res.Admitted = summarize(joins), summarize(polls), summarize(admitted)
}

// buy is one buyer's visit: through the queue when the show has one, then
// placements until a hold, sold out or failure. Like a storefront page, it
// reads the availability once and picks from the seats it saw free, less
// those a 409 named taken; it reads it again only after rereadAfter 409s
// in a row or when none it saw is left (BENCHMARKS.md, rush).
func (b *buyer) buy(ctx context.Context) {
	var admission string
	if b.run.spec.queue {
		var ok bool
		if admission, ok = b.waitAdmission(ctx); !ok {
			return
		}
	}
	if b.run.spec.best {
		b.buyBest(ctx, admission)
		return
	}
	var seen *seatPool
	conflicts := 0
	for ctx.Err() == nil && !b.run.soldOut.Load() {
		if seen == nil || seen.size() == 0 || conflicts >= rereadAfter {
			var ok bool
			if seen, ok = b.readMap(ctx); !ok {
				return
			}
			conflicts = 0
			if seen.size() == 0 {
				b.run.soldOut.Store(true)
				return
			}
		}
		pick := seen.pick(1 + rand.IntN(4))
		held, err := b.place(ctx, orderBody(b.user, b.run.show, pick, admission), admission)
		if held || err == nil {
			return // a hold, or the visit ended
		}
		conflicts++
		seen.remove(takenSeats(err, pick))
	}
}

// place sends one placement and tallies its answer. held: a 201. A 409
// comes back as its error for the caller to read; any other answer ends
// the visit (b.fail) and comes back as held false with a nil error.
func (b *buyer) place(ctx context.Context, body []byte, admission string) (held bool, conflict error) {
	status, d, err := b.send(ctx, http.MethodPost, "/api/v1/orders", body, nil)
	if status != http.StatusCreated && status != http.StatusConflict {
		b.fail(err)
		return false, nil
	}
	b.t.decided = append(b.t.decided, d)
	if admission != "" {
		b.t.admitted = append(b.t.admitted, d)
	}
	if status == http.StatusCreated {
		b.t.holds++
		b.t.lastHold = time.Since(b.run.start)
		return true, nil
	}
	return false, err
}

// rereadAfter is how many 409s in a row send a buyer back to the availability:
// a storefront refreshes its page now and then, not after every refusal.
const rereadAfter = 3

// readMap refreshes what the buyer sees free: the show's availability
// (its taken seats) against the plan the run read once, as a storefront
// holds the plan (from its CDN: it changes only before the first order)
// and refreshes only the availability (ok false: the visit ended).
func (b *buyer) readMap(ctx context.Context) (*seatPool, bool) {
	var raw []byte
	status, d, err := b.send(ctx, http.MethodGet, availabilityPath(b.run.show), nil, &raw)
	if status != http.StatusOK {
		b.fail(err)
		return nil, false
	}
	taken, err := scanTaken(raw)
	if err != nil {
		b.t.status[noAnswerKey]++ // a body that is not an availability is no answer
		b.fail(err)
		return nil, false
	}
	b.t.reads = append(b.t.reads, d)
	return newSeatPool(freeSeats(b.run.plan, taken)), true
}

// scanTaken reads the "taken" list of an availability answer. The bench
// shares the server's CPUs, and decoding 10,000 answers of up to 2,000
// ids each with encoding/json was a fifth of the machine's CPU in a rush:
// a scan of the plain ids costs a tenth of it. An id with an escape falls
// back to encoding/json.
func scanTaken(raw []byte) ([]string, error) {
	const field = `"taken":[`
	i := bytes.Index(raw, []byte(field))
	if i < 0 || bytes.IndexByte(raw, '\\') >= 0 {
		var av availability
		if err := json.Unmarshal(raw, &av); err != nil {
			return nil, fmt.Errorf("availability %q: %w", raw, err)
		}
		return av.Taken, nil
	}
	rest := raw[i+len(field):]
	var taken []string
	if len(rest) > 0 && rest[0] == ']' {
		return taken, nil
	}
	for {
		if len(rest) == 0 || rest[0] != '"' {
			return nil, fmt.Errorf("availability: want an id at %.20q in %q", rest, raw)
		}
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 {
			return nil, fmt.Errorf("availability: unterminated id in %q", raw)
		}
		taken = append(taken, string(rest[1:1+end]))
		rest = rest[2+end:]
		switch {
		case len(rest) > 0 && rest[0] == ']':
			return taken, nil
		case len(rest) > 0 && rest[0] == ',':
			rest = rest[1:]
		default:
			return nil, fmt.Errorf("availability: want , or ] at %.20q in %q", rest, raw)
		}
	}
}

// freeSeats is the plan (sorted) less the taken seats, in one merge when
// taken is sorted too, as the server sends it.
func freeSeats(plan, taken []string) []string {
	if !slices.IsSorted(taken) {
		taken = slices.Sorted(slices.Values(taken))
	}
	free := make([]string, 0, max(len(plan)-len(taken), 0))
	j := 0
	for _, id := range plan {
		for j < len(taken) && taken[j] < id {
			j++
		}
		if j < len(taken) && taken[j] == id {
			continue
		}
		free = append(free, id)
	}
	return free
}

// availability is the part of GET /api/v1/shows/{id}/availability a buyer reads.
type availability struct {
	Taken []string `json:"taken"`
}

func availabilityPath(showID int64) string {
	return fmt.Sprintf("/api/v1/shows/%d/availability", showID)
}

// takenSeats is what a 409 says is taken: the seats it names, or all those
// asked for when it names none.
func takenSeats(err error, asked []string) []string {
	if ae, ok := isStatus(err, http.StatusConflict); ok && len(ae.Seats) > 0 {
		return ae.Seats
	}
	return asked
}

// fail ends the buyer's visit on an answer it cannot go on from (none
// when the rush's own bound ended it).
func (b *buyer) fail(err error) {
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		b.t.failure, b.t.gaveUp = err, true
	}
}

// send makes one request again until it gets an answer to go on with:
// after a 503 or 429 once Retry-After has passed, after no answer or
// another 5xx once failureWait has, at most maxFailures times in a row.
// Every attempt is counted; the status (0: none) and time of the last are
// returned.
func (b *buyer) send(ctx context.Context, method, path string, body []byte, out any) (int, time.Duration, error) {
	failures, resends := 0, 0
	for {
		var reused bool
		tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
		t0 := time.Now()
		status, err := b.run.api.doStatus(tctx, method, path, body, b.header, out)
		d := time.Since(t0)
		if err != nil && status/100 == 2 {
			// A body cut short (or not decoded) is no answer: an empty seat
			// map read as one would end the rush as sold out.
			status = 0
		}
		if ctx.Err() != nil {
			return 0, d, ctx.Err()
		}
		if status == 0 && reused && closedUnread(err) && resends < maxFailures {
			resends++
			// The server closed the kept-alive connection as idle (its
			// connection cap) as this request went out on it: it was never
			// read. Go resends only idempotent requests then; a browser
			// resends any request on a reused connection closed with no
			// answer, and so does the buyer, counted apart.
			b.t.status[resentKey]++
			continue
		}
		key := statusKey(status, err)
		b.t.status[key]++
		if key == noAnswerKey && b.t.noAnswer == nil {
			b.t.noAnswer = err
		}
		var wait time.Duration
		switch {
		case key == shedKey:
			b.t.shed = append(b.t.shed, d)
			wait = retryWait(err)
		case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
			wait = retryWait(err)
		case status == 0 || status >= 500:
			if failures++; failures >= maxFailures {
				return status, d, err
			}
			wait = failureWait
		default:
			return status, d, err
		}
		select {
		case <-ctx.Done():
			return 0, d, ctx.Err()
		case <-time.After(wait):
		}
		if b.run.soldOut.Load() {
			return 0, d, nil // the storefront shows sold out: nothing to retry for
		}
	}
}

// closedUnread says whether err is a connection closed before any answer:
// net/http's "server closed idle connection", or an end of file or reset
// after the request was written. On a reused connection that is the
// server having closed it as idle, the request unread.
func closedUnread(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "http: server closed idle connection") ||
		errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET))
}

// statusKey names an answer in the counts.
func statusKey(status int, err error) string {
	if status == 0 {
		return noAnswerKey
	}
	if ae, ok := isStatus(err, http.StatusServiceUnavailable); ok && ae.Code == "overloaded" {
		return shedKey
	}
	return strconv.Itoa(status)
}

func retryWait(err error) time.Duration {
	var ae *apiError
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		return ae.RetryAfter
	}
	return noRetryAfter
}

// probeResult is /readyz asked every probeEvery during a rush, on the
// server's operations listener from a process of its own (prober.go).
type probeResult struct {
	URL          string        `json:"url"`
	Probes       int           `json:"probes"`
	Worst        time.Duration `json:"worst_ns"` // failed probes count with their time too
	Latency      Summary       `json:"latency"`
	Failed       int           `json:"failed"`
	FirstFailure string        `json:"first_failure,omitempty"`
}

// lagEvery is the period of the bench's own lag timer.
const lagEvery = 10 * time.Millisecond

// startLag measures how late a timer of lagEvery fires in the bench
// process until the returned function is called; that returns the lags.
func startLag(ctx context.Context) func() Summary {
	ctx, cancel := context.WithCancel(ctx)
	var samples []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			t0 := time.Now()
			select {
			case <-ctx.Done():
				return
			case <-time.After(lagEvery):
				samples = append(samples, max(0, time.Since(t0)-lagEvery))
			}
		}
	}()
	return func() Summary {
		cancel()
		<-done
		return summarize(samples)
	}
}
