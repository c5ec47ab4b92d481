package clustertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
	"seatflow/core/testenv"
)

// clusterFaultsVar enables TestClusterFaults: it kills stores of the
// multi-host topology, so it runs alone (make test-multihost).
const clusterFaultsVar = "SEATFLOW_TEST_CLUSTER_FAULTS"

// Phases of a fault run: load with everything up before the fault, 503s
// still accepted for faultSettle after the topology is whole again, load
// for at least faultAfter more, and every phase at least faultPhase long.
const (
	faultBefore = 3 * time.Second
	faultSettle = 3 * time.Second
	faultAfter  = 3 * time.Second
	faultPhase  = 15 * time.Second
	// faultBrokerDown is how long the killed broker stays down before it
	// is started again (its boot adds several seconds more).
	faultBrokerDown = 5 * time.Second
	// faultPartition is how long an instance is cut from the database.
	faultPartition = 10 * time.Second
)

// storeFault is one fault of the topology, caused and ended by do on the
// test's goroutine; do returns once the topology is whole again, and may
// return a check to run once every hold of the phase has ended.
type storeFault struct {
	name string
	do   func(t *testing.T, s *stack, tp *testenv.Topology, ins []*instance) (after func())
}

// Three `seatflow serve` instances on the app hosts of the multi-host
// topology (no store on 127.0.0.1) under a mixed load while, one at a time,
// a store fails: the Redis Cluster master of the show's seats is killed,
// a RocketMQ broker is killed and started again, one instance is cut from
// MariaDB for 10 s; then, on instances started afresh on Sentinel, the
// Sentinel master is killed. SeatFlow takes one Redis URL per instance, so
// the Sentinel fault gets a phase of its own rather than a second full run:
// the broker and database faults do not depend on the Redis flavour, and
// the whole test must stay within a few minutes of CI. Each phase keeps the
// load on through its fault (at least 15 s, 60 s in all; longer while the
// broker boots again), then stops it, waits
// for every hold to end, runs reconcile and checks DESIGN.md's invariants
// seat by seat: the check needs a quiet stack, which is why the load pauses
// between faults. Every answer is a success, a 4xx, or, during a fault, 503
// store_unavailable; never a 500. Per fault it prints how long placements
// failed and how late the holds it touched were ended.
func TestClusterFaults(t *testing.T) {
	if os.Getenv(clusterFaultsVar) != "1" {
		t.Skipf("kills stores of the multi-host topology: set %s=1 to run it alone (make test-multihost does)", clusterFaultsVar)
	}
	tp := testenv.NewTopology(t)
	// The fresh databases go on the topology's MariaDB, which the app
	// hosts reach (127.0.0.1 in their namespaces is their own).
	t.Setenv(testenv.MySQLVar, tp.MySQL)
	bin := buildSeatflow(t)
	start := time.Now()

	runFaultPhases(t, tp, bin, "Redis Cluster", tp.RedisCluster, []storeFault{
		{name: "Redis Cluster master killed", do: killClusterMaster},
		{name: "RocketMQ broker bk1 killed and restarted", do: restartBroker},
		{name: "instance 1 cut from the database for 10s", do: partitionFromDB},
	})
	runFaultPhases(t, tp, bin, "Sentinel", tp.RedisSentinel, []storeFault{
		{name: "Sentinel master killed", do: killSentinelMaster},
	})
	t.Logf("all faults in %v", time.Since(start).Round(time.Second))
}

// runFaultPhases starts a stack on redisURL and three instances on the app
// hosts, runs one phase per fault, and stops the instances (SIGTERM: each
// must exit 0 in time).
func runFaultPhases(t *testing.T, tp *testenv.Topology, bin, redisName, redisURL string, faults []storeFault) {
	// 2,000 seats and 400 users of at most 6 each: the phases sell a part
	// of them, so placements still reach the database at the last fault (a
	// sold-out show or a user at the limit is refused by Redis alone).
	s := newStack(t, stacktest.FreshMySQL(t, tp.MySQL), redisURL, tp.RocketMQ, 40, 50, map[string]string{
		"SEATFLOW_ROCKETMQ_CLUSTER":      tp.RocketMQCluster,
		"SEATFLOW_HOLD_TTL":              "5s", // one hop of level 2
		"SEATFLOW_DELAY_MODE":            "levels",
		"SEATFLOW_PURCHASE_LIMIT":        "6",
		"SEATFLOW_REQUEST_TIMEOUT":       "3s", // a store that hangs costs 3 s, then 503
		"SEATFLOW_SHUTDOWN_TIMEOUT":      clusterShutdown.String(),
		"SEATFLOW_RECONCILE_SWEEP_EVERY": clusterSweepEvery.String(),
		"SEATFLOW_RECONCILE_GRACE":       "5s",
	})
	var ins []*instance
	for i, ip := range tp.AppAddrs {
		host := fmt.Sprintf("app%d", i+1)
		ins = append(ins, s.startInstanceAt(fmt.Sprintf("seatflow-%d", i+1), bin, net.JoinHostPort(ip, "8080"),
			func(name string, args ...string) *exec.Cmd {
				return tp.Command(context.Background(), host, name, args...)
			}))
	}
	t.Logf("%s: 3 instances on %s, show %d", redisName, strings.Join(tp.AppAddrs, ", "), s.show.ID)
	for _, f := range faults {
		runFaultPhase(t, s, tp, bin, ins, f)
	}
	s.latenessReport(clusterLateBound)
	for _, in := range ins {
		if _, err := in.terminate(clusterShutdown + 10*time.Second); err != nil {
			t.Errorf("%s: SIGTERM at the end: %v", in.name, err)
		}
	}
}

