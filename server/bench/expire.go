package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"seatflow/core"
)

// expirePhase is one set of holds left to expire.
type expirePhase struct {
	Name     string         `json:"name"` // burst or spread
	Show     int64          `json:"show_id"`
	Place    loadResult     `json:"place"`
	Orders   int            `json:"orders"`
	Spread   time.Duration  `json:"expire_at_spread_ns"` // last expire_at − first
	Reasons  map[string]int `json:"cancel_reasons"`      // timeout, reconcile, ...; "pending" if never ended
	Lateness Summary        `json:"lateness"`            // closed_at − expire_at of every cancel
	Delivery Summary        `json:"hop_delivery"`        // each hop: handled − due (see hopStats)
	Drain    time.Duration  `json:"drain_ns"`            // last cancel − last expire_at
	// ExpiryRate is how fast holds came due (orders over the expire_at
	// spread); CancelRate how fast they were cancelled (cancels from the
	// first expiry to the last cancel). Below 1, their ratio is a backlog
	// that every later cancel waits behind.
	ExpiryRate float64       `json:"expiries_per_s"`
	CancelRate float64       `json:"cancels_per_s"`
	Hops       map[int]int   `json:"hops"` // timeout messages sent per order → orders
	HopsMean   float64       `json:"hops_mean"`
	HopsMax    int           `json:"hops_max"`
	HopsIdeal  int           `json:"hops_ideal"` // the chain with every hop on time
	Wait       time.Duration `json:"wait_ns"`
	Backlog    *backlogDrain `json:"backlog,omitempty"` // the backlog phase only
}

// expireResult is the expire scenario for one delay mode.
type expireResult struct {
	Mode      core.DelayMode `json:"mode"`
	Raw       queueLateness  `json:"raw_queue"`
	Commit    loadResult     `json:"db_commit"` // the raw limit the backlog's drain is set beside
	CommitCPU cpuUsage       `json:"db_commit_cpu"`
	Phases    []expirePhase  `json:"phases"`
}

