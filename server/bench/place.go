package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// placeRound is one show sold out.
type placeRound struct {
	Show      int64      `json:"show_id"`
	Seats     int        `json:"seats"`
	Orders    int64      `json:"orders"`
	Conflicts int64      `json:"conflicts"`
	Rate      float64    `json:"orders_per_s"`
	Load      loadResult `json:"load"`
}

// newPlaceRound tallies one round's load: its "ok" and "conflict"
// outcomes, and the orders per second.
func newPlaceRound(show int64, seats int, r loadResult) placeRound {
	pr := placeRound{Show: show, Seats: seats, Orders: r.Outcomes["ok"], Conflicts: r.Outcomes["conflict"], Load: r}
	if r.Elapsed > 0 {
		pr.Rate = float64(pr.Orders) / r.Elapsed.Seconds()
	}
	return pr
}

// placeResult is the place scenario.
type placeResult struct {
	Rounds    []placeRound  `json:"rounds"`
	Latency   Summary       `json:"latency"` // every request of every round
	Conflicts float64       `json:"conflict_rate"`
	Mem       memWindow     `json:"server_memory"`
	CPU       time.Duration `json:"server_cpu_ns"`
	CPULedger cpuUsage      `json:"cpu_ledger"` // where the machine's CPU went, per order placed
	// TimeoutSends is the messages the server sent to its delay queue
	// while placing (seatflow_timeout_sends_total).
	TimeoutSends float64   `json:"timeout_sends"`
	Check        seatCheck `json:"check"`
}

// runPlace sells out o.Rounds fresh shows of o.Rows×o.Cols seats, one after
// the other, with o.Clients clients buying 1 to 4 random seats each (a new
// user per order), then checks the seat invariants.
func runPlace(ctx context.Context, o Options, s *stack, p *progress) (placeResult, error) {
	var res placeResult
	s.child.mem.reset()
	cpu0, err := s.child.mem.cpu()
	if err != nil {
		return res, err
	}
	sends0, err := s.api.counter(ctx, "seatflow_timeout_sends_total")
	if err != nil {
		return res, err
	}
	ledger := s.startCPULedger()
	var (
		samples           []time.Duration
		placedShows       []int64
		orders, conflicts int64
	)
	for round := 1; round <= o.Rounds; round++ {
		show, plan, err := s.newShow(ctx, o.Rows, o.Cols)
		if err != nil {
			return res, err
		}
		placedShows = append(placedShows, show.ID)
		ids := make([]string, len(plan))
		for i, st := range plan {
			ids[i] = st.SeatID
		}
		pool := newSeatPool(ids)
		label := fmt.Sprintf("place round %d/%d (show %d, %d seats)", round, o.Rounds, show.ID, len(ids))
		r := runLoad(ctx, loadSpec{Label: label, Clients: o.Clients, Duration: o.MaxTime}, p,
			func(ctx context.Context, i int64) (string, error) {
				seats := pool.pick(1 + rand.IntN(4))
				if len(seats) == 0 {
					return "", errDone
				}
				_, err := s.api.place(ctx, i+1, show.ID, seats)
				if err == nil {
					pool.remove(seats)
					return "ok", nil
				}
				if ae, ok := isStatus(err, http.StatusConflict); ok {
					pool.remove(ae.Seats)
					return "conflict", nil
				}
				return "", err
			})
		if err := r.failure(); err != nil {
			return res, fmt.Errorf("place round %d: %w", round, err)
		}
		pr := newPlaceRound(show.ID, len(ids), r)
		res.Rounds = append(res.Rounds, pr)
		samples = append(samples, r.samples...)
		orders += pr.Orders
		conflicts += pr.Conflicts
	}
	res.CPULedger = ledger.stop(orders)
	sends1, err := s.api.counter(ctx, "seatflow_timeout_sends_total")
	if err != nil {
		return res, err
	}
	res.TimeoutSends = sends1 - sends0
	if res.Mem, err = s.child.mem.window(); err != nil {
		return res, err
	}
	cpu1, err := s.child.mem.cpu()
	if err != nil {
		return res, err
	}
	res.CPU = cpu1 - cpu0
	res.Latency = summarize(samples)
	if orders+conflicts > 0 {
		res.Conflicts = float64(conflicts) / float64(orders+conflicts)
	}
	p.logf("checking seats: order_seat, paid orders, seat store vs DB")
	if res.Check, err = checkSeats(ctx, s, placedShows); err != nil {
		return res, err
	}
	total := 0
	for _, r := range res.Rounds {
		total += r.Seats
	}
	if res.Check.Taken != total {
		return res, fmt.Errorf("shows not sold out: %d of %d seats taken", res.Check.Taken, total)
	}
	return res, nil
}

