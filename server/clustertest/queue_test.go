package clustertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core/admission"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
	"seatflow/core/store"
	"seatflow/core/testenv"
)

// The waiting room across instances and failures (issue 29): whole
// `seatflow serve` processes share one queue in the seat store's Redis and
// one admission key, so whichever instance a buyer reaches tells the same
// story, and an admission signed by one places on another.

// queueEnv are the settings of a queue test's instances: one admission key
// for all, a fast tick and a fixed admission rate (rate a second per show
// and instance), so the sale lasts long enough to kill an instance in it.
func queueEnv(rate int) map[string]string {
	r := strconv.Itoa(rate)
	return map[string]string{
		"SEATFLOW_ADMISSION_KEY":  admission.NewKey(),
		"SEATFLOW_QUEUE_TICK":     "100ms",
		"SEATFLOW_QUEUE_MIN_RATE": r, "SEATFLOW_QUEUE_MAX_RATE": r, "SEATFLOW_QUEUE_INITIAL_RATE": r,
	}
}

// cleanQueue removes the show's queue keys when the test ends (the stack
// removes its seat keys).
func (s *stack) cleanQueue() {
	s.t.Cleanup(func() {
		if err := admission.NewRedis(s.redis).Delete(context.Background(), s.show.ID); err != nil {
			s.t.Logf("delete the queue of show %d: %v", s.show.ID, err)
		}
	})
}

// seatName is the seat at index i of the stack's show, row by row.
func (s *stack) seatName(i int) string {
	return fmt.Sprintf("%s-%d", store.RowName(1+i/s.show.Cols), 1+i%s.show.Cols)
}

func (c *apiClient) putQueue(base string, show int64, settings map[string]any) call {
	b, _ := json.Marshal(settings)
	return c.do("queue put", "PUT", fmt.Sprintf("%s/api/v1/shows/%d/queue", base, show), b, nil)
}

func (c *apiClient) getQueue(base string, show int64) call {
	return c.do("queue get", "GET", fmt.Sprintf("%s/api/v1/shows/%d/queue", base, show), nil, nil)
}

func (c *apiClient) join(base string, show, user int64) call {
	b, _ := json.Marshal(map[string]any{"user_id": user})
	return c.do("join", "POST", fmt.Sprintf("%s/api/v1/shows/%d/queue", base, show), b, nil)
}

func (c *apiClient) poll(base, ticket string) call {
	return c.do("poll", "GET", base+"/api/v1/queue/"+ticket, nil, nil)
}

// placeAdmitted places with an admission ("" sends none).
func (c *apiClient) placeAdmitted(base string, user, show int64, seatIDs []string, admission string) call {
	req := map[string]any{"user_id": user, "show_id": show, "seat_ids": seatIDs}
	if admission != "" {
		req["admission"] = admission
	}
	b, _ := json.Marshal(req)
	return c.do("place", "POST", base+"/api/v1/orders", b, nil)
}

// view is a join's or a poll's answer: what must agree across instances
// (poll_after_ms and estimated_wait_ms come from each instance's own
// controller and may differ).
type view struct {
	Ticket, State, Admission, AdmittedUntil string
	Position                                int64
}

func viewOf(c call) view {
	str := func(k string) string { v, _ := c.body[k].(string); return v }
	pos, _ := c.body["position"].(float64)
	return view{Ticket: str("ticket"), State: str("state"), Admission: str("admission"),
		AdmittedUntil: str("admitted_until"), Position: int64(pos)}
}

func num(c call, key string) int64 { v, _ := c.body[key].(float64); return int64(v) }

// queueStatus reads the show's queue through in; it fails the test on
// anything but 200.
func queueStatus(t *testing.T, c *apiClient, in *instance, show int64) call {
	t.Helper()
	res := c.getQueue(in.base(), show)
	if res.status != http.StatusOK {
		t.Fatalf("GET queue on %s: %d %s %v (%v)", in.name, res.status, res.code, res.body, res.err)
	}
	return res
}

// waitQueue waits until the show's queue, read through in, satisfies ok.
func waitQueue(t *testing.T, c *apiClient, in *instance, show int64, what string, ok func(call) bool) call {
	t.Helper()
	var last call
	if err := testenv.Eventually(30*time.Second, func() error {
		if last = c.getQueue(in.base(), show); last.status == http.StatusOK && ok(last) {
			return nil
		}
		return fmt.Errorf("%s: %d %v", what, last.status, last.body)
	}); err != nil {
		t.Fatalf("queue of show %d on %s: %v", show, in.name, err)
	}
	return last
}