// runFaultPhase keeps the load on every instance while f happens, then
// checks the quiet stack and prints the fault's figures.
func runFaultPhase(t *testing.T, s *stack, tp *testenv.Topology, bin string, ins []*instance, f storeFault) {
	t.Logf("==== %s", f.name)
	tl := newTally()
	var window atomic.Bool
	stop, loadDone := make(chan struct{}), make(chan struct{})
	phaseStart := time.Now()
	go func() {
		defer close(loadDone)
		runLoad(t, s, loadConfig{workers: 6, duration: 10 * time.Minute, stop: stop, users: 400, maxSeats: 3,
			allow503: window.Load}, func() []string { return []string{ins[0].base(), ins[1].base(), ins[2].base()} }, tl)
	}()
	time.Sleep(faultBefore)
	window.Store(true)
	began := time.Now()
	after := f.do(t, s, tp, ins)
	whole := time.Now()
	c := newAPIClient()
	for _, in := range ins {
		// Fails the test when an instance never serves again.
		took := waitServing(t, c, s, in)
		t.Logf("%s serving %v after the topology was whole again", in.name, took.Round(time.Millisecond))
	}
	time.Sleep(max(0, faultSettle-time.Since(whole)))
	window.Store(false)
	time.Sleep(max(faultAfter, faultPhase-time.Since(phaseStart)))
	close(stop)
	<-loadDone
	tl.report(t)
	if len(tl.bad) > 0 {
		t.Errorf("%s: answers no client may get:\n  %s", f.name, strings.Join(tl.bad, "\n  "))
	}
	if len(tl.orders) < 50 {
		t.Errorf("%s: only %d orders placed: the load did not run", f.name, len(tl.orders))
	}

	// Every hold ends by itself, also those whose timeout message sat on a
	// dead broker or was never sent: the sweep, within one interval.
	s.waitNoPending(clusterLateBound + 30*time.Second)
	runStart := time.Now()
	out, err := s.runTool(bin, "reconcile", "--once")
	t.Logf("seatflow reconcile --once:\n%s", out)
	if err != nil {
		t.Errorf("%s: reconcile --once: %v", f.name, err)
	}
	s.checkInvariants(runStart, tl)
	faultFigures(t, s, tl, f.name, began, whole)
	if after != nil {
		after()
	}
}

