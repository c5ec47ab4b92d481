package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"seatflow/core"
	"seatflow/core/delay/rocketmq"
)

// Scenarios accepted on the command line.
const (
	ScenarioPlace    = "place"
	ScenarioExpire   = "expire"
	ScenarioPay      = "pay"
	ScenarioLimits   = "limits"
	ScenarioRush     = "rush"
	ScenarioCheckin  = "checkin"
	ScenarioWaitlist = "waitlist"
	ScenarioAll      = "all"
)

// Stacks under test.
const (
	StackEmbedded = "embedded" // SQLite file, in-process seat store, DB delay queue
	StackReal     = "real"     // MariaDB, Redis, RocketMQ on 127.0.0.1
)

// Options is one bench invocation.
type Options struct {
	Scenario  string
	Stack     string
	Clients   int           // concurrent clients of every load phase (and of the raw limits)
	DBPool    int           // SEATFLOW_DB_MAX_OPEN of the server and the raw commit limit's pool; 0: store's default
	Rows      int           // place: seat plan rows × Cols seats per show
	Cols      int           //
	Rounds    int           // place: shows sold out one after the other
	PayOrders int           // pay: orders placed, then paid
	DupEvery  int           // pay: every DupEvery-th order's callback is sent twice
	Orders    int           // expire: holds per phase (burst and spread)
	HoldTTL   time.Duration // expire: the server's SEATFLOW_HOLD_TTL
	Spread    time.Duration // expire: window the spread phase's placements are paced over
	Modes     []core.DelayMode
	LimitTime time.Duration // how long each raw limit is measured
	MaxTime   time.Duration // bound of every load phase (and of each wait for expiries)
	JSON      bool
	JSONOut   string // also write the JSON report to this file
	MySQL     string // real stack: admin DSN; the bench creates and drops its own database
	Redis     string
	RocketMQ  string
	// Proxied routes the server's and the raw limits' store connections
	// through loopback delay proxies adding RTT per round trip (--rtt).
	Proxied bool
	RTT     time.Duration
	// Rush (rush.go): Buyers at once against a fresh show of RushSeats
	// seats, after a BaselineBuyers rush on another; Conns bounds the
	// buyers' connections (0: one per buyer); Queue is off, on or both;
	// Joins is the queue's joins phase.
	Buyers, BaselineBuyers, RushSeats, Conns, Joins int
	// ServerNoFile lowers the rush server's descriptor limit (0: the
	// bench's own): buyers' connections past it are what the connection
	// cap is for (server/connlimit.go).
	ServerNoFile int
	Queue        string
	// BuyersMode is named, best or both: whether the rush's buyers name
	// seats, ask for the best available (rushbest.go), or one rush of each.
	BuyersMode string
	// Checkin (checkin.go): Scans tickets scanned at the door, DupPairs
	// of them twice at the same instant at two gates, ScanRate scans a
	// second offered (0: as fast as Clients scanners go).
	Scans, DupPairs int
	ScanRate        float64
	// CPUProfile is where the server's CPU profile over place and pay goes
	// (--cpu-profile, profile.go), taken for ProfileTime; empty: none.
	CPUProfile  string
	ProfileTime time.Duration
	// Waitlist (waitlist.go): Holds one-seat holds coming due at
	// ExpiryRate a second on a show of as many seats, first with no list,
	// then with Entries entries on its list, while Hammer clients place
	// public orders on its seats.
	Holds, Entries, Hammer int
	ExpiryRate, HammerRate float64
}

const usage = `usage: seatflow bench SCENARIO [flags]

Starts the stack under test itself (seatflow serve as a child process on a
free 127.0.0.1 port, with a fresh database), drives it over the JSON API and
prints each figure beside the raw limit measured in the same run.

scenarios:
  place   N clients buy random 1-4 seats until a show sells out, in Rounds fresh shows;
          then checks that no seat is sold twice and the seat store equals the DB seat by seat
  expire  Orders holds placed as fast as possible (burst), then Orders paced over
          --spread; lateness of each cancel after its expire_at, drain time, hops;
          then Orders holds left to come due while the server is stopped (backlog):
          the drain rate after it starts again, beside the raw DB commit rate
  pay     PayOrders orders placed, then paid by signed callbacks at full speed with
          duplicates
  limits  raw seat-store lock (real: Redis EVAL of lock.lua's shape; embedded: the
          in-process store's Lock), DB INSERT+COMMIT and queue send rates
  all     limits, place and pay on one server, then expire for each delay mode
  rush    an on-sale rush: --baseline-buyers, then --buyers, all starting at once
          against a fresh --seats show each, buying 1-4 seats they saw free, retrying
          on 409 and after Retry-After; goodput ratio, answer p99s, 5xx, /readyz worst and
          p99 (probed on the server's SEATFLOW_OPS_LISTEN from a process of its own);
          with --queue through the show's waiting room (not part of all)
  checkin --scans tickets (4 to an order) scanned at 4 gates, on 2 instances of the server
          on the real stack (1 embedded), --duplicates of them twice at the same instant
          at two gates, paced at --scan-rate a second (0: as fast as --clients go); scan
          answer p99 beside the raw DB commit p99 (not part of all)
  waitlist --holds one-seat holds coming due at --expiry-rate a second on a sold-out show,
          first with no list (the baseline's cancels/s), then with --entries on its list:
          hold end → offer p50/p99, offers/s beside the baseline's cancels/s, and public
          placements (--hammer clients at --hammer-rate) that won a seat being handed on
          (not part of all)

flags:
`