// runExpire measures one delay mode on a server of its own (the hold TTL
// and the delay mode are server settings): the raw queue and DB commit
// first, then a burst of o.Orders holds placed as fast as possible, then
// o.Orders paced evenly over o.Spread, then o.Orders left to come due while
// the server is down (backlogOnce); each phase waits until every hold has
// ended.
func runExpire(ctx context.Context, o Options, mode core.DelayMode, getenv func(string) string, p *progress) (_ expireResult, err error) {
	res := expireResult{Mode: mode}
	s, err := startStack(ctx, o, stackConfig{mode: mode, holdTTL: o.HoldTTL}, getenv, p)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, s.close(context.WithoutCancel(ctx))) }()
	if res.Raw, err = measureQueueLateness(ctx, o, s, mode, o.Orders, p); err != nil {
		return res, err
	}
	if res.Commit, res.CommitCPU, err = measureCommit(ctx, o, s, p); err != nil {
		return res, fmt.Errorf("limit DB commit: %w", err)
	}
	policy := serverPolicy(o.Stack, mode)
	for _, name := range []string{"burst", "spread", "backlog"} {
		var ph expirePhase
		if name == "backlog" {
			ph, err = backlogOnce(ctx, o, s, policy, p)
		} else {
			ph, err = expireOnce(ctx, o, s, name, policy, p)
		}
		res.Phases = append(res.Phases, ph)
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// serverPolicy is the delay policy the server runs with for mode ("" is
// its default: exact timers on the DB queue, levels on RocketMQ).
func serverPolicy(stack string, mode core.DelayMode) core.DelayPolicy {
	pol := core.DefaultDelayPolicy()
	switch {
	case mode != "":
		pol.Mode = mode
	case stack == StackEmbedded:
		pol.Mode = core.DelayTimer
	}
	return pol
}

func expireOnce(ctx context.Context, o Options, s *stack, name string, policy core.DelayPolicy, p *progress) (expirePhase, error) {
	ph, err := placeHolds(ctx, o, s, name, policy, p)
	if err != nil {
		return ph, err
	}
	return ph, waitEnded(ctx, o, s, &ph, p)
}

// placeHolds places o.Orders one-seat holds in a show of their own: as fast
// as the clients go, or paced over o.Spread for the spread phase.
func placeHolds(ctx context.Context, o Options, s *stack, name string, policy core.DelayPolicy, p *progress) (expirePhase, error) {
	ph := expirePhase{Name: name, HopsIdeal: idealHops(policy, o.HoldTTL)}
	cols := min(o.Orders, 100)
	show, plan, err := s.newShow(ctx, (o.Orders+cols-1)/cols, cols)
	if err != nil {
		return ph, err
	}
	ph.Show = show.ID
	spec := loadSpec{Label: fmt.Sprintf("expire %s: place %d holds", name, o.Orders), Clients: o.Clients,
		Ops: int64(o.Orders), Duration: o.MaxTime}
	if name == "spread" {
		spec.Interval = o.Spread / time.Duration(o.Orders)
	}
	ph.Place = runLoad(ctx, spec, p, func(ctx context.Context, i int64) (string, error) {
		_, err := s.api.place(ctx, i+1, show.ID, []string{plan[i].SeatID})
		return "ok", err
	})
	if err := ph.Place.failure(); err != nil {
		return ph, fmt.Errorf("expire %s: place: %w", name, err)
	}
	return ph, nil
}

// waitEnded waits, bounded by the TTL and o.MaxTime, until every hold of
// ph's show has ended, then reads the phase's outcome.
func waitEnded(ctx context.Context, o Options, s *stack, ph *expirePhase, p *progress) error {
	start := time.Now()
	var pending int64
	count := func() error {
		return s.db.X().GetContext(ctx, &pending, `SELECT COUNT(*) FROM order_info WHERE show_id = ? AND status = ?`,
			ph.Show, int(core.StatusPending))
	}
	if err := count(); err != nil {
		return fmt.Errorf("expire %s: count pending: %w", ph.Name, err)
	}
	placed := pending
	t := p.track(fmt.Sprintf("expire %s: holds ended", ph.Name), placed, func() (int64, string) { return placed - pending, "" })
	deadline := time.Now().Add(o.HoldTTL + o.MaxTime)
	for pending > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(500 * time.Millisecond)
		if err := count(); err != nil {
			t.done()
			return fmt.Errorf("expire %s: count pending: %w", ph.Name, err)
		}
	}
	t.done()
	ph.Wait = time.Since(start)
	if err := collectExpiry(ctx, s, ph); err != nil {
		return err
	}
	if pending > 0 {
		return fmt.Errorf("expire %s: %d holds still pending %v after the last was placed", ph.Name, pending, ph.Wait)
	}
	return nil
}

// holdEnds gathers how a phase's holds ended, from their order rows (times
// in epoch ms): why each ended ("pending": not yet), each cancel's
// lateness, and the window of the expiries and of the endings.
type holdEnds struct {
	reasons                   map[string]int
	late                      []time.Duration
	holds                     int
	minExp, maxExp, maxClosed int64
}

func newHoldEnds() *holdEnds { return &holdEnds{reasons: map[string]int{}} }

func (h *holdEnds) add(expireAt, closedAt int64, status int, reason string) {
	if h.holds == 0 || expireAt < h.minExp {
		h.minExp = expireAt
	}
	h.holds++
	h.maxExp = max(h.maxExp, expireAt)
	if core.OrderStatus(status) == core.StatusPending {
		h.reasons["pending"]++
		return
	}
	h.reasons[reason]++
	h.maxClosed = max(h.maxClosed, closedAt)
	// Every cancel counts, also the reconcile sweep's: it is the
	// backstop when a timeout message comes late or never.
	h.late = append(h.late, time.Duration(closedAt-expireAt)*time.Millisecond)
}

// cancelRate is the endings a second from the first expiry to the last ending.
func (h *holdEnds) cancelRate() float64 {
	if h.maxClosed <= h.minExp {
		return 0
	}
	return float64(len(h.late)) / (float64(h.maxClosed-h.minExp) / 1e3)
}

