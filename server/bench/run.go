// Package bench is `seatflow bench`: load scenarios against a SeatFlow
// server it starts itself, each figure reported beside the raw limit of the
// same store measured in the same run (the machine is shared and noisy, so
// only ratios compare across runs). See BENCHMARKS.md.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// limitSet is the raw limits measured on one server's stores.
type limitSet struct {
	// Eval is the real stack's seat-store limit: a script of lock.lua's
	// shape on its Redis.
	Eval loadResult `json:"redis_eval,omitzero"`
	// SeatLock is the embedded stack's: the in-process seat store's Lock,
	// run in the bench's own process (the server's is out of reach).
	SeatLock  loadResult `json:"seat_lock,omitzero"`
	Commit    loadResult `json:"db_commit"`
	CommitCPU cpuUsage   `json:"db_commit_cpu"` // where the machine's CPU went during the commits
	Send      loadResult `json:"queue_send"`
	// SendWarmup is the real stack's broker warm-up before the limits:
	// each window's sends/s (limits.go).
	SendWarmup []float64 `json:"queue_send_warmup,omitempty"`
	inProcess  bool      // the seat store is in process: SeatLock, not Eval
}

// seatLimit is the seat store's raw limit, named in full (rows) and short
// (comparisons).
func (l limitSet) seatLimit() (name, short string, r loadResult) {
	if l.inProcess {
		return "seat store lock (in-process)", "seat store lock", l.SeatLock
	}
	return "Redis EVAL (lock.lua shape)", "Redis EVAL", l.Eval
}

// slower is the lower of the two limits every placement must pass through
// (a seat-store lock, a DB commit).
func (l limitSet) slower() (string, loadResult) {
	if _, short, seat := l.seatLimit(); seat.Rate < l.Commit.Rate {
		return short, seat
	}
	return "DB commit", l.Commit
}

func limitRows(stack string, l limitSet) []Row {
	seatName, _, seat := l.seatLimit()
	var rows []Row
	for _, x := range []struct {
		name string
		r    loadResult
	}{{seatName, seat}, {"DB INSERT+COMMIT", l.Commit}, {"queue send (timeout message)", l.Send}} {
		rows = append(rows,
			Row{Scenario: ScenarioLimits, Stack: stack, Metric: x.name + " rate", Value: x.r.Rate, Unit: "/s"},
			Row{Scenario: ScenarioLimits, Stack: stack, Metric: x.name + " p99", Value: ms(x.r.Latency.P99), Unit: "ms"})
	}
	row := func(metric string, v float64, unit string) Row {
		return Row{Scenario: ScenarioLimits, Stack: stack, Metric: metric, Value: v, Unit: unit}
	}
	if w := l.SendWarmup; len(w) > 0 {
		rows = append(rows, row("broker warm-up before the limits (1 s windows of sends)", float64(len(w)), "s"),
			row("broker warm-up: first window's sends/s", w[0], "/s").vs("last window's sends/s", w[len(w)-1]))
	}
	return append(rows, cpuRows(row, "DB commit", "DB commit", l.CommitCPU)...)
}

// Run is `seatflow bench SCENARIO [flags]`: it prints progress and the
// final table (or only JSON with --json) to stdout.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == probeCommand { // the rush's prober, a child of the bench (prober.go)
		return runProber(ctx, args[1:], os.Stdin, stdout)
	}
	o, help, err := parseArgs(args, getenv, stdout)
	if help || err != nil {
		return err
	}
	p := newProgress(stdout, o.JSON)
	rep := &Report{Date: time.Now(), Machine: machine(), Scenario: o.Scenario, Stack: o.stackLabel(), Clients: o.Clients,
		LoadFrom: loadAvg(), Details: map[string]any{}}
	runErr := runScenarios(ctx, o, getenv, p, rep)
	rep.LoadTo = loadAvg()
	if runErr != nil {
		rep.Errors = append(rep.Errors, runErr.Error())
	}
	var werr error
	if o.JSON {
		werr = rep.writeJSON(stdout)
	} else {
		werr = rep.writeTable(stdout)
	}
	if o.JSONOut != "" {
		werr = errors.Join(werr, writeJSONFile(o.JSONOut, rep))
	}
	if runErr != nil {
		return errors.Join(fmt.Errorf("bench %s: %w", o.Scenario, runErr), werr)
	}
	return werr
}

func wants(o Options, scenarios ...string) bool {
	for _, s := range scenarios {
		if o.Scenario == s || o.Scenario == ScenarioAll {
			return true
		}
	}
	return false
}

// longHold keeps place and pay holds from expiring during the run: those
// scenarios measure placing and paying, not the timeout chain.
const longHold = time.Hour