// parseArgs reads "SCENARIO [flags]" (the scenario may also follow the
// flags). help is true when -h was asked for; usage went to out.
func parseArgs(args []string, getenv func(string) string, out io.Writer) (o Options, help bool, err error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Stack, "stack", StackEmbedded, "stack under test: embedded or real")
	fs.IntVar(&o.Clients, "clients", 64, "concurrent clients")
	fs.IntVar(&o.DBPool, "db-pool", 0, "database pool size of the server and of the raw commit limit (0: the store's default, 32 on MySQL)")
	fs.IntVar(&o.Rows, "rows", 50, "place: rows of each show")
	fs.IntVar(&o.Cols, "cols", 100, "place: seats per row")
	fs.IntVar(&o.Rounds, "rounds", 2, "place: shows sold out one after the other")
	fs.IntVar(&o.PayOrders, "pay-orders", 2000, "pay: orders to place and pay")
	fs.IntVar(&o.DupEvery, "dup-every", 9, "pay: send every n-th order's callback twice (9 = 10 % of callbacks are duplicates)")
	fs.IntVar(&o.Orders, "orders", 10000, "expire: holds per phase")
	fs.DurationVar(&o.HoldTTL, "ttl", 40*time.Second, "expire: hold TTL of the server")
	fs.DurationVar(&o.Spread, "spread", 20*time.Second, "expire: window the spread phase's placements are paced over")
	modes := fs.String("modes", "", "expire: delay modes, comma-separated (default: timer on embedded, levels,timer on real)")
	fs.DurationVar(&o.LimitTime, "limit-time", 3*time.Second, "how long each raw limit is measured")
	fs.DurationVar(&o.MaxTime, "max-time", 5*time.Minute, "bound of every load phase and of each wait for expiries")
	fs.BoolVar(&o.JSON, "json", false, "print the results as JSON instead of a table (no progress output)")
	fs.StringVar(&o.JSONOut, "json-out", "", "also write the JSON report (with every phase's details) to this file")
	fs.StringVar(&o.MySQL, "mysql", orDefault(getenv("SEATFLOW_TEST_MYSQL"), "mysql://seatflow:seatflow@tcp(127.0.0.1:3306)/seatflow"),
		"real stack: MariaDB admin DSN (the bench creates and drops a database of its own)")
	fs.StringVar(&o.Redis, "redis", orDefault(getenv("SEATFLOW_TEST_REDIS"), "redis://127.0.0.1:6379/0"), "real stack: Redis URL")
	rtt := fs.String("rtt", "", "real stack, limits/place/pay: route the server's and the raw limits' connections to MariaDB, Redis and RocketMQ\n"+
		"through loopback proxies adding this round-trip time (0s: the proxies alone, to see their own cost; unset: direct)")
	fs.StringVar(&o.CPUProfile, "cpu-profile", "", "place/pay/all: write a CPU profile of the server under test, taken from the end of the raw limits\n"+
		"(rush: from the start of the rush after the baseline; waitlist: from the list's expiry window)\n"+
		"for --profile-time, to this file (read it with: go tool pprof -top bin/seatflow FILE)")
	fs.DurationVar(&o.ProfileTime, "profile-time", 10*time.Second, "with --cpu-profile: how long the profile runs (whole seconds; the server stays up until it is done)")
	fs.IntVar(&o.Buyers, "buyers", 10000, "rush: buyers starting at once")
	fs.IntVar(&o.BaselineBuyers, "baseline-buyers", 1000, "rush: buyers of the baseline rush that goodput is compared with")
	fs.IntVar(&o.RushSeats, "seats", 2000, "rush: seats of each show (rows of 50)")
	fs.IntVar(&o.Conns, "conns", 0, "rush: most connections of the buyers (0: one per buyer)")
	fs.IntVar(&o.ServerNoFile, "server-nofile", 0, "rush: lower the server's descriptor limit (ulimit -n) to this, so that the buyers' connections\n"+
		"outnumber it as 20,000 would the server's 20,000 (0: the bench's own limit)")
	fs.StringVar(&o.Queue, "queue", QueueOff, "rush: through the show's waiting room: off, on or both")
	fs.StringVar(&o.BuyersMode, "buyers-mode", BuyersNamed, "rush: buyers name seats they saw free (named), ask for 1-4 seats best_available (best),\n"+
		"or one rush of each (both), the best-available one reported beside the named one")
	fs.IntVar(&o.Scans, "scans", 20000, "checkin: tickets scanned (4 to an order)")
	fs.IntVar(&o.DupPairs, "duplicates", 200, "checkin: tickets scanned twice at the same instant, at two gates")
	fs.Float64Var(&o.ScanRate, "scan-rate", 500, "checkin: scans offered a second, paced (0: as fast as --clients scanners go)")
	fs.IntVar(&o.Holds, "holds", 5000, "waitlist: one-seat holds of each show (as many seats: sold out)")
	fs.IntVar(&o.Entries, "entries", 5000, "waitlist: entries (count 1) on the list before its holds come due")
	fs.Float64Var(&o.ExpiryRate, "expiry-rate", 1000, "waitlist: holds placed, hence coming due, a second")
	fs.IntVar(&o.Hammer, "hammer", 16, "waitlist: clients placing public orders on the shows' seats while they come free (0: none)")
	fs.Float64Var(&o.HammerRate, "hammer-rate", 1000, "waitlist: public placements a second of the --hammer clients (0: as fast as they go)")
	fs.IntVar(&o.Joins, "joins", 100000, "rush with --queue: joins of the joins phase")
	fs.StringVar(&o.RocketMQ, "rocketmq", orDefault(getenv("SEATFLOW_TEST_ROCKETMQ"), "rocketmq://127.0.0.1:9876"), "real stack: RocketMQ name server URL")

	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		o.Scenario, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, true, nil
		}
		return o, false, err
	}
	rest := fs.Args()
	if o.Scenario == "" && len(rest) > 0 {
		o.Scenario, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return o, false, fmt.Errorf("bench: unexpected arguments %q", rest)
	}
	if o.Modes, err = parseModes(*modes, o.Stack); err != nil {
		return o, false, err
	}
	if *rtt != "" {
		if o.RTT, err = time.ParseDuration(*rtt); err != nil {
			return o, false, fmt.Errorf("bench: --rtt %q: want a duration such as 1ms", *rtt)
		}
		o.Proxied = true
	}
	return o, false, o.validate()
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// parseModes reads --modes; empty means the modes worth measuring on stack.
func parseModes(v, stack string) ([]core.DelayMode, error) {
	if v == "" {
		if stack == StackReal {
			return []core.DelayMode{core.DelayLevels, core.DelayTimer}, nil
		}
		return []core.DelayMode{core.DelayTimer}, nil
	}
	var out []core.DelayMode
	for f := range strings.SplitSeq(v, ",") {
		m := core.DelayMode(strings.TrimSpace(f))
		if m != core.DelayLevels && m != core.DelayTimer {
			return nil, fmt.Errorf("bench: --modes %q: want levels and/or timer", v)
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

func (o Options) validate() error {
	switch o.Scenario {
	case ScenarioPlace, ScenarioExpire, ScenarioPay, ScenarioLimits, ScenarioAll:
	case ScenarioCheckin:
		if o.Scans <= 0 || o.DupPairs < 0 || o.DupPairs > o.Scans || o.ScanRate < 0 {
			return fmt.Errorf("bench: --scans %d, --duplicates %d, --scan-rate %v: want scans > 0, 0 ≤ duplicates ≤ scans, rate ≥ 0",
				o.Scans, o.DupPairs, o.ScanRate)
		}
	case ScenarioWaitlist:
		if o.Holds <= 0 || o.Entries <= 0 || o.Hammer < 0 || o.ExpiryRate <= 0 || o.HammerRate < 0 {
			return fmt.Errorf("bench: --holds %d, --entries %d, --expiry-rate %v, --hammer %d, --hammer-rate %v: "+
				"want holds, entries and expiry rate > 0, hammer and its rate ≥ 0",
				o.Holds, o.Entries, o.ExpiryRate, o.Hammer, o.HammerRate)
		}
	case ScenarioRush:
		if err := o.validateRush(); err != nil {
			return err
		}
	case "":
		return errors.New("bench: name a scenario: place, expire, pay, limits, all, rush, checkin or waitlist")
	default:
		return fmt.Errorf("bench: unknown scenario %q: want place, expire, pay, limits, all, rush, checkin or waitlist", o.Scenario)
	}
	if o.Stack != StackEmbedded && o.Stack != StackReal {
		return fmt.Errorf("bench: --stack %q: want embedded or real", o.Stack)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"clients", o.Clients}, {"rows", o.Rows}, {"cols", o.Cols}, {"rounds", o.Rounds},
		{"pay-orders", o.PayOrders}, {"dup-every", o.DupEvery}, {"orders", o.Orders}} {
		if c.v <= 0 {
			return fmt.Errorf("bench: --%s %d: must be positive", c.name, c.v)
		}
	}
	if o.DBPool < 0 {
		return fmt.Errorf("bench: --db-pool %d: must not be negative", o.DBPool)
	}
	if o.HoldTTL < 5*time.Second {
		// Shorter holds expire while the burst is still being placed.
		return fmt.Errorf("bench: --ttl %v: must be at least 5s", o.HoldTTL)
	}
	if o.Spread <= 0 || o.LimitTime <= 0 || o.MaxTime <= 0 {
		return fmt.Errorf("bench: --spread, --limit-time and --max-time must be positive")
	}
	if o.CPUProfile != "" && !wants(o, ScenarioPlace, ScenarioPay) && o.Scenario != ScenarioRush && o.Scenario != ScenarioWaitlist {
		return fmt.Errorf("bench: --cpu-profile applies to place, pay, all, rush and waitlist, not %s", o.Scenario)
	}
	if o.ProfileTime < time.Second || o.ProfileTime > o.MaxTime {
		return fmt.Errorf("bench: --profile-time %v: want 1s to --max-time (%v)", o.ProfileTime, o.MaxTime)
	}
	if err := o.validateRTT(); err != nil {
		return err
	}
	if o.Stack == StackReal {
		return o.checkLoopback()
	}
	return nil
}

// maxRTT keeps --rtt to what a data centre or a region looks like: beyond
// it, the 64 clients' phases mostly measure waiting.
const maxRTT = time.Second

func (o Options) validateRTT() error {
	if !o.Proxied {
		return nil
	}
	if o.Stack != StackReal {
		// The embedded stack's stores live inside the server: no connection to delay.
		return fmt.Errorf("bench: --rtt needs --stack real")
	}
	if o.Scenario != ScenarioPlace && o.Scenario != ScenarioPay && o.Scenario != ScenarioLimits {
		// expire's raw queue and servers connect on their own; not proxied.
		return fmt.Errorf("bench: --rtt applies to place, pay and limits, not %s", o.Scenario)
	}
	if o.RTT < 0 || o.RTT > maxRTT {
		return fmt.Errorf("bench: --rtt %v: want 0 to %v", o.RTT, maxRTT)
	}
	return nil
}

// stackLabel names the stack in the report, with the added round trip
// when the stores are behind the delay proxies.
func (o Options) stackLabel() string {
	if !o.Proxied {
		return o.Stack
	}
	return fmt.Sprintf("%s +%v rtt", o.Stack, o.RTT)
}

// checkLoopback keeps every load on this machine: the bench hammers what it
// is pointed at, and a shared server is never the target.
func (o Options) checkLoopback() error {
	cfg, err := mysql.ParseDSN(strings.TrimPrefix(o.MySQL, "mysql://"))
	if err != nil || !strings.HasPrefix(o.MySQL, "mysql://") {
		return fmt.Errorf("bench: --mysql: want mysql://user:pass@tcp(127.0.0.1:3306)/db")
	}
	if err := loopback(cfg.Addr); err != nil {
		return fmt.Errorf("bench: --mysql: %w", err)
	}
	u, err := url.Parse(o.Redis)
	if err != nil || u.Scheme != "redis" {
		return fmt.Errorf("bench: --redis: want redis://127.0.0.1:6379/0")
	}
	if err := loopback(u.Host); err != nil {
		return fmt.Errorf("bench: --redis: %w", err)
	}
	mq, err := rocketmq.ParseURL(o.RocketMQ)
	if err != nil {
		return fmt.Errorf("bench: --rocketmq: %w", err)
	}
	for _, ns := range mq.NameServers {
		if err := loopback(ns); err != nil {
			return fmt.Errorf("bench: --rocketmq: %w", err)
		}
	}
	return nil
}

// loopback accepts host:port only on 127.0.0.0/8, ::1 or localhost.
func loopback(hostport string) error {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("address %q: want host:port", hostport)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("address %q is not loopback: the bench only targets 127.0.0.1", hostport)
}
