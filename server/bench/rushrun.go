package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"
)

// newShowAPI creates a show of seats seats (rows of rushRowSeats) through
// POST /api/v1/shows, as an operator would before an on-sale.
func (s *stack) newShowAPI(ctx context.Context, seats int) (int64, error) {
	cols := min(seats, rushRowSeats)
	body := fmt.Appendf(nil, `{"name":"rush %s","venue":"bench","starts_at":%q,"currency":"EUR",`+
		`"price_categories":[{"code":"STD","name":"Standard","price_cents":5000}],`+
		`"grid":{"rows":%d,"seats_per_row":%d,"category":"STD"}}`,
		randHex(3), time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339), seats/cols, cols)
	var out struct {
		ID int64 `json:"id"`
	}
	if err := s.api.do(ctx, http.MethodPost, "/api/v1/shows", body, nil, &out); err != nil {
		return 0, fmt.Errorf("create show: %w", err)
	}
	s.shows = append(s.shows, out.ID)
	return out.ID, nil
}

// queueRuns is which rushes --queue asks for.
func queueRuns(q string) []bool {
	switch q {
	case QueueOn:
		return []bool{true}
	case QueueBoth:
		return []bool{false, true}
	}
	return []bool{false}
}

// rushSeatMapAge is the seat map cache of the rush's server: an operator
// turns it on for an on-sale, where page loads would otherwise set the pace.
const rushSeatMapAge = 100 * time.Millisecond

// runRushScenario is `seatflow bench rush`: the baseline rush, then the
// rush of o.Buyers without and/or with the queue, then the joins phase
// when the queue is asked for, all on one server.
func runRushScenario(ctx context.Context, o Options, getenv func(string) string, p *progress, rep *Report) (err error) {
	s, err := startStack(ctx, o, stackConfig{holdTTL: longHold, addressLimits: true, seatMapMaxAge: rushSeatMapAge, overloadProtection: true,
		noFile: o.ServerNoFile, opsListener: true}, getenv, p)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.close(context.WithoutCancel(ctx))) }()
	return rushPhases(ctx, o, s, s.child.mem, p, rep)
}

// rushPhases runs the rushes on a started stack; mem follows the server's
// memory (nil: not sampled).
func rushPhases(ctx context.Context, o Options, s *stack, mem *procSampler, p *progress, rep *Report) (err error) {
	stack := o.stackLabel()
	spec := func(label string, buyers int, queue bool, users int64) rushSpec {
		return rushSpec{label: label, buyers: buyers, conns: rushConns(o.Conns, buyers), seats: o.RushSeats,
			queue: queue, users: users, until: o.MaxTime}
	}
	base, err := runRush(ctx, s, spec(fmt.Sprintf("rush baseline: %d buyers", o.BaselineBuyers), o.BaselineBuyers, false, 0), mem, p)
	rep.Details["rush_baseline"] = base
	rep.Rows = append(rep.Rows, baselineRows(stack, base)...)
	if err != nil {
		return err
	}
	users := int64(o.BaselineBuyers)
	if o.CPUProfile != "" && s.pprofAddr != "" {
		prof := startProfile(ctx, s.pprofAddr, o.ProfileTime)
		p.logf("CPU profile of the server for %v, into %s", o.ProfileTime, o.CPUProfile)
		defer func() { err = errors.Join(err, prof.save(o.CPUProfile)) }()
	}
	for _, q := range queueRuns(o.Queue) {
		var named *rushResult
		for _, best := range buyerModes(o.BuyersMode) {
			label := fmt.Sprintf("rush: %d buyers", o.Buyers)
			if best {
				label += ", best available"
			}
			if q {
				label += " through the queue"
			}
			sp := spec(label, o.Buyers, q, users)
			sp.best = best
			res, err := runRush(ctx, s, sp, mem, p)
			users += int64(o.Buyers)
			rep.Details[label] = res
			rep.Rows = append(rep.Rows, rushRows(stack, res, base)...)
			if best {
				rep.Rows = append(rep.Rows, bestRows(stack, res, named)...)
			} else {
				named = &res
			}
			if err != nil {
				return err
			}
		}
	}
	if o.Queue == QueueOff {
		return nil
	}
	jr, err := runJoins(ctx, o, s, p)
	rep.Details["rush_joins"] = jr
	rep.noteFailures("rush: queue joins", jr.Joins)
	rep.Rows = append(rep.Rows, joinsRows(stack, jr)...)
	return err
}

func rushRow(stack, metric string, v float64, unit string) Row {
	return Row{Scenario: ScenarioRush, Stack: stack, Metric: metric, Value: v, Unit: unit}
}

func baselineRows(stack string, base rushResult) []Row {
	name := fmt.Sprintf("%d buyers (baseline): ", base.Buyers)
	return []Row{
		rushRow(stack, name+"goodput (holds/s)", base.Goodput, "/s"),
		rushRow(stack, name+"decided answers (201/409) p99", ms(base.Decided.P99), "ms"),
		rushRow(stack, name+"time to sell out", base.SellOut.Seconds(), "s"),
		twiceRow(stack, name, base.Check),
	}
}

func twiceRow(stack, name string, c seatCheck) Row {
	n := c.DoubleOrderRow + c.DoubleSold
	return rushRow(stack, name+"seats sold or held twice", float64(n), "").target("= 0", n == 0)
}

