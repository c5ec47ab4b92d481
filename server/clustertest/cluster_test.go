package clustertest

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"seatflow/core/access"
	"seatflow/core/stacktest"
	"seatflow/core/testenv"
)

// Settings of the cluster test. Levels mode with a 5 s hold: one hop at
// level 2 (5 s), so the whole chain runs through the broker many times.
const (
	clusterLoad       = 20 * time.Second
	clusterKillAt     = 7 * time.Second  // instance 1: SIGKILL ...
	clusterRestartAt  = 10 * time.Second // ... and started again
	clusterTermAt     = 14 * time.Second // instance 2: SIGTERM, started again at once
	clusterShutdown   = 10 * time.Second // SEATFLOW_SHUTDOWN_TIMEOUT
	clusterSweepEvery = 5 * time.Second
	// clusterLateBound is how late an expired order may end: a timeout is
	// late by about the delay slack, but an order whose message died with
	// the killed instance (placed, not yet sent; or consumed, not yet
	// acked, then redelivered after the group's rebalance) waits for the
	// sweep, and the sweep for the reconcile lease the killed instance may
	// have held (30 s) — the worst case DESIGN.md allows is one interval.
	clusterLateBound = 45 * time.Second
)

// Three `seatflow serve` processes share one MariaDB database, Redis and a
// RocketMQ topic with one consumer group. Under a load of placements,
// payments and cancels spread over all three, one is SIGKILLed and started
// again and another is stopped with SIGTERM (it must exit 0 in time) and
// started again. After the load, every hold has ended, a reconcile run
// finds the stack consistent, and DESIGN.md's invariants hold.
func TestCluster(t *testing.T) {
	mysqlURL, redisURL, mqURL := testenv.MySQL(t), testenv.Redis(t), testenv.RocketMQ(t)
	bin := buildSeatflow(t)
	s := newStack(t, stacktest.FreshMySQL(t, mysqlURL), redisURL, mqURL, 20, 30, map[string]string{
		"SEATFLOW_HOLD_TTL":              "5s",
		"SEATFLOW_DELAY_MODE":            "levels",
		"SEATFLOW_PURCHASE_LIMIT":        "6",
		"SEATFLOW_SHUTDOWN_TIMEOUT":      clusterShutdown.String(),
		"SEATFLOW_RECONCILE_SWEEP_EVERY": clusterSweepEvery.String(),
		// Stale Redis locks of the killed instance are older than this by
		// the time the final run looks.
		"SEATFLOW_RECONCILE_GRACE": "5s",
	})
	var ins []*instance
	for i := range 3 {
		ins = append(ins, s.startInstance(fmt.Sprintf("seatflow-%d", i+1), bin))
	}
	checkSeatRelay(t, s, ins[0], ins[1])

	tl := newTally()
	bases := func() []string { return []string{ins[0].base(), ins[1].base(), ins[2].base()} }
	var chaos sync.WaitGroup
	chaos.Add(1)
	go func() {
		defer chaos.Done()
		start := time.Now()
		time.Sleep(clusterKillAt)
		if err := ins[0].kill(); err != nil {
			t.Error(err)
			return
		}
		t.Logf("%v: %s killed (SIGKILL)", time.Since(start).Round(time.Millisecond), ins[0].name)
		time.Sleep(clusterRestartAt - clusterKillAt)
		if err := ins[0].start(); err != nil {
			t.Errorf("restart after SIGKILL: %v", err)
			return
		}
		t.Logf("%v: %s started again and ready", time.Since(start).Round(time.Millisecond), ins[0].name)
		time.Sleep(max(0, clusterTermAt-time.Since(start)))
		took, err := ins[1].terminate(clusterShutdown + 10*time.Second)
		t.Logf("%v: %s stopped by SIGTERM in %v (exit %d)", time.Since(start).Round(time.Millisecond), ins[1].name,
			took.Round(time.Millisecond), exitCode(err))
		if err != nil {
			t.Errorf("%s: graceful shutdown under load: %v", ins[1].name, err)
		}
		if err := ins[1].start(); err != nil {
			t.Errorf("restart after SIGTERM: %v", err)
			return
		}
		t.Logf("%v: %s started again and ready", time.Since(start).Round(time.Millisecond), ins[1].name)
	}()
	runLoad(t, s, loadConfig{workers: 6, duration: clusterLoad, users: 80, maxSeats: 3}, bases, tl)
	chaos.Wait()
	tl.report(t)
	if len(tl.bad) > 0 {
		t.Errorf("answers no client may get:\n  %s", strings.Join(tl.bad, "\n  "))
	}
	if len(tl.orders) < 100 {
		t.Errorf("only %d orders placed: the load did not run", len(tl.orders))
	}

	// Every hold ends by itself: timeout messages on whichever instance the
	// group gave them to, or the sweep for those that died with instance 1.
	s.waitNoPending(clusterLateBound + 30*time.Second)

	// The consumer group spread the timeout messages: every instance
	// handled some (counted since its last start).
	handledBy := 0
	for _, in := range ins {
		n, err := in.metric("seatflow_timeout_messages_total")
		if err != nil {
			t.Errorf("%s metrics: %v", in.name, err)
		}
		t.Logf("%s handled %v timeout messages since its last start", in.name, n)
		if n > 0 {
			handledBy++
		}
	}
	if handledBy < 2 {
		t.Errorf("timeout messages handled by %d of 3 instances: the group did not spread them", handledBy)
	}

	runStart := time.Now()
	out, err := s.runTool(bin, "reconcile", "--once")
	t.Logf("seatflow reconcile --once:\n%s", out)
	if err != nil {
		t.Errorf("reconcile --once: %v", err)
	}
	s.checkInvariants(runStart, tl)
	s.latenessReport(clusterLateBound)

	for _, in := range ins {
		if _, err := in.terminate(clusterShutdown + 10*time.Second); err != nil {
			t.Errorf("%s: SIGTERM at the end: %v", in.name, err)
		}
	}
}