// expiryRate is the holds coming due a second.
func (h *holdEnds) expiryRate() float64 {
	if h.maxExp <= h.minExp {
		return 0
	}
	return float64(h.holds) / (float64(h.maxExp-h.minExp) / 1e3)
}

// collectExpiry reads the phase's outcome from the database: the timeline
// the server recorded, not what the bench saw.
func collectExpiry(ctx context.Context, s *stack, ph *expirePhase) error {
	var rows []struct {
		ExpireAt int64  `db:"expire_at"`
		ClosedAt int64  `db:"closed_at"`
		Reason   string `db:"cancel_reason"`
		Status   int    `db:"status"`
	}
	x := s.db.X()
	if err := x.SelectContext(ctx, &rows, `SELECT expire_at, closed_at, cancel_reason, status FROM order_info WHERE show_id = ?`, ph.Show); err != nil {
		return fmt.Errorf("expire %s: read orders: %w", ph.Name, err)
	}
	ph.Orders = len(rows)
	ends := newHoldEnds()
	for _, r := range rows {
		ends.add(r.ExpireAt, r.ClosedAt, r.Status, r.Reason)
	}
	ph.Reasons = ends.reasons
	ph.Spread = time.Duration(ends.maxExp-ends.minExp) * time.Millisecond
	ph.CancelRate, ph.ExpiryRate = ends.cancelRate(), ends.expiryRate()
	ph.Drain = time.Duration(ends.maxClosed-ends.maxExp) * time.Millisecond
	ph.Lateness = summarize(ends.late)

	var evs []hopEvent
	if err := x.SelectContext(ctx, &evs, `SELECT e.order_no, e.at, e.kind, e.detail FROM order_event e
 JOIN order_info o ON o.order_no = e.order_no
 WHERE o.show_id = ? AND e.kind IN (?, ?)`, ph.Show, core.EventTimeoutScheduled, core.EventTimeoutFired); err != nil {
		return fmt.Errorf("expire %s: read timeout events: %w", ph.Name, err)
	}
	hops, delivery, err := hopStats(evs)
	if err != nil {
		return fmt.Errorf("expire %s: %w", ph.Name, err)
	}
	ph.Delivery = summarize(delivery)
	ph.Hops = map[int]int{}
	total := 0
	for _, h := range hops {
		ph.Hops[h]++
		total += h
		ph.HopsMax = max(ph.HopsMax, h)
	}
	if len(hops) > 0 {
		ph.HopsMean = float64(total) / float64(len(hops))
	}
	return nil
}

// hopEvent is a timeout_scheduled or timeout_fired row of order_event.
type hopEvent struct {
	OrderNo string `db:"order_no"`
	At      int64  `db:"at"` // unix ms
	Kind    string `db:"kind"`
	Detail  string `db:"detail"` // JSON: hop, and due_at on timeout_scheduled
}

// hopStats returns, from an order's timeline, the number of timeout
// messages sent per order, and each hop's delivery lateness: when the first
// delivery of the hop was handled minus the due time it was sent with. It is
// the queue's lateness as the engine sees it, to set beside the raw queue's.
func hopStats(evs []hopEvent) (map[string]int, []time.Duration, error) {
	type key struct {
		order string
		hop   int
	}
	due := map[key]time.Time{}
	fired := map[key]int64{}
	hops := map[string]int{}
	for _, ev := range evs {
		var d struct {
			Hop   int    `json:"hop"`
			DueAt string `json:"due_at"`
		}
		if err := json.Unmarshal([]byte(ev.Detail), &d); err != nil {
			return nil, nil, fmt.Errorf("%s event of %s: %w", ev.Kind, ev.OrderNo, err)
		}
		k := key{ev.OrderNo, d.Hop}
		switch ev.Kind {
		case core.EventTimeoutScheduled:
			t, err := time.Parse(time.RFC3339Nano, d.DueAt)
			if err != nil {
				return nil, nil, fmt.Errorf("timeout_scheduled of %s: due_at: %w", ev.OrderNo, err)
			}
			due[k] = t
			hops[ev.OrderNo]++
		case core.EventTimeoutFired:
			if at, ok := fired[k]; !ok || ev.At < at {
				fired[k] = ev.At // a redelivery is not the hop's arrival
			}
		}
	}
	var late []time.Duration
	for k, at := range fired {
		if t, ok := due[k]; ok {
			late = append(late, time.UnixMilli(at).Sub(t))
		}
	}
	return hops, late, nil
}

