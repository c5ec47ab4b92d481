package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The door (issue 32): o.Scans tickets (seats of paid orders, 4 to an
// order) scanned at 4 gates, spread over 2 instances of the server on the
// real stack (1 on the embedded one: its seat store and queue live in
// the process). o.DupPairs of the tickets are scanned twice at the same
// instant, at two gates on two instances: each pair must admit once and
// refuse the other scan naming the first one's gate and time. Every other
// scan must admit; the scan answer p99 is set beside the raw DB commit
// p99 of the same run (target ≤ 100 ms). The scans come at o.ScanRate a
// second, far above a door's (a 20,000-seat arena lets its audience in
// over half an hour: 11 a second), so the p99 is what a gate feels on a
// busy instance; at rate 0 the scanners go as fast as they can, and the
// figure is the queue of a saturated server, scans/s its capacity.

// checkinGates are the gates the scans come through.
var checkinGates = []string{"north", "south", "east", "west"}

// checkinP99Target is the bound on the scan answer p99.
const checkinP99Target = 100 * time.Millisecond

// checkinResult is the checkin scenario.
type checkinResult struct {
	Tickets   int        `json:"tickets"`
	Instances int        `json:"instances"`
	Place     loadResult `json:"place"`
	Pay       loadResult `json:"pay"`
	Scan      loadResult `json:"scan"` // a duplicate pair is one op: its slower scan
	// Pairs of simultaneous scans of one ticket, and those that admitted
	// once and named the admitting scan in the refusal.
	Pairs int `json:"duplicate_pairs"`
	// Offered is the scans a second offered (0: as fast as they went).
	Offered    float64 `json:"scans_offered_per_s"`
	PairsRight int     `json:"duplicate_pairs_right"`
	// AdmittedInDB counts the show's admitted tickets afterwards.
	AdmittedInDB int        `json:"admitted_in_db"`
	Commit       loadResult `json:"commit"` // the raw DB commit of the same run
}

// scanAnswer is what a scan got: admitted (and when), or a refusal.
type scanAnswer struct {
	Result string `json:"result"`
	At     string `json:"at"`
	gate   string
	err    *apiError
}

// scan sends one ticket's scan at gate.
func (c *apiClient) scan(ctx context.Context, orderNo, seat, gate string) (scanAnswer, error) {
	body, err := json.Marshal(map[string]any{"order_no": orderNo, "gate": gate, "seat_ids": []string{seat}})
	if err != nil {
		return scanAnswer{}, err
	}
	a := scanAnswer{gate: gate}
	err = c.do(ctx, http.MethodPost, "/api/v1/checkins", body, nil, &a)
	if ae := (*apiError)(nil); errors.As(err, &ae) && ae.Status == http.StatusConflict {
		a.err = ae
		return a, nil
	}
	return a, err
}

// runCheckin starts the stack (and on the real stack a second instance of
// the server on its database and stores), measures the raw DB commit and
// runs the scans.
func runCheckin(ctx context.Context, o Options, getenv func(string) string, p *progress) (res checkinResult, err error) {
	s, err := startStack(ctx, o, stackConfig{holdTTL: longHold}, getenv, p)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, s.close(context.WithoutCancel(ctx))) }()
	apis := []*apiClient{s.api}
	if o.Stack == StackReal {
		second, stop, err := s.startSecondInstance(ctx, o)
		if err != nil {
			return res, err
		}
		defer func() { err = errors.Join(err, stop()) }()
		apis = append(apis, second)
	}
	if res.Commit, _, err = measureCommit(ctx, o, s, p); err != nil {
		return res, fmt.Errorf("limit DB commit: %w", err)
	}
	scans, err := runCheckinScans(ctx, o, s, apis, p)
	scans.Commit = res.Commit
	return scans, err
}