// member records a user's joins and what the instances told it.
type member struct {
	user     int64
	home     int // the instance it joins and polls through; it places on the other
	ticket   string
	position int64
}

// joinAll joins users through their home instance; the users for which
// twice is true join at the same instant through the other instance too.
// Every user must get exactly one 201 and one ticket whatever it sent.
func joinAll(t *testing.T, c *apiClient, ins []*instance, show int64, users []int64, twice func(int64) bool, tl *tally) map[int64]*member {
	t.Helper()
	var mu sync.Mutex
	got := map[int64][]call{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, u := range users {
		home := int(u % 2)
		targets := []*instance{ins[home]}
		if twice(u) {
			targets = append(targets, ins[1-home])
		}
		for _, in := range targets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				res := c.join(in.base(), show, u)
				tl.record(res, false)
				mu.Lock()
				got[u] = append(got[u], res)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	members := map[int64]*member{}
	for _, u := range users {
		created, tickets := 0, map[string]bool{}
		for _, res := range got[u] {
			switch res.status {
			case http.StatusCreated:
				created++
			case http.StatusOK:
			default:
				t.Fatalf("user %d join: %d %s %v (%v)", u, res.status, res.code, res.body, res.err)
			}
			tickets[viewOf(res).Ticket] = true
		}
		if created != 1 || len(tickets) != 1 {
			t.Errorf("user %d joined %d times through both instances: %d answers 201, %d tickets (want 1 and 1)",
				u, len(got[u]), created, len(tickets))
		}
		members[u] = &member{user: u, home: int(u % 2), ticket: viewOf(got[u][0]).Ticket, position: viewOf(got[u][0]).Position}
	}
	return members
}

// onePerBuyer checks that each of n buyers has exactly one order for the
// show in the database (user 9999 holds the blocking seat).
func (s *stack) onePerBuyer(n int) {
	s.t.Helper()
	var perUser []int
	if err := s.db.X().Select(&perUser, "SELECT COUNT(*) FROM order_info WHERE show_id = ? AND user_id <> 9999 GROUP BY user_id", s.show.ID); err != nil {
		s.t.Fatal(err)
	}
	if len(perUser) != n || slices.ContainsFunc(perUser, func(k int) bool { return k != 1 }) {
		s.t.Errorf("orders per buyer: %v (%d buyers), want one each of %d", perUser, len(perUser), n)
	}
}

// pollBoth polls a ticket on both instances; the answers must agree.
func pollBoth(t *testing.T, c *apiClient, ins []*instance, m *member, tl *tally) view {
	t.Helper()
	var vs [2]view
	for i, in := range ins {
		res := c.poll(in.base(), m.ticket)
		tl.record(res, false)
		if res.status != http.StatusOK {
			t.Fatalf("user %d poll on %s: %d %s %v", m.user, in.name, res.status, res.code, res.err)
		}
		vs[i] = viewOf(res)
	}
	if vs[0] != vs[1] {
		t.Errorf("user %d: the instances disagree: %s %+v, %s %+v", m.user, ins[0].name, vs[0], ins[1].name, vs[1])
	}
	if vs[0].Ticket != m.ticket {
		t.Errorf("user %d: polled with ticket %s, answered %s", m.user, m.ticket, vs[0].Ticket)
	}
	return vs[0]
}

// Settings of TestQueueInstances.
const (
	qiPre  = 80 // users who join before opens_at
	qiPost = 40 // and after
	qiRate = 8  // admissions a second per instance
)

// Two instances share one waiting room. Buyers join through both (some
// through both at once) before and after opens_at and get one entry each;
// every ticket is answered the same by both; an admission obtained from
// one places on the other, and is refused everywhere once it has placed.
// Mid-sale instance A is SIGKILLed: the buyers it admitted place through
// B, whose loop admits the rest; no position moves. Last, `seatflow queue
// verify` reproduces the published draw.
func TestQueueInstances(t *testing.T) {
	mysqlURL, redisURL, mqURL := testenv.MySQL(t), testenv.Redis(t), testenv.RocketMQ(t)
	bin := buildSeatflow(t)
	s := newStack(t, stacktest.FreshMySQL(t, mysqlURL), redisURL, mqURL, 10, 20, queueEnv(qiRate))
	s.cleanQueue()
	a, b := s.startInstance("seatflow-a", bin), s.startInstance("seatflow-b", bin)
	ins := []*instance{a, b}
	c, tl, show := newAPIClient(), newTally(), s.show.ID
	const n = qiPre + qiPost

	// A seat taken before the queue exists: some buyers try it first, get
	// 409, and retry with the same admission.
	blocked := s.seatName(10*20 - 1)
	if res := c.place(a.base(), 9999, show, []string{blocked}); res.status != http.StatusCreated {
		t.Fatalf("place the blocking order: %d %s", res.status, res.code)
	}

	// The pre-queue: opens_at ahead, admissions paused so every answer
	// below is stable while the instances are compared.
	opensAhead := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	res := c.putQueue(a.base(), show, map[string]any{"enabled": true, "opens_at": opensAhead.Format(time.RFC3339), "paused": true})
	if res.status != http.StatusOK {
		t.Fatalf("PUT queue: %d %s %v", res.status, res.code, res.body)
	}
	seedHash, _ := res.body["seed_hash"].(string)
	if seedHash == "" || res.body["seed"] != nil {
		t.Fatalf("a queue with opens_at publishes its seed hash and not its seed: %v", res.body)
	}
	// B requires an admission once its loop has seen the queue (its
	// controller appears in the answer): from then on an order without
	// one is refused there.
	waitQueue(t, c, b, show, "B's loop has seen the queue", func(r call) bool { return r.body["controller"] != nil })
	for _, in := range ins {
		if res := c.place(in.base(), 1, show, []string{s.seatName(0)}); res.status != http.StatusForbidden || res.code != "admission_required" {
			t.Errorf("order without an admission on %s: %d %s, want 403 admission_required", in.name, res.status, res.code)
		}
	}

	users := func(from, to int64) []int64 {
		var us []int64
		for u := from; u <= to; u++ {
			us = append(us, u)
		}
		return us
	}
	twice := func(u int64) bool { return u%3 == 0 }
	members := joinAll(t, c, ins, show, users(1, qiPre), twice, tl)
	for _, m := range members {
		if v := pollBoth(t, c, ins, m, tl); v.State != "waiting" || v.Position != 0 {
			t.Errorf("user %d before the draw: %+v, want waiting at position 0", m.user, v)
		}
	}

	// Opening: opens_at brought to now (no join races a clock), still
	// paused. Some instance's loop draws the pre-queue and publishes the seed.
	opened := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	paused := func(p bool) map[string]any {
		return map[string]any{"enabled": true, "opens_at": opened, "paused": p}
	}
	if res := c.putQueue(b.base(), show, paused(true)); res.status != http.StatusOK {
		t.Fatalf("PUT queue opens_at now: %d %s", res.status, res.code)
	}
	st := waitQueue(t, c, a, show, "shuffled", func(r call) bool { return r.body["shuffled"] == true })
	seed, _ := st.body["seed"].(string)
	if raw, err := hex.DecodeString(seed); err != nil || fmt.Sprintf("%x", sha256.Sum256(raw)) != seedHash {
		t.Fatalf("published seed %q does not hash to the hash published before the draw, %s", seed, seedHash)
	}

	// After opening: first come, first served. One by one, alternating
	// instances, so each position is the join order.
	for u := int64(qiPre + 1); u <= n; u++ {
		m := joinAll(t, c, ins, show, []int64{u}, func(int64) bool { return false }, tl)[u]
		members[u] = m
		if m.position != u {
			t.Errorf("user %d joined after opening as number %d: position %d", u, u, m.position)
		}
		// Joining again through the other instance: the same ticket.
		if res := c.join(ins[1-m.home].base(), show, u); res.status != http.StatusOK || viewOf(res).Ticket != m.ticket {
			t.Errorf("user %d joins again through %s: %d, ticket %q, want 200 and %q", u, ins[1-m.home].name, res.status, viewOf(res).Ticket, m.ticket)
		}
	}
	var pre []int64
	for _, m := range members {
		v := pollBoth(t, c, ins, m, tl)
		m.position = v.Position
		if v.State != "waiting" {
			t.Errorf("user %d while paused: %s", m.user, v.State)
		}
		if m.user <= qiPre {
			pre = append(pre, v.Position)
		}
	}
	slices.Sort(pre)
	for i, p := range pre {
		if p != int64(i+1) {
			t.Fatalf("pre-queue positions are not 1 to %d: %v", qiPre, pre)
		}
	}
	if st := queueStatus(t, c, b, show); num(st, "joined") != n || num(st, "pre_joined") != qiPre || num(st, "admitted") != 0 {
		t.Fatalf("queue after the joins: %v, want %d joined, %d pre-joined, 0 admitted", st.body, n, qiPre)
	}
	if t.Failed() {
		t.FailNow()
	}

	// The sale. Each buyer polls its home instance until admitted, checks
	// the other says the same, and places on the other one; then its
	// admission must be refused on its home instance. Some buyers admitted
	// before the kill wait for it, and place through B. No placement is in
	// flight to A when it is killed (gate), so every placement has one
	// answer; polls and joins in flight to A just fail over to B.
	var (
		gate    sync.RWMutex // placements on A hold it for reading, the kill for writing
		aDown   atomic.Bool
		killed  = make(chan struct{})
		killAt  time.Time
		mu      sync.Mutex
		stats   struct{ admittedBefore, placedAfter, heldForKill, fromAOnB, retried409 int }
		buyerWG sync.WaitGroup
	)
	alive := func(i int) *instance {
		if i == 0 && aDown.Load() {
			return b
		}
		return ins[i]
	}
	// placeOn places through ins[i], B when A is down.
	placeOn := func(i int, user int64, seats []string, adm string) (call, *instance) {
		if i == 0 {
			gate.RLock()
			defer gate.RUnlock()
		}
		in := alive(i)
		return c.placeAdmitted(in.base(), user, show, seats, adm), in
	}
	if res := c.putQueue(a.base(), show, paused(false)); res.status != http.StatusOK {
		t.Fatalf("PUT queue resume: %d %s", res.status, res.code)
	}
	saleStart := time.Now()
	deadline := saleStart.Add(90 * time.Second)
	for _, m := range members {
		buyerWG.Add(1)
		go func() {
			defer buyerWG.Done()
			var v view
			var from *instance
			for {
				if time.Now().After(deadline) {
					t.Errorf("user %d at position %d never admitted", m.user, m.position)
					return
				}
				from = alive(m.home)
				res := c.poll(from.base(), m.ticket)
				tl.record(res, false)
				if res.status == 0 && from == a {
					continue // A died under this poll
				}
				if res.status != http.StatusOK {
					t.Errorf("user %d poll on %s: %d %s", m.user, from.name, res.status, res.code)
					return
				}
				if v = viewOf(res); v.Position != m.position {
					t.Errorf("user %d: position %d on %s, was %d", m.user, v.Position, from.name, m.position)
				}
				if v.State == "admitted" {
					break
				}
				if v.State != "waiting" {
					t.Errorf("user %d: state %s", m.user, v.State)
					return
				}
				time.Sleep(min(max(time.Duration(num(res, "poll_after_ms"))*time.Millisecond, 100*time.Millisecond), 500*time.Millisecond))
			}
			before := !aDown.Load()
			// The other instance grants the same admission (one grant a user).
			if other := alive(1 - m.home); other != from {
				if res := c.poll(other.base(), m.ticket); res.status == http.StatusOK && viewOf(res) != v {
					t.Errorf("user %d admitted: %s says %+v, %s says %+v", m.user, from.name, v, other.name, viewOf(res))
				}
			}
			if before && m.user%5 == 0 {
				mu.Lock()
				stats.heldForKill++
				mu.Unlock()
				select {
				case <-killed:
				case <-time.After(time.Until(deadline)):
					t.Errorf("user %d: no kill came", m.user)
					return
				}
			}
			if m.user%7 == 0 { // a seat taken: 409, and the admission still holds
				res, in := placeOn(1-m.home, m.user, []string{blocked}, v.Admission)
				tl.record(res, false)
				if res.status != http.StatusConflict {
					t.Errorf("user %d places a taken seat on %s: %d %s, want 409", m.user, in.name, res.status, res.code)
				} else {
					mu.Lock()
					stats.retried409++
					mu.Unlock()
				}
			}
			res, on := placeOn(1-m.home, m.user, []string{s.seatName(int(m.user - 1))}, v.Admission)
			tl.record(res, false)
			if res.status != http.StatusCreated {
				t.Errorf("user %d admitted by %s (before the kill: %v) places on %s: %d %s %v", m.user, from.name, before, on.name, res.status, res.code, res.body)
				return
			}
			tl.addOrder(placed{orderNo: res.body["order_no"].(string), user: m.user, amount: int64(res.body["amount_cents"].(float64))})
			mu.Lock()
			if before {
				stats.admittedBefore++
				if aDown.Load() {
					stats.placedAfter++
				}
			}
			if from == a && on == b {
				stats.fromAOnB++
			}
			mu.Unlock()
			// Used: refused on its home instance (B once A is gone).
			res, in := placeOn(m.home, m.user, []string{s.seatName(int(m.user - 1))}, v.Admission)
			tl.record(res, false)
			if res.status != http.StatusForbidden || res.code != "admission_invalid" {
				t.Errorf("user %d reuses an admission that placed on %s, on %s: %d %s, want 403 admission_invalid", m.user, on.name, in.name, res.status, res.code)
			}
		}()
	}

	// The kill, once half the line is admitted.
	var headAtKill int64
	go func() {
		defer close(killed)
		for time.Now().Before(deadline) {
			res := c.getQueue(b.base(), show)
			if headAtKill = num(res, "admitted"); res.status == http.StatusOK && headAtKill >= n/2 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		gate.Lock()
		defer gate.Unlock()
		if err := a.kill(); err != nil {
			t.Error(err)
		}
		aDown.Store(true)
		killAt = time.Now()
	}()
	buyerWG.Wait()
	<-killed
	tl.report(t)
	t.Logf("sale: %d buyers placed in %v; A SIGKILLed at %v with %d admitted; %d admitted before the kill, %d of them placed after it through B (%d held for it); %d admissions from A placed on B; %d placements retried after 409",
		n, time.Since(saleStart).Round(time.Millisecond), killAt.Sub(saleStart).Round(time.Millisecond), headAtKill,
		stats.admittedBefore, stats.placedAfter, stats.heldForKill, stats.fromAOnB, stats.retried409)
	if len(tl.bad) > 0 {
		t.Errorf("answers no client may get:\n  %s", strings.Join(tl.bad, "\n  "))
	}
	if stats.placedAfter == 0 || stats.fromAOnB == 0 {
		t.Errorf("the kill proved nothing: %d buyers admitted before it placed after it, %d admissions from A placed on B", stats.placedAfter, stats.fromAOnB)
	}

	// After: every position as it was, one order per buyer, the queue's
	// counters whole, and the draw verifies.
	for _, m := range members {
		res := c.poll(b.base(), m.ticket)
		if v := viewOf(res); res.status != http.StatusOK || v.Position != m.position || v.State != "admitted" {
			t.Errorf("user %d after the sale on B: %d %+v, want admitted at %d", m.user, res.status, v, m.position)
		}
	}
	entries, positions, err := admission.NewRedis(s.redis).Entries(t.Context(), show)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Errorf("%d entries in the store, want %d", len(entries), n)
	}
	for i, e := range entries {
		if m := members[e.User]; m == nil || m.position != positions[i] {
			t.Errorf("store: user %d at position %d, buyers were told %v", e.User, positions[i], m)
		}
	}
	if st := queueStatus(t, c, b, show); num(st, "joined") != n || num(st, "admitted") != n || num(st, "placed") != n {
		t.Errorf("queue after the sale: %v, want %d joined, admitted and placed", st.body, n)
	}
	s.onePerBuyer(n)
	out, err := s.runTool(bin, "queue", "verify", "--show", strconv.FormatInt(show, 10))
	t.Logf("seatflow queue verify:\n%s", out)
	if err != nil || !strings.Contains(out, fmt.Sprintf("OK: show %d, %d entries (%d in the pre-queue)", show, n, qiPre)) {
		t.Errorf("queue verify: %v", err)
	}
}

// Settings of TestQueueSentinelFailover.
const (
	qfUsers = 40
	qfRate  = 5 // admissions a second per instance
)

// Two instances keep their queue on a Sentinel group whose master is
// frozen: after the promotion every admitted buyer still places with the
// admission it got before, the ones whose admission was used stay refused,
// joins and polls work again, no position moves, and the loop admits the
// rest on the new master. It prints how long joins and polls failed.
func TestQueueSentinelFailover(t *testing.T) {
	testenv.NeedRedisFailover(t)
	mysqlURL, redisURL, mqURL := testenv.MySQL(t), testenv.RedisSentinel(t), testenv.RocketMQ(t)
	bin := buildSeatflow(t)
	s := newStack(t, stacktest.FreshMySQL(t, mysqlURL), redisURL, mqURL, 10, 20, queueEnv(qfRate))
	s.cleanQueue()
	a, b := s.startInstance("seatflow-a", bin), s.startInstance("seatflow-b", bin)
	ins := []*instance{a, b}
	c, tl, show := newAPIClient(), newTally(), s.show.ID
	seatOf := func(u int64) []string { return []string{s.seatName(int(u - 1))} }
	placedNow := func(u int64, res call) {
		if res.status == http.StatusCreated {
			tl.addOrder(placed{orderNo: res.body["order_no"].(string), user: u, amount: int64(res.body["amount_cents"].(float64))})
		}
	}

	if res := c.putQueue(a.base(), show, map[string]any{"enabled": true}); res.status != http.StatusOK {
		t.Fatalf("PUT queue: %d %s %v", res.status, res.code, res.body)
	}
	var users []int64
	for u := int64(1); u <= qfUsers; u++ {
		users = append(users, u)
	}
	members := joinAll(t, c, ins, show, users, func(u int64) bool { return u%3 == 0 }, tl)
	// Some admitted, then paused: the head stays where it is, so what the
	// buyers were told is all written before the replication wait below.
	waitQueue(t, c, b, show, "a quarter admitted", func(r call) bool { return num(r, "admitted") >= qfUsers/4 })
	if res := c.putQueue(b.base(), show, map[string]any{"enabled": true, "paused": true}); res.status != http.StatusOK {
		t.Fatalf("PUT queue paused: %d %s", res.status, res.code)
	}
	admitted := map[int64]view{}
	for _, m := range members {
		v := pollBoth(t, c, ins, m, tl)
		m.position = v.Position
		if v.State == "admitted" {
			admitted[m.user] = v
		}
	}
	head := num(queueStatus(t, c, a, show), "admitted")
	if int64(len(admitted)) != head || head == qfUsers {
		t.Fatalf("%d buyers told they are admitted, head %d of %d: want all below the head and some waiting", len(admitted), head, qfUsers)
	}
	// The first admitted buyers place before the failover: their admission
	// is used, and must stay so.
	used := map[int64]bool{}
	for _, m := range members {
		if v, ok := admitted[m.user]; ok && len(used) < 3 {
			res := c.placeAdmitted(ins[1-m.home].base(), m.user, show, seatOf(m.user), v.Admission)
			tl.record(res, false)
			if res.status != http.StatusCreated {
				t.Fatalf("user %d places before the failover: %d %s", m.user, res.status, res.code)
			}
			placedNow(m.user, res)
			used[m.user] = true
		}
	}

	testenv.WaitReplicated(t, s.redis, seats.KeySeats(show))
	frozen := testenv.FreezeRedisMaster(t, testenv.MasterFor(t, s.redis, seats.KeySeats(show)))
	start := time.Now()
	// A new buyer joins and a waiting one polls, through both instances in
	// turn, until each works on the promoted master.
	var waiting *member
	for _, m := range members {
		if _, ok := admitted[m.user]; !ok {
			waiting = m
			break
		}
	}
	probe := int64(qfUsers + 1)
	type outage struct {
		fails int
		took  time.Duration
		err   error
		last  call
		seen  []string // the failed answers: status, code, Retry-After
	}
	retry := func(try func(in *instance) call, ok func(call) bool) outage {
		var o outage
		o.err = testenv.Eventually(testenv.FailoverWithin, func() error {
			o.last = try(ins[o.fails%2])
			// While the master is frozen, 503 store_unavailable with
			// Retry-After is the one acceptable refusal.
			tl.record(o.last, true)
			if ok(o.last) {
				return nil
			}
			o.fails++
			o.seen = append(o.seen, fmt.Sprintf("%d %s %q %v", o.last.status, o.last.code, o.last.retryAfter, o.last.err))
			return fmt.Errorf("%d %s (%v)", o.last.status, o.last.code, o.last.err)
		})
		o.took = time.Since(start)
		return o
	}
	var joins, polls outage
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		joins = retry(func(in *instance) call { return c.join(in.base(), show, probe) },
			func(r call) bool { return r.status == http.StatusCreated || r.status == http.StatusOK })
	}()
	go func() {
		defer wg.Done()
		polls = retry(func(in *instance) call { return c.poll(in.base(), waiting.ticket) },
			func(r call) bool { return r.status == http.StatusOK })
	}()
	wg.Wait()
	t.Logf("sentinel failover of %s: joins failed %d times, working again after %v; polls failed %d times, working again after %v",
		frozen, joins.fails, joins.took.Round(time.Millisecond), polls.fails, polls.took.Round(time.Millisecond))
	t.Logf("answers while frozen: joins %v; polls %v", joins.seen, polls.seen)
	if joins.err != nil || polls.err != nil {
		t.Fatalf("still failing %v after freezing %s: joins %v, polls %v", testenv.FailoverWithin, frozen, joins.err, polls.err)
	}
	if now := testenv.ServerAddr(t, testenv.MasterFor(t, s.redis, seats.KeySeats(show))); now == frozen {
		t.Fatalf("joins worked on %s, the frozen master", frozen)
	}
	if v := viewOf(joins.last); v.Position != probe || v.State != "waiting" {
		t.Errorf("the buyer who joined during the failover: %+v, want waiting at %d", v, probe)
	}
	members[probe] = &member{user: probe, home: int(probe % 2), ticket: viewOf(joins.last).Ticket, position: probe}

	// Nothing moved: positions, admissions (the same signed grant, so the
	// same window), used admissions.
	for _, m := range members {
		v := pollBoth(t, c, ins, m, tl)
		if v.Position != m.position {
			t.Errorf("user %d: position %d after the failover, %d before", m.user, v.Position, m.position)
		}
		before, ok := admitted[m.user]
		switch {
		case ok && v != before:
			t.Errorf("user %d admitted before the failover: %+v, after it: %+v", m.user, before, v)
		case !ok && v.State != "waiting":
			t.Errorf("user %d waiting before the failover: %s after it", m.user, v.State)
		}
	}
	for u, v := range admitted {
		m := members[u]
		res := c.placeAdmitted(ins[m.home].base(), u, show, seatOf(u), v.Admission)
		tl.record(res, false)
		switch {
		case used[u] && (res.status != http.StatusForbidden || res.code != "admission_invalid"):
			t.Errorf("user %d reuses an admission used before the failover: %d %s, want 403 admission_invalid", u, res.status, res.code)
		case !used[u] && res.status != http.StatusCreated:
			t.Errorf("user %d admitted before the failover places after it: %d %s %v", u, res.status, res.code, res.body)
		}
		placedNow(u, res)
	}

	// The loop goes on on the new master: resumed, it admits the rest.
	if res := c.putQueue(a.base(), show, map[string]any{"enabled": true}); res.status != http.StatusOK {
		t.Fatalf("PUT queue resumed: %d %s", res.status, res.code)
	}
	waitQueue(t, c, a, show, "everyone admitted", func(r call) bool { return num(r, "admitted") == probe })
	for _, m := range members {
		if _, ok := admitted[m.user]; ok {
			continue
		}
		v := viewOf(c.poll(ins[m.home].base(), m.ticket))
		res := c.placeAdmitted(ins[1-m.home].base(), m.user, show, seatOf(m.user), v.Admission)
		tl.record(res, false)
		if v.State != "admitted" || res.status != http.StatusCreated {
			t.Errorf("user %d admitted after the failover (%s) places: %d %s", m.user, v.State, res.status, res.code)
		}
		placedNow(m.user, res)
	}
	if st := queueStatus(t, c, b, show); num(st, "joined") != probe || num(st, "placed") != probe {
		t.Errorf("queue after the failover: %v, want %d joined and placed", st.body, probe)
	}
	s.onePerBuyer(int(probe))
	tl.report(t)
	if len(tl.bad) > 0 {
		t.Errorf("answers no client may get:\n  %s", strings.Join(tl.bad, "\n  "))
	}
}
