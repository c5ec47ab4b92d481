package clustertest

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/testenv"
	"seatflow/server"
)

// outage is one backing service stopped for a while and started again.
type outage struct {
	name        string
	stop, start func() error
	down        time.Duration
	// apiFails says whether the API cannot work without the service (503
	// expected); without the broker orders are still taken.
	apiFails bool
}

// Phases of an outage run.
const (
	outageGap    = 3 * time.Second // load with everything up, before, between and after outages
	outageDown   = 4 * time.Second
	outageSettle = 3 * time.Second // after a restart, 503s are still accepted for this long
)

// runOutages keeps a small load on in while each outage happens in turn.
// Every answer must be a success, a 4xx, or (while a service is down, and
// for outageSettle after it returns) 503 store_unavailable with
// Retry-After; never a 500. While the service is down /readyz says 503;
// after it returns, the same process serves again without a restart. It
// returns the load's tally and when the last service was back.
func runOutages(t *testing.T, s *stack, in *instance, outs []outage) (*tally, time.Time) {
	t.Helper()
	tl := newTally()
	var window atomic.Bool
	stop, loadDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(loadDone)
		runLoad(t, s, loadConfig{workers: 3, duration: 10 * time.Minute, stop: stop, users: 40, maxSeats: 2,
			allow503: window.Load}, func() []string { return []string{in.base()} }, tl)
	}()
	var back time.Time
	c := newAPIClient()
	time.Sleep(outageGap)
	for _, o := range outs {
		before := tl.count503()
		window.Store(true)
		if err := o.stop(); err != nil {
			t.Fatalf("stop %s: %v", o.name, err)
		}
		stopped := time.Now()
		time.Sleep(o.down / 2)
		if r := c.do("readyz", "GET", in.base()+"/readyz", nil, nil); r.status != http.StatusServiceUnavailable {
			t.Errorf("%s down: /readyz %d %s, want 503", o.name, r.status, r.code)
		}
		time.Sleep(o.down - time.Since(stopped))
		if err := o.start(); err != nil {
			t.Fatalf("start %s: %v", o.name, err)
		}
		started := time.Now()
		back = started
		recovered := waitServing(t, c, s, in)
		t.Logf("%s: down %v, %d answers were 503; serving again %v after it returned",
			o.name, started.Sub(stopped).Round(time.Millisecond), tl.count503()-before, recovered.Round(time.Millisecond))
		if o.apiFails && tl.count503() == before {
			t.Errorf("%s was down %v and no request got 503: was it down?", o.name, o.down)
		}
		time.Sleep(max(0, outageSettle-time.Since(started)))
		window.Store(false)
		time.Sleep(outageGap)
	}
	// Holds placed after the last service returned live their whole life
	// on a healthy stack: long enough for a timeout chain to run.
	time.Sleep(outageGap)
	close(stop)
	<-loadDone
	tl.report(t)
	if len(tl.bad) > 0 {
		t.Errorf("answers no client may get:\n  %s", strings.Join(tl.bad, "\n  "))
	}
	return tl, back
}