// runCheckinScans sells o.Scans tickets and scans them through apis.
func runCheckinScans(ctx context.Context, o Options, s *stack, apis []*apiClient, p *progress) (checkinResult, error) {
	const perOrder = 4
	orders := (o.Scans + perOrder - 1) / perOrder
	res := checkinResult{Tickets: orders * perOrder, Instances: len(apis), Pairs: o.DupPairs, Offered: o.ScanRate}
	first := make([]int, orders+1)
	for i := range first {
		first[i] = i * perOrder
	}
	show, plan, placed, place, err := placeConsecutive(ctx, o, s, p, "checkin", first)
	if err != nil {
		return res, err
	}
	res.Place = place
	if err := res.Place.failure(); err != nil || res.Place.Errors > 0 {
		return res, fmt.Errorf("checkin: place: %v %s", err, res.Place.FirstErr)
	}
	run := randHex(4)
	res.Pay = runLoad(ctx, loadSpec{Label: fmt.Sprintf("checkin: pay %d orders", orders), Clients: o.Clients,
		Ops: int64(orders), Duration: o.MaxTime, MaxErrors: 1}, p,
		func(ctx context.Context, i int64) (string, error) {
			return s.api.pay(ctx, placed[i].no, fmt.Sprintf("TXN-%s-%d", run, i), placed[i].amount, time.Now())
		})
	if err := res.Pay.failure(); err != nil || res.Pay.Errors > 0 {
		return res, fmt.Errorf("checkin: pay: %v %s", err, res.Pay.FirstErr)
	}

	// Ticket t is seat t of the plan, of order t/perOrder. The first
	// DupPairs tickets of every (Tickets/DupPairs)-th are the pairs, as
	// ops 0..DupPairs-1; the others follow, one scan each.
	every := max(1, res.Tickets/max(1, o.DupPairs))
	var pairs, singles []int
	for t := range res.Tickets {
		if t%every == 0 && len(pairs) < o.DupPairs {
			pairs = append(pairs, t)
		} else {
			singles = append(singles, t)
		}
	}
	res.Pairs = len(pairs)
	var mu sync.Mutex
	var wrong []string
	ticket := func(t int) (string, string) { return placed[t/perOrder].no, plan[t].SeatID }
	var pace time.Duration
	if o.ScanRate > 0 {
		pace = time.Duration(float64(time.Second) / o.ScanRate)
	}
	res.Scan = runLoad(ctx, loadSpec{Label: fmt.Sprintf("checkin: scan %d tickets at %d gates on %d instances",
		res.Tickets, len(checkinGates), len(apis)), Clients: o.Clients, Ops: int64(len(pairs) + len(singles)),
		Duration: o.MaxTime, Interval: pace}, p,
		func(ctx context.Context, i int64) (string, error) {
			if int(i) >= len(pairs) {
				k := int(i) - len(pairs)
				no, seat := ticket(singles[k])
				a, err := apis[k%len(apis)].scan(ctx, no, seat, checkinGates[k%len(checkinGates)])
				if err == nil && a.err != nil {
					err = a.err
				}
				return a.Result, err
			}
			no, seat := ticket(pairs[i])
			var answers [2]scanAnswer
			var errs [2]error
			var wg sync.WaitGroup
			start := make(chan struct{})
			for j := range 2 {
				wg.Go(func() {
					<-start
					answers[j], errs[j] = apis[j%len(apis)].scan(ctx, no, seat, checkinGates[(int(i)+j)%len(checkinGates)])
				})
			}
			close(start)
			wg.Wait()
			if err := errors.Join(errs[:]...); err != nil {
				return "", err
			}
			if why := pairWrong(answers); why != "" {
				mu.Lock()
				wrong = append(wrong, fmt.Sprintf("%s %s: %s", no, seat, why))
				mu.Unlock()
				return "duplicate_wrong", nil
			}
			return "duplicate_pair", nil
		})
	res.PairsRight = int(res.Scan.Outcomes["duplicate_pair"])
	if err := s.db.X().GetContext(ctx, &res.AdmittedInDB, `SELECT COUNT(*) FROM order_seat WHERE show_id = ? AND checked_in_at <> 0`,
		show.ID); err != nil {
		return res, fmt.Errorf("checkin: count admitted tickets: %w", err)
	}
	if err := res.Scan.failure(); err != nil {
		return res, fmt.Errorf("checkin: scans: %w", err)
	}
	if len(wrong) > 0 || res.Scan.Errors > 0 || res.AdmittedInDB != res.Tickets {
		return res, fmt.Errorf("checkin: %d scans failed (first: %s), %d admitted of %d tickets, duplicate pairs wrong: %s",
			res.Scan.Errors, res.Scan.FirstErr, res.AdmittedInDB, res.Tickets, strings.Join(wrong, "; "))
	}
	return res, nil
}