// latencyRow is a p99 with its target, or absent when nothing was measured.
func latencyRow(stack, metric string, s Summary, limit time.Duration, limitName string) Row {
	r := rushRow(stack, metric, ms(s.P99), "ms")
	if s.Count == 0 {
		return r.absent("none")
	}
	return r.target("≤ "+limitName, s.P99 <= limit)
}

// rushRows is one rush's figures beside the baseline of the same run and
// the limits of ISSUE29.md.
func rushRows(stack string, res, base rushResult) []Row {
	name := rushName(res)
	ratio := 0.0
	if base.Goodput > 0 {
		ratio = res.Goodput / base.Goodput
	}
	rows := []Row{
		rushRow(stack, name+"goodput (holds/s)", res.Goodput, "/s").
			vs(fmt.Sprintf("goodput, %d buyers", base.Buyers), base.Goodput).target("≥ 0.50 ratio", ratio >= 0.5),
		latencyRow(stack, name+"decided answers (201/409) p99", res.Decided, time.Second, "1 s"),
		latencyRow(stack, name+"shed answers (503 overloaded) p99", res.Shed, 50*time.Millisecond, "50 ms"),
	}
	if res.Queue {
		rows = append(rows,
			latencyRow(stack, name+"admitted placements p99", res.Admitted, 250*time.Millisecond, "250 ms"),
			latencyRow(stack, name+"joins p99", res.Joins, 100*time.Millisecond, "100 ms"),
			rushRow(stack, name+"polls p99", ms(res.Polls.P99), "ms"))
		if res.Fair != nil {
			rows = append(rows,
				rushRow(stack, fmt.Sprintf("%srank correlation, pre-queue arrival vs position (%d buyers)", name, res.Fair.PreN), res.Fair.PreQueue, "ρ").beside("want about", 0),
				rushRow(stack, fmt.Sprintf("%srank correlation, arrival after opening vs position (%d buyers)", name, res.Fair.AfterN), res.Fair.AfterOpening, "ρ").beside("want", 1))
		}
	}
	mem := rushRow(stack, name+"server peak RSS", mb(res.Mem.PeakRSS), "MB")
	if res.Mem.PeakRSS == 0 {
		mem = mem.absent("not sampled")
	}
	perHold := 0.0
	if res.Holds > 0 {
		perHold = float64(res.Statuses["409"]) / float64(res.Holds)
	}
	rows = append(rows,
		rushRow(stack, name+"5xx answers other than shed 503s", float64(res.Other5xx), "").target("= 0", res.Other5xx == 0),
		rushRow(stack, name+"requests with no answer", float64(res.Statuses[noAnswerKey]), "").target("= 0", res.Statuses[noAnswerKey] == 0),
		rushRow(stack, name+"/readyz worst", ms(res.Ready.Worst), "ms").target("≤ 250 ms", res.Ready.Worst <= 250*time.Millisecond),
		latencyRow(stack, name+"/readyz p99", res.Ready.Latency, 100*time.Millisecond, "100 ms"),
		rushRow(stack, name+"/readyz probes failed", float64(res.Ready.Failed), "").target("= 0", res.Ready.Failed == 0),
		rushRow(stack, name+"bench's own timer lag p99 (in every latency above)", ms(res.Lag.P99), "ms"),
		overflowRow(stack, name, res.ListenOverflows),
		mem,
		rushRow(stack, name+"time to sell out", res.SellOut.Seconds(), "s"),
		rushRow(stack, name+"409 answers per hold", perHold, ""),
		rushRow(stack, name+"buyers that gave up", float64(res.GaveUp), ""),
	)
	for _, k := range slices.Sorted(maps.Keys(res.Statuses)) {
		rows = append(rows, rushRow(stack, name+"answers "+k, float64(res.Statuses[k]), ""))
	}
	return append(rows, twiceRow(stack, name, res.Check))
}

// rushName starts the names of a rush's figures.
func rushName(res rushResult) string {
	name := fmt.Sprintf("%d buyers", res.Buyers)
	if res.Best {
		name += ", best available"
	}
	if res.Queue {
		name += ", queue"
	}
	return name + ": "
}

func joinsRows(stack string, jr joinsResult) []Row {
	n := fmt.Sprintf("queue: %d joins", jr.Joins.Ops)
	return []Row{
		rushRow(stack, n+", joins/s", jr.Joins.Rate, "/s").vs("raw "+jr.RawOp+"/s", jr.Raw.Rate).
			target("≥ 0.50 ratio", jr.Joins.Rate >= 0.5*jr.Raw.Rate),
		rushRow(stack, n+", join p99", ms(jr.Joins.Latency.P99), "ms").vs("raw p99", ms(jr.Raw.Latency.P99)),
	}
}

// overflowRow is the connections the kernel refused for a full listen
// queue: each waits for its SYN retry (1 s, then 3 s), in the latencies
// above. Raising net.core.somaxconn (README, production) removes them.
func overflowRow(stack, name string, n int64) Row {
	r := rushRow(stack, name+"connections refused for a full listen queue (machine-wide, in the latencies above)", float64(n), "")
	if n < 0 {
		return r.absent("not readable")
	}
	return r
}