// waitServing waits until the instance is ready and takes an order again
// (a seat conflict or the purchase limit count: the stores answered), and
// returns how long that took.
func waitServing(t *testing.T, c *apiClient, s *stack, in *instance) time.Duration {
	t.Helper()
	start := time.Now()
	seat := fmt.Sprintf("A-%d", s.show.Cols)
	for {
		ready := c.do("readyz", "GET", in.base()+"/readyz", nil, nil)
		if ready.status == http.StatusOK {
			r := c.place(in.base(), 777, s.show.ID, []string{seat})
			switch r.status {
			case http.StatusCreated:
				c.cancel(in.base(), r.body["order_no"].(string), 777)
				return time.Since(start)
			case http.StatusConflict, http.StatusUnprocessableEntity:
				return time.Since(start)
			}
		}
		if time.Since(start) > 60*time.Second {
			t.Fatalf("not serving 60s after the service returned: readyz %d %s", ready.status, ready.code)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// finishOutages waits for every hold to end, runs reconcile, and checks
// that nothing was lost: every accepted order and answered payment is in
// the database, and DESIGN.md's invariants hold.
func finishOutages(t *testing.T, s *stack, bin string, tl *tally, lateBound time.Duration) {
	t.Helper()
	s.waitNoPending(lateBound + 30*time.Second)
	runStart := time.Now()
	out, err := s.runTool(bin, "reconcile", "--once")
	t.Logf("seatflow reconcile --once:\n%s", out)
	if err != nil {
		t.Errorf("reconcile --once: %v", err)
	}
	s.checkInvariants(runStart, tl)
	s.latenessReport(lateBound)
}

// outageEnv are the settings of the outage tests: short holds, a quick
// sweep (it ends the holds whose timeout could not be sent), requests cut
// after 3 s.
var outageEnv = map[string]string{
	"SEATFLOW_HOLD_TTL":              "5s", // one hop of level 2
	"SEATFLOW_REQUEST_TIMEOUT":       "3s",
	"SEATFLOW_RECONCILE_SWEEP_EVERY": "3s",
	"SEATFLOW_RECONCILE_GRACE":       "3s",
}

// Redis and MariaDB (private instances: the shared ones stay up for the
// other tests) each stopped and started under load.
func TestStoreOutage(t *testing.T) {
	mqURL := testenv.RocketMQ(t)
	testenv.MySQL(t) // the private instances need the same packages installed
	ps := startPrivateServices(t)
	bin := buildSeatflow(t)
	s := newStack(t, ps.mysqlURL, ps.redisURL, mqURL, 10, 20, outageEnv)
	in := s.startInstance("seatflow", bin)
	tl, _ := runOutages(t, s, in, []outage{
		{name: "redis", stop: func() error { return ps.run("stop", "redis") },
			start: func() error { return ps.run("start", "redis") }, down: outageDown, apiFails: true},
		{name: "mariadb", stop: func() error { return ps.run("stop", "mariadb") },
			start: func() error { return ps.run("start", "mariadb") }, down: outageDown, apiFails: true},
	})
	// The seat relay subscribed again to the Redis that came back: live
	// seat maps keep working without a restart.
	if n, err := s.redis.PubSubNumSub(t.Context(), server.SeatChannel(0)).Result(); err != nil || n[server.SeatChannel(0)] != 1 {
		t.Errorf("subscribers of %s after the Redis restart: %v (%v), want the instance's relay", server.SeatChannel(0), n, err)
	}
	// Redis came back empty (no persistence): reconcile restores what the
	// DB says is sold, and the holds of that time end by themselves.
	finishOutages(t, s, bin, tl, 30*time.Second)
}

// brokerOutageVar enables TestBrokerOutage.
const brokerOutageVar = "SEATFLOW_TEST_BROKER_OUTAGE"

// The shared RocketMQ broker stopped and started under load (its store is
// kept, as in a broker restart). Orders are still taken while it is down;
// the holds whose timeout could not be sent are ended by the sweep. It
// stops the broker every other RocketMQ test uses, so it runs only when
// SEATFLOW_TEST_BROKER_OUTAGE=1: `make test` runs it alone, after the
// suite. It always leaves the broker running.
func TestBrokerOutage(t *testing.T) {
	if os.Getenv(brokerOutageVar) != "1" {
		t.Skipf("stops the shared broker: set %s=1 to run it alone (make test does, after the suite)", brokerOutageVar)
	}
	mysqlURL, redisURL, mqURL := testenv.MySQL(t), testenv.Redis(t), testenv.RocketMQ(t)
	shared := services{t: t, script: servicesScript(t)}
	t.Cleanup(func() {
		// Idempotent: "already running" when the test restarted it.
		if err := shared.run("start", "rocketmq-broker"); err != nil {
			t.Errorf("restore the broker: %v", err)
		}
	})
	bin := buildSeatflow(t)
	s := newStack(t, stacktest.FreshMySQL(t, mysqlURL), redisURL, mqURL, 10, 20, outageEnv)
	in := s.startInstance("seatflow", bin)
	tl, back := runOutages(t, s, in, []outage{
		{name: "rocketmq-broker", stop: func() error { return shared.run("stop", "rocketmq-broker") },
			start: func() error { return shared.run("start", "rocketmq-broker") }, down: outageDown},
	})
	// A hold placed just before the broker stopped waits for its message
	// (kept in the broker's store) or the sweep once the broker is back.
	finishOutages(t, s, bin, tl, 2*time.Minute)
	// The same process's producer and consumer work again: holds placed
	// after the broker returned were ended by their timeout messages.
	var byTimeout int
	if err := s.db.X().Get(&byTimeout, `SELECT COUNT(*) FROM order_info WHERE created_at > ? AND cancel_reason = ?`,
		back.UnixMilli(), core.ReasonTimeout); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d holds placed after the broker returned were ended by their timeout message", byTimeout)
	if byTimeout == 0 {
		t.Error("no hold placed after the broker returned was ended by its timeout message")
	}
}