// pairWrong says what is wrong with two simultaneous scans of one ticket:
// one must admit and the other be refused as already checked in, naming
// the admitting scan's gate and time.
func pairWrong(a [2]scanAnswer) string {
	for j := range 2 {
		won, lost := a[j], a[1-j]
		if won.Result != "admitted" || lost.err == nil {
			continue
		}
		f := lost.err.Detail.First
		if lost.err.Code != "already_checked_in" {
			return "the second scan got " + lost.err.Code
		}
		at, err := time.Parse(time.RFC3339Nano, won.At)
		if f == nil || f.Gate != won.gate || err != nil || !f.At.Equal(at) {
			return fmt.Sprintf("the refusal names %+v, the admission was at %s gate %s", f, won.At, won.gate)
		}
		return ""
	}
	return fmt.Sprintf("answers %q and %q: want one admitted and one refused", a[0].Result, a[1].Result)
}

// startSecondInstance starts another `seatflow serve` on the stack's
// database and stores (a port of its own), as a second host behind the
// same load balancer would be; stop stops it.
func (s *stack) startSecondInstance(ctx context.Context, o Options) (*apiClient, func() error, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	env := make([]string, 0, len(s.env))
	var token, secret string
	for _, kv := range s.env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "SEATFLOW_ADDR":
			kv = "SEATFLOW_ADDR=" + addr
		case "SEATFLOW_API_TOKEN":
			token = v
		case "SEATFLOW_PAYMENT_SECRET":
			secret = v
		}
		env = append(env, kv)
	}
	c, err := startChild(filepath.Join(s.dir, "server-second.log"), env, s.cfg.noFile)
	if err != nil {
		return nil, nil, err
	}
	api := newAPIClient("http://"+addr, token, secret, o.Clients)
	stop := func() error {
		api.close()
		if err := c.stop(); err != nil {
			s.failed = true
			return fmt.Errorf("second instance: %w (log: %s)", err, c.logPath)
		}
		return nil
	}
	if err := waitReady(ctx, api, c); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("second instance: %w", err), stop())
	}
	return api, stop, nil
}

// checkinRows turns the checkin scenario into table rows.
func checkinRows(stack string, res checkinResult) []Row {
	row := func(metric string, v float64, unit string) Row {
		return Row{Scenario: ScenarioCheckin, Stack: stack, Metric: metric, Value: v, Unit: unit}
	}
	c := res.Commit
	return []Row{
		row("scans offered/s (0: as fast as they go)", res.Offered, "/s"),
		row("scans/s", res.Scan.Rate, "/s").vs("raw DB commit/s", c.Rate),
		row("scan answer p50", ms(res.Scan.Latency.P50), "ms").vs("DB commit p50", ms(c.Latency.P50)),
		row("scan answer p99", ms(res.Scan.Latency.P99), "ms").vs("DB commit p99", ms(c.Latency.P99)).
			target("≤ 100 ms", res.Scan.Latency.Count > 0 && res.Scan.Latency.P99 <= checkinP99Target),
		row("tickets admitted", float64(res.AdmittedInDB), "").vs("tickets scanned", float64(res.Tickets)).
			target("all", res.AdmittedInDB == res.Tickets),
		row("duplicate pairs: one admitted, the other refused naming it", float64(res.PairsRight), "").
			vs("pairs at the same instant", float64(res.Pairs)).target("all", res.PairsRight == res.Pairs),
		row("instances", float64(res.Instances), ""),
	}
}