// checkSeatRelay shows that a seat change made through one instance reaches
// a browser watching the seat map on another (Redis pub/sub).
func checkSeatRelay(t *testing.T, s *stack, placeOn, watchOn *instance) {
	t.Helper()
	const password = "relay-password-0123456789"
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.CreateStaff(t.Context(), access.Staff{Username: "relay", Role: access.RoleBoxOffice,
		CreatedAt: time.Now()}, string(hash)); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(watchOn.base() + "/console/login")
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, resp)
	m := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("login form without a token: %.300s", page)
	}
	resp, err = browser.PostForm(watchOn.base()+"/console/login",
		url.Values{"_csrf": {m[1]}, "username": {"relay"}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login on %s: status %d", watchOn.name, resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/console/shows/%d/events", watchOn.base(), s.show.ID), nil)
	req.Header.Set("Accept", "text/event-stream")
	stream := &http.Client{Jar: jar} // no client timeout: the stream lives until cancel
	resp, err = stream.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("seat events on %s: status %d", watchOn.name, resp.StatusCode)
	}
	events := make(chan string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev strings.Builder
		for sc.Scan() {
			if sc.Text() == "" {
				events <- ev.String()
				ev.Reset()
				continue
			}
			ev.WriteString(sc.Text())
			ev.WriteString("\n")
		}
	}()
	if first := <-events; !strings.Contains(first, "seat-grid") {
		t.Fatalf("first event is not the grid: %.200s", first)
	}

	seat := fmt.Sprintf("%s-%d", "T", s.show.Cols) // row 20, the last seat
	c := newAPIClient()
	res := c.place(placeOn.base(), 9999, s.show.ID, []string{seat})
	if res.status != http.StatusCreated {
		t.Fatalf("place on %s: %d %s", placeOn.name, res.status, res.code)
	}
	want := fmt.Sprintf(`id="seat-%s" class="locked"`, seat)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("seat stream on %s ended before the change placed on %s arrived", watchOn.name, placeOn.name)
			}
			if strings.Contains(ev, want) {
				t.Logf("seat relay: a hold placed on %s reached a seat map on %s", placeOn.name, watchOn.name)
				if res := c.cancel(placeOn.base(), res.body["order_no"].(string), 9999); res.status != http.StatusOK {
					t.Errorf("cancel the relay order: %d %s", res.status, res.code)
				}
				return
			}
		case <-ctx.Done():
			t.Fatalf("the hold placed on %s never reached the seat map on %s", placeOn.name, watchOn.name)
		}
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteString("\n")
	}
	return b.String()
}
