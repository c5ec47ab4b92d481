package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"
)

// The place scenario's best-available phase (issue 30): the same clients
// sell out the same shape of show asking for 1 to 4 seats together
// instead of naming them, so its placement p99 can be set beside the
// named-seat p99 of the same run (target: at most 1.5 times it).

// bestP99Ratio is the bound on best-available p99 ÷ named-seat p99.
const bestP99Ratio = 1.5

// placeBestResult is the best-available phase.
type placeBestResult struct {
	Rounds  []placeRound `json:"rounds"`
	Latency Summary      `json:"latency"` // every request of every round
	Check   seatCheck    `json:"check"`
}

// placeBest asks for count seats chosen by the server; a 409 comes back
// as an *apiError saying what is left.
func (c *apiClient) placeBest(ctx context.Context, userID, showID int64, count int, together bool) (placed, error) {
	var p placed
	err := c.do(ctx, http.MethodPost, "/api/v1/orders", bestBody(userID, showID, count, together, ""), nil, &p)
	return p, err
}

// runPlaceBest sells out o.Rounds fresh shows of o.Rows×o.Cols seats with
// o.Clients clients each asking for 1 to 4 seats together (a new user per
// order); once none fit together, for what is left apart. Then it checks
// the seat invariants.
func runPlaceBest(ctx context.Context, o Options, s *stack, p *progress) (placeBestResult, error) {
	var (
		res     placeBestResult
		samples []time.Duration
		shows   []int64
		total   int
	)
	for round := 1; round <= o.Rounds; round++ {
		show, plan, err := s.newShow(ctx, o.Rows, o.Cols)
		if err != nil {
			return res, err
		}
		shows, total = append(shows, show.ID), total+len(plan)
		var (
			apart atomic.Bool
			left  atomic.Int64 // free seats as the last 409 said: only falls
		)
		left.Store(int64(len(plan)))
		label := fmt.Sprintf("place best available round %d/%d (show %d, %d seats)", round, o.Rounds, show.ID, len(plan))
		r := runLoad(ctx, loadSpec{Label: label, Clients: o.Clients, Duration: o.MaxTime}, p,
			func(ctx context.Context, i int64) (string, error) {
				n := left.Load()
				if n <= 0 {
					return "", errDone
				}
				_, err := s.api.placeBest(ctx, i+1, show.ID, int(min(int64(1+rand.IntN(4)), n)), !apart.Load())
				if err == nil {
					return "ok", nil
				}
				ae, ok := isStatus(err, http.StatusConflict)
				if !ok || ae.Code != "not_enough_seats" {
					return "", err
				}
				apart.Store(true)
				for free := int64(freeLeft(ae)); ; {
					l := left.Load()
					if free >= l || left.CompareAndSwap(l, free) {
						break
					}
				}
				return "conflict", nil
			})
		if err := r.failure(); err != nil {
			return res, fmt.Errorf("place best available round %d: %w", round, err)
		}
		pr := newPlaceRound(show.ID, len(plan), r)
		res.Rounds = append(res.Rounds, pr)
		samples = append(samples, r.samples...)
	}
	res.Latency = summarize(samples)
	p.logf("checking seats of the best-available shows")
	var err error
	if res.Check, err = checkSeats(ctx, s, shows); err != nil {
		return res, err
	}
	if res.Check.Taken != total {
		return res, fmt.Errorf("best-available shows not sold out: %d of %d seats taken", res.Check.Taken, total)
	}
	return res, nil
}

// placeBestRows sets the best-available phase beside the named-seat place
// phase of the same run.
func placeBestRows(stack string, best placeBestResult, named placeResult) []Row {
	row := func(metric string, v float64, unit string) Row {
		return Row{Scenario: ScenarioPlace, Stack: stack, Metric: "best available: " + metric, Value: v, Unit: unit}
	}
	var rows []Row
	for i, r := range best.Rounds {
		rows = append(rows, row(fmt.Sprintf("orders placed/s, round %d", i+1), r.Rate, "/s"))
	}
	p99 := row("latency p99", ms(best.Latency.P99), "ms").vs("named-seat p99", ms(named.Latency.P99))
	if best.Latency.Count == 0 || named.Latency.Count == 0 {
		p99 = p99.absent("none")
	} else {
		p99 = p99.target(fmt.Sprintf("≤ %.1f ratio", bestP99Ratio), float64(best.Latency.P99) <= bestP99Ratio*float64(named.Latency.P99))
	}
	var orders, conflicts int64
	for _, r := range best.Rounds {
		orders, conflicts = orders+r.Orders, conflicts+r.Conflicts
	}
	conflictRate := 0.0
	if orders+conflicts > 0 {
		conflictRate = 100 * float64(conflicts) / float64(orders+conflicts)
	}
	n := best.Check.DoubleOrderRow + best.Check.DoubleSold
	return append(rows,
		row("latency p50", ms(best.Latency.P50), "ms").vs("named-seat p50", ms(named.Latency.P50)),
		p99,
		row("conflict rate (409 / requests)", conflictRate, "%").beside("named-seat %", 100*named.Conflicts),
		row("seats sold or held twice", float64(n), "").target("= 0", n == 0),
		row("seats whose Redis state ≠ DB", float64(best.Check.Mismatch), "").target("= 0", best.Check.Mismatch == 0),
	)
}
