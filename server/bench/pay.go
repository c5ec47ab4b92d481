package bench

import (
	"context"
	"fmt"
	"time"

	"seatflow/core"
)

// payJob is one callback: the order it pays, and whether it repeats an
// earlier callback (same txn_id), as a gateway retrying would.
type payJob struct {
	Order int
	Dup   bool
}

// payJobs lists the callbacks for k orders: one per order, plus a repeat of
// every every-th order's callback at least lag jobs after the original, so
// the repeat usually finds it applied (if not, one of the two still wins
// and the other is the duplicate).
func payJobs(k, every, lag int) []payJob {
	out := make([]payJob, 0, k+k/every+1)
	var waiting []int // orders whose repeat is not placed yet, oldest first
	for i := range k {
		out = append(out, payJob{Order: i})
		if i%every == 0 {
			waiting = append(waiting, i)
		}
		for len(waiting) > 0 && i-waiting[0] >= lag {
			out = append(out, payJob{Order: waiting[0], Dup: true})
			waiting = waiting[1:]
		}
	}
	for _, i := range waiting {
		out = append(out, payJob{Order: i, Dup: true})
	}
	return out
}

// payResult is the pay scenario.
type payResult struct {
	Orders    int        `json:"orders"`
	Callbacks int        `json:"callbacks"`
	Place     loadResult `json:"place"`
	Pay       loadResult `json:"pay"`
	PayCPU    cpuUsage   `json:"pay_cpu_ledger"` // where the machine's CPU went, per callback
	PaidInDB  int        `json:"paid_in_db"`
	Payments  int        `json:"payment_rows"`
	Check     seatCheck  `json:"check"`
}

// runPay places o.PayOrders orders of 1 to 4 seats on a fresh show, then
// sends their signed payment callbacks from o.Clients clients at full
// speed, repeats included, and checks every order is paid exactly once.
func runPay(ctx context.Context, o Options, s *stack, p *progress) (payResult, error) {
	res := payResult{Orders: o.PayOrders}
	// Order i takes 1 + i%4 seats, consecutive in the plan: no conflicts,
	// the same mean size as place.
	first := make([]int, o.PayOrders+1)
	for i := range o.PayOrders {
		first[i+1] = first[i] + 1 + i%4
	}
	show, _, orders, place, err := placeConsecutive(ctx, o, s, p, "pay", first)
	if err != nil {
		return res, err
	}
	res.Place = place
	if err := res.Place.failure(); err != nil {
		return res, fmt.Errorf("pay: place: %w", err)
	}
	if res.Place.Errors > 0 {
		return res, fmt.Errorf("pay: place: %s", res.Place.FirstErr)
	}

	jobs := payJobs(o.PayOrders, o.DupEvery, 2*o.Clients)
	res.Callbacks = len(jobs)
	run := randHex(4)
	ledger := s.startCPULedger()
	res.Pay = runLoad(ctx, loadSpec{Label: fmt.Sprintf("pay: %d callbacks", len(jobs)), Clients: o.Clients,
		Ops: int64(len(jobs)), Duration: o.MaxTime}, p,
		func(ctx context.Context, i int64) (string, error) {
			j := jobs[i]
			od := orders[j.Order]
			return s.api.pay(ctx, od.no, fmt.Sprintf("TXN-%s-%d", run, j.Order), od.amount, time.Now())
		})
	res.PayCPU = ledger.stop(res.Pay.Ops)
	if err := res.Pay.failure(); err != nil {
		return res, fmt.Errorf("pay: callbacks: %w", err)
	}

	x := s.db.X()
	if err := x.GetContext(ctx, &res.PaidInDB, `SELECT COUNT(*) FROM order_info WHERE show_id = ? AND status = ?`,
		show.ID, int(core.StatusPaid)); err != nil {
		return res, fmt.Errorf("pay: count paid orders: %w", err)
	}
	if err := x.GetContext(ctx, &res.Payments, `SELECT COUNT(*) FROM payment WHERE txn_id LIKE ?`, "TXN-"+run+"-%"); err != nil {
		return res, fmt.Errorf("pay: count payments: %w", err)
	}
	if res.Check, err = checkSeats(ctx, s, []int64{show.ID}); err != nil {
		return res, err
	}
	dups := len(jobs) - o.PayOrders
	if res.Pay.Outcomes[string(core.PaymentApplied)] != int64(o.PayOrders) || res.Pay.Outcomes[string(core.PaymentDuplicate)] != int64(dups) ||
		res.PaidInDB != o.PayOrders || res.Payments != o.PayOrders {
		return res, fmt.Errorf("pay: results %v, %d orders paid and %d payment rows in the DB; want %d paid, %d duplicate",
			res.Pay.Outcomes, res.PaidInDB, res.Payments, o.PayOrders, dups)
	}
	return res, nil
}