// runScenarios runs what o asks for, adding rows and details to rep as
// they come, so a failure late in the run keeps what was measured before.
func runScenarios(ctx context.Context, o Options, getenv func(string) string, p *progress, rep *Report) error {
	if o.Scenario == ScenarioRush {
		return runRushScenario(ctx, o, getenv, p, rep)
	}
	if o.Scenario == ScenarioCheckin {
		res, err := runCheckin(ctx, o, getenv, p)
		rep.Details["checkin"] = res
		rep.noteFailures("checkin scans", res.Scan)
		rep.Rows = append(rep.Rows, checkinRows(o.stackLabel(), res)...)
		return err
	}
	if o.Scenario == ScenarioWaitlist {
		res, err := runWaitlist(ctx, o, getenv, p)
		rep.Details["waitlist"] = res
		for _, ph := range []waitlistPhase{res.Baseline, res.List} {
			rep.noteFailures("waitlist "+ph.Name+": joining", ph.Join)
			rep.noteFailures("waitlist "+ph.Name+": placing", ph.Place)
			rep.noteFailures("waitlist "+ph.Name+": hammering", ph.Hammer)
			rep.noteCPU("waitlist "+ph.Name, ph.CPU)
		}
		rep.Rows = append(rep.Rows, waitlistRows(o.stackLabel(), res)...)
		return err
	}
	if wants(o, ScenarioLimits, ScenarioPlace, ScenarioPay) {
		if err := runMain(ctx, o, getenv, p, rep); err != nil {
			return err
		}
	}
	if wants(o, ScenarioExpire) {
		for _, mode := range o.Modes {
			res, err := runExpire(ctx, o, mode, getenv, p)
			rep.Details["expire_"+string(mode)] = res
			rep.noteFailures(fmt.Sprintf("raw %s queue: sending", mode), res.Raw.Send)
			for _, ph := range res.Phases {
				rep.noteFailures(fmt.Sprintf("expire %s %s: placing", mode, ph.Name), ph.Place)
			}
			rep.Rows = append(rep.Rows, expireRows(o.Stack, res)...)
			if err != nil {
				return fmt.Errorf("expire %s: %w", mode, err)
			}
		}
	}
	return nil
}

// runMain measures the limits, then place and pay, on one long-hold server.
func runMain(ctx context.Context, o Options, getenv func(string) string, p *progress, rep *Report) (err error) {
	s, err := startStack(ctx, o, stackConfig{holdTTL: longHold}, getenv, p)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.close(context.WithoutCancel(ctx))) }()
	lim := limitSet{inProcess: o.Stack == StackEmbedded}
	if lim.inProcess {
		lim.SeatLock = measureSeatLock(ctx, o, p)
		err = limitErr(lim.SeatLock)
	} else {
		lim.Eval, err = measureEval(ctx, o, s, p)
	}
	seatName, _, seat := lim.seatLimit()
	if err != nil {
		return fmt.Errorf("limit %s: %w", seatName, err)
	}
	if lim.Commit, lim.CommitCPU, err = measureCommit(ctx, o, s, p); err != nil {
		return fmt.Errorf("limit DB commit: %w", err)
	}
	if lim.Send, lim.SendWarmup, err = measureSend(ctx, o, s, serverPolicy(o.Stack, ""), p); err != nil {
		return fmt.Errorf("limit queue send: %w", err)
	}
	rep.Details["limits"] = lim
	rep.noteFailures("limit "+seatName, seat)
	rep.noteFailures("limit DB commit", lim.Commit)
	rep.noteCPU("limit DB commit", lim.CommitCPU)
	rep.noteFailures("limit queue send", lim.Send)
	rep.Rows = append(rep.Rows, limitRows(o.stackLabel(), lim)...)
	if o.Proxied {
		rtt, err := measureRTT(ctx, o, s)
		rep.Details["rtt"] = rtt
		if err != nil {
			return fmt.Errorf("round trip through the proxy: %w", err)
		}
		rep.Rows = append(rep.Rows, rttRows(o.stackLabel(), rtt)...)
		p.logf("RocketMQ brokers reached through proxies: %v", rtt.Brokers)
	}
	if o.CPUProfile != "" {
		prof := startProfile(ctx, s.pprofAddr, o.ProfileTime)
		p.logf("CPU profile of the server for %v, into %s", o.ProfileTime, o.CPUProfile)
		defer func() { err = errors.Join(err, prof.save(o.CPUProfile)) }()
	}
	if wants(o, ScenarioPlace) {
		res, err := runPlace(ctx, o, s, p)
		rep.Details["place"] = res
		for i, r := range res.Rounds {
			rep.noteFailures(fmt.Sprintf("place round %d", i+1), r.Load)
		}
		rep.noteCPU("place", res.CPULedger)
		rep.Rows = append(rep.Rows, placeRows(o.stackLabel(), res, lim)...)
		if err != nil {
			return fmt.Errorf("place: %w", err)
		}
		best, err := runPlaceBest(ctx, o, s, p)
		rep.Details["place_best_available"] = best
		for i, r := range best.Rounds {
			rep.noteFailures(fmt.Sprintf("place best available round %d", i+1), r.Load)
		}
		rep.Rows = append(rep.Rows, placeBestRows(o.stackLabel(), best, res)...)
		if err != nil {
			return fmt.Errorf("place best available: %w", err)
		}
	}
	if wants(o, ScenarioPay) {
		res, err := runPay(ctx, o, s, p)
		rep.Details["pay"] = res
		rep.noteFailures("pay: placing", res.Place)
		rep.noteFailures("pay: callbacks", res.Pay)
		rep.noteCPU("pay: callbacks", res.PayCPU)
		rep.Rows = append(rep.Rows, payRows(o.stackLabel(), res, lim)...)
		if err != nil {
			return fmt.Errorf("pay: %w", err)
		}
	}
	return nil
}

func writeJSONFile(path string, rep *Report) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--json-out: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	return rep.writeJSON(f)
}