// faultFigures prints how long placements failed during the phase (first to
// last failed placement, and how many) and how late the holds alive during
// the fault were ended past their expire_at, per path.
func faultFigures(t *testing.T, s *stack, tl *tally, name string, began, whole time.Time) {
	t.Helper()
	tl.mu.Lock()
	failed := slices.Clone(tl.placeFailed)
	tl.mu.Unlock()
	placements := 0
	for _, byStatus := range tl.statuses["place"] {
		placements += byStatus
	}
	placements += tl.noAnswer["place"]
	spell := "none failed"
	if len(failed) > 0 {
		spell = fmt.Sprintf("failed from %v to %v after the fault began (%v), %d of %d placements",
			failed[0].Sub(began).Round(time.Millisecond), failed[len(failed)-1].Sub(began).Round(time.Millisecond),
			failed[len(failed)-1].Sub(failed[0]).Round(time.Millisecond), len(failed), placements)
	} else {
		spell += fmt.Sprintf(" of %d placements", placements)
	}

	var rs []struct {
		ExpireAt int64  `db:"expire_at"`
		ClosedAt int64  `db:"closed_at"`
		Reason   string `db:"cancel_reason"`
		Actor    string `db:"cancel_actor"`
	}
	// The holds alive at some moment of the fault, ended by their expiry.
	if err := s.db.X().SelectContext(t.Context(), &rs, `SELECT expire_at, closed_at, cancel_reason, cancel_actor
 FROM order_info WHERE status = 2 AND cancel_reason IN (?, ?) AND created_at <= ? AND expire_at >= ?`,
		core.ReasonTimeout, core.ReasonReconcile, whole.UnixMilli(), began.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	var all []time.Duration
	byPath := map[string][]time.Duration{}
	for _, r := range rs {
		late := time.Duration(r.ClosedAt-r.ExpireAt) * time.Millisecond
		all = append(all, late)
		byPath[r.Reason+"/"+r.Actor] = append(byPath[r.Reason+"/"+r.Actor], late)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "FAULT %s: lasted %v (topology whole again)\n", name, whole.Sub(began).Round(time.Millisecond))
	fmt.Fprintf(&b, "  placements: %s\n", spell)
	fmt.Fprintf(&b, "  %d holds alive during the fault ended by expiry, lateness past expire_at: %s\n", len(all), summary(all))
	for _, p := range slices.Sorted(maps.Keys(byPath)) {
		fmt.Fprintf(&b, "    %-22s %4d: %s\n", p, len(byPath[p]), summary(byPath[p]))
	}
	t.Log(b.String())
}

// killClusterMaster SIGKILLs the Redis Cluster master of the show's seats,
// waits until every instance places orders again (its replica took over),
// and starts it again (it rejoins as a replica).
func killClusterMaster(t *testing.T, s *stack, tp *testenv.Topology, ins []*instance) func() {
	master := testenv.MasterFor(t, s.redis, seats.KeySeats(s.show.ID))
	host, ok := tp.HostOf(master.Options().Addr)
	if !ok {
		t.Fatalf("master %s of the show's seats is no host of the topology", master.Options().Addr)
	}
	tp.Kill(host)
	t.Logf("killed %s (%s), master of the show's seats", host, master.Options().Addr)
	waitAllServing(t, s, ins)
	tp.Start(host)
	return nil
}

// killSentinelMaster SIGKILLs the Sentinel group's master, waits until
// every instance places orders again (the Sentinels promoted the replica),
// starts it again and waits until it is back as a replica.
func killSentinelMaster(t *testing.T, s *stack, tp *testenv.Topology, ins []*instance) func() {
	master := testenv.MasterFor(t, s.redis, seats.KeySeats(s.show.ID))
	info, err := master.ClientInfo(t.Context()).Result()
	if err != nil {
		t.Fatalf("CLIENT INFO on the Sentinel master: %v", err)
	}
	host, ok := tp.HostOf(info.LAddr)
	if !ok {
		t.Fatalf("Sentinel master %s is no host of the topology", info.LAddr)
	}
	tp.Kill(host)
	t.Logf("killed %s (%s), the Sentinel master", host, info.LAddr)
	waitAllServing(t, s, ins)
	tp.Start(host)
	// The Sentinels turn the old master into a replica of the new one: the
	// group is whole again, ready for the next failover.
	back := redis.NewClient(&redis.Options{Addr: info.LAddr, DisableIdentity: true, MaxRetries: -1})
	defer back.Close()
	var role []any
	if err := testenv.Eventually(60*time.Second, func() error {
		role, err = back.Do(t.Context(), "ROLE").Slice()
		if err == nil && (len(role) == 0 || role[0] != "slave") {
			return errors.New("not a replica yet")
		}
		return err
	}); err != nil {
		t.Errorf("old master %s not back as a replica: ROLE %v: %v", host, role, err)
	}
	return nil
}

// restartBroker SIGKILLs broker-a while placements go on (their timeout
// messages go to broker-b), and starts it again on its store after
// faultBrokerDown: the delayed messages it held are delivered then, or
// their holds were ended by the sweep. Its check: holds placed while
// broker-a was down were ended by their timeout messages, so sends reached
// broker-b.
func restartBroker(t *testing.T, s *stack, tp *testenv.Topology, ins []*instance) func() {
	tp.Kill("bk1")
	killed := time.Now()
	time.Sleep(faultBrokerDown)
	restarting := time.Now()
	tp.Start("bk1")
	return func() {
		var ended struct {
			ByTimeout int `db:"by_timeout"`
			BySweep   int `db:"by_sweep"`
		}
		if err := s.db.X().GetContext(t.Context(), &ended, `SELECT
 COALESCE(SUM(cancel_reason = ?), 0) AS by_timeout, COALESCE(SUM(cancel_reason = ?), 0) AS by_sweep
 FROM order_info WHERE status = 2 AND created_at BETWEEN ? AND ?`,
			core.ReasonTimeout, core.ReasonReconcile, killed.UnixMilli(), restarting.UnixMilli()); err != nil {
			t.Fatal(err)
		}
		t.Logf("holds placed while bk1 was down: %d ended by their timeout message, %d by the sweep",
			ended.ByTimeout, ended.BySweep)
		if ended.ByTimeout == 0 {
			t.Error("no hold placed while bk1 was down was ended by its timeout message: sends did not go to bk2")
		}
	}
}

// partitionFromDB drops all traffic between instance 1's host and MariaDB
// for faultPartition, then heals it.
func partitionFromDB(t *testing.T, s *stack, tp *testenv.Topology, ins []*instance) func() {
	tp.Partition("app1", "db")
	time.Sleep(faultPartition)
	tp.Heal("app1")
	return nil
}

// waitAllServing waits until every instance takes an order again.
func waitAllServing(t *testing.T, s *stack, ins []*instance) {
	t.Helper()
	c := newAPIClient()
	for _, in := range ins {
		waitServing(t, c, s, in)
	}
}