// placedOrder is an order a phase placed.
type placedOrder struct {
	no     string
	amount int64
}

// placeConsecutive creates a show of rows of 100 seats and places order i
// on its seats first[i] to first[i+1]-1, for a user of its own: no order
// meets another. label names the scenario in the progress.
func placeConsecutive(ctx context.Context, o Options, s *stack, p *progress, label string, first []int) (core.Show, []core.Seat, []placedOrder, loadResult, error) {
	const cols = 100
	n := len(first) - 1
	show, plan, err := s.newShow(ctx, (first[n]+cols-1)/cols, cols)
	if err != nil {
		return show, nil, nil, loadResult{}, err
	}
	orders := make([]placedOrder, n)
	r := runLoad(ctx, loadSpec{Label: fmt.Sprintf("%s: place %d orders", label, n), Clients: o.Clients,
		Ops: int64(n), Duration: o.MaxTime, MaxErrors: 1}, p,
		func(ctx context.Context, i int64) (string, error) {
			var seats []string
			for _, st := range plan[first[i]:first[i+1]] {
				seats = append(seats, st.SeatID)
			}
			pl, err := s.api.place(ctx, i+1, show.ID, seats)
			orders[i] = placedOrder{pl.OrderNo, pl.AmountCents}
			return "ok", err
		})
	return show, plan, orders, r, nil
}

// payRows turns the pay scenario into table rows.
func payRows(stack string, res payResult, lim limitSet) []Row {
	row := func(metric string, v float64, unit string) Row {
		return Row{Scenario: ScenarioPay, Stack: stack, Metric: metric, Value: v, Unit: unit}
	}
	c := lim.Commit
	var measured float64
	if c.Rate > 0 {
		measured = res.Pay.Rate / c.Rate
	}
	rows := []Row{
		row("callbacks/s (10 % repeats)", res.Pay.Rate, "/s").vs("raw DB commit/s", c.Rate).
			target(fmt.Sprintf("≥ %.2f ratio", ratioTarget(stack, 0.45, 0.7)), res.Pay.Rate >= ratioTarget(stack, 0.45, 0.7)*c.Rate),
		row("latency p50", ms(res.Pay.Latency.P50), "ms").vs("DB commit p50", ms(c.Latency.P50)),
		row("latency p99", ms(res.Pay.Latency.P99), "ms").vs("DB commit p99", ms(c.Latency.P99)),
		row("latency max", ms(res.Pay.Latency.Max), "ms").vs("DB commit max", ms(c.Latency.Max)),
		row("orders paid exactly once", float64(res.PaidInDB), "").vs("orders placed", float64(res.Orders)).
			target("all", res.PaidInDB == res.Orders && res.Payments == res.Orders),
		row("seats whose Redis state ≠ DB", float64(res.Check.Mismatch), "").target("= 0", res.Check.ok()),
	}
	rows = append(rows, cpuRows(row, "callback", "callbacks", res.PayCPU)...)
	return append(rows, ceilingRow(row, "callback", lim.CommitCPU, res.PayCPU, "callbacks/s", measured))
}