// idealHops is the length of the timeout chain for a hold of ttl when every
// hop arrives exactly on time: the fewest messages the policy can need.
func idealHops(p core.DelayPolicy, ttl time.Duration) int {
	hops := 0
	for elapsed := time.Duration(0); ; {
		d := p.Plan(ttl - elapsed).Delay
		hops++
		elapsed += d
		if elapsed >= ttl || d <= 0 {
			return hops
		}
	}
}

// expireRows turns one mode's expire scenario into table rows.
func expireRows(stack string, res expireResult) []Row {
	levels := res.Mode == core.DelayLevels && stack == StackReal
	var rows []Row
	for _, ph := range res.Phases {
		scen := fmt.Sprintf("expire %s %s", res.Mode, ph.Name)
		if ph.Backlog != nil {
			rows = append(rows, backlogRows(scen, stack, ph, res.Commit)...)
			continue
		}
		row := func(metric string, v float64, unit string) Row {
			return Row{Scenario: scen, Stack: stack, Metric: metric, Value: v, Unit: unit}
		}
		// Holds coming due in the same second are the backlog phase's.
		spread := row("expire_at spread (placing took)", ph.Spread.Seconds(), "s")
		p99 := row("lateness p99", ms(ph.Lateness.P99), "ms").vs("raw queue p99", ms(res.Raw.Lateness.P99))
		mx := row("lateness max", ms(ph.Lateness.Max), "ms").vs("raw queue max", ms(res.Raw.Lateness.Max))
		switch {
		case levels && ph.Name == "burst":
			p99 = p99.target("≤ 1000 ms", ph.Lateness.P99 <= time.Second)
			mx = mx.target("≤ 2500 ms", ph.Lateness.Max <= 2500*time.Millisecond)
		case levels:
			p99 = p99.target("≤ 1500 ms", ph.Lateness.P99 <= 1500*time.Millisecond)
			mx = mx.target("≤ 2500 ms", ph.Lateness.Max <= 2500*time.Millisecond)
		default:
			p99 = p99.target("≤ 1000 ms", ph.Lateness.P99 <= time.Second)
		}
		drain := row("drain (last cancel − last expiry)", ph.Drain.Seconds(), "s").vs("raw queue drain", res.Raw.Drain.Seconds())
		if ph.Name == "burst" {
			drain = drain.target("≤ 20 s", ph.Drain <= 20*time.Second)
		}
		rows = append(rows, spread,
			row("cancelled by the timeout chain", float64(ph.Reasons[core.ReasonTimeout]), "").vs("holds placed", float64(ph.Orders)),
			row("cancelled by the reconcile sweep", float64(ph.Reasons[core.ReasonReconcile]), "").vs("holds placed", float64(ph.Orders)),
			row("lateness p50", ms(ph.Lateness.P50), "ms").vs("raw queue p50", ms(res.Raw.Lateness.P50)),
			p99, mx, drain,
			row("cancels/s (first expiry → last cancel)", ph.CancelRate, "/s").vs("holds coming due/s", ph.ExpiryRate),
			row("each hop's delivery lateness p50", ms(ph.Delivery.P50), "ms").vs("raw queue p50", ms(res.Raw.Lateness.P50)),
			row("each hop's delivery lateness p99", ms(ph.Delivery.P99), "ms").vs("raw queue p99", ms(res.Raw.Lateness.P99)),
			row("timeout messages per order, mean", ph.HopsMean, "hops").vs("ideal chain", float64(ph.HopsIdeal)),
			row("timeout messages per order, max", float64(ph.HopsMax), "hops").vs("ideal chain", float64(ph.HopsIdeal)),
		)
	}
	return rows
}