// placeRows turns the place scenario into table rows.
func placeRows(stack string, res placeResult, lim limitSet) []Row {
	slowName, slow := lim.slower()
	row := func(metric string, v float64, unit string) Row {
		return Row{Scenario: ScenarioPlace, Stack: stack, Metric: metric, Value: v, Unit: unit}
	}
	var rows []Row
	goal := ratioTarget(stack, 0.35, 0.6)
	for i, r := range res.Rounds {
		rows = append(rows, row(fmt.Sprintf("orders placed/s, round %d", i+1), r.Rate, "/s").
			vs("slower raw limit: "+slowName+"/s", slow.Rate).target(fmt.Sprintf("≥ %.2f ratio", goal), r.Rate >= goal*slow.Rate))
	}
	lat := []struct {
		name string
		v, l time.Duration
	}{{"p50", res.Latency.P50, slow.Latency.P50}, {"p99", res.Latency.P99, slow.Latency.P99}, {"max", res.Latency.Max, slow.Latency.Max}}
	for _, l := range lat {
		r := row("latency "+l.name, ms(l.v), "ms").vs(slowName+" "+l.name, ms(l.l))
		if l.name == "p99" {
			r = r.target("< 50 ms", l.v < 50*time.Millisecond)
		}
		rows = append(rows, r)
	}
	var placed int64
	for _, r := range res.Rounds {
		placed += r.Orders
	}
	if placed > 0 {
		// Server CPU (user + system, /proc/<pid>/stat) over both rounds:
		// the cost of an order, which the rate alone hides on shared cores.
		rows = append(rows, row("server CPU per order placed", ms(res.CPU)/float64(placed), "ms"))
	}
	rows = append(rows, cpuRows(row, "order placed", "placing", res.CPULedger)...)
	if stack == StackReal {
		rows = append(rows, brokerWarmRow(row, res.CPULedger))
	}
	var placing time.Duration
	for _, r := range res.Rounds {
		placing += r.Load.Elapsed
	}
	var measured float64
	if placing > 0 && lim.Commit.Rate > 0 {
		measured = float64(placed) / placing.Seconds() / lim.Commit.Rate
	}
	ceiling := ceilingRow(row, "order placed", lim.CommitCPU, res.CPULedger, "orders/s", measured)
	if stack == StackReal && ceiling.Absent == "" {
		ceiling = ceiling.target("≥ 0.40", ceiling.Value >= 0.4)
	}
	rows = append(rows, ceiling)
	if placed > 0 {
		// One message per placement batch, however many orders it holds
		// (on the DB queue: one multi-row INSERT in the batch's transaction).
		r := row("timeout messages sent per order placed", float64(res.TimeoutSends)/float64(placed), "msgs")
		if stack == StackReal {
			r = r.target("≤ 0.10", float64(res.TimeoutSends) <= 0.1*float64(placed))
		}
		rows = append(rows, r)
	}
	rows = append(rows,
		row("conflict rate (409 / requests)", 100*res.Conflicts, "%"),
		row("server peak RSS under load", mb(res.Mem.PeakRSS), "MB").
			vs("target", 150).target("≤ 150 MB", res.Mem.PeakRSS <= 150<<20),
		row("seats sold or held twice", float64(res.Check.DoubleOrderRow+res.Check.DoubleSold), "").target("= 0", res.Check.DoubleOrderRow+res.Check.DoubleSold == 0),
		row("seats whose Redis state ≠ DB", float64(res.Check.Mismatch), "").target("= 0", res.Check.Mismatch == 0),
	)
	return rows
}

// brokerWarmRow is the brokers' CPU per order placed less their JIT
// compilers' (jit.go), against issue 34's target for a warm broker.
func brokerWarmRow(row func(metric string, v float64, unit string) Row, u cpuUsage) Row {
	var us float64
	found := false
	for _, p := range u.Processes {
		if p.Label == procBroker && p.Missing == "" {
			us += p.PerOpUS - p.JITPerOpUS
			found = true
		}
	}
	r := row("CPU per order placed: rocketmq-broker less its JIT compiler", us, "µs")
	if !found || u.Ops == 0 {
		return r.absent("unknown")
	}
	return r.target("≤ 30 µs", us <= 30)
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// ratioTarget is a ratio target of issue 34 for the stack: real, else
// embedded (SQLite's one writer sets that stack's limit).
func ratioTarget(stack string, real, embedded float64) float64 {
	if stack == StackReal {
		return real
	}
	return embedded
}
