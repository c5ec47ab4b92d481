package dbqueue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/testenv"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func TestNewRejectsBadOptions(t *testing.T) {
	db := sqlx.NewDb(nil, "sqlite")
	tests := []struct {
		name    string
		db      *sqlx.DB
		dialect string
		opts    Options
		want    string
	}{
		{"nil db", nil, SQLite, Options{}, "db is nil"},
		{"unknown dialect", db, "postgres", Options{}, `dialect "postgres"`},
		{"negative poll", db, SQLite, Options{Poll: -time.Second}, "negative"},
		{"negative workers", db, MySQL, Options{Workers: -1}, "negative"},
		{"sub-millisecond poll", db, MySQL, Options{Poll: time.Microsecond}, "at least 1ms"},
		{"zero level", db, SQLite, Options{Levels: []time.Duration{time.Second, 0}}, "level 2"},
		{"owner too long", db, MySQL, Options{Owner: strings.Repeat("x", 65)}, "longer than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.db, tt.dialect, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	q, err := New(sqlx.NewDb(nil, "sqlite"), SQLite, Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := q.opts
	if o.Poll != 100*time.Millisecond || o.Batch != 100 || o.Lease != 30*time.Second || o.Workers != 8 ||
		o.Logger == nil || o.Clock == nil {
		t.Errorf("defaults = %+v", o)
	}
	q2, err := New(sqlx.NewDb(nil, "sqlite"), SQLite, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if q.Owner() == "" || q.Owner() == q2.Owner() || len(q.Owner()) > maxOwnerLen {
		t.Errorf("default owners %q and %q: want distinct, non-empty, at most %d bytes", q.Owner(), q2.Owner(), maxOwnerLen)
	}
}

func TestBackoff(t *testing.T) {
	for attempts, want := range []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60} {
		if got := backoff(attempts); got != want*time.Second {
			t.Errorf("backoff(%d) = %v, want %v", attempts, got, want*time.Second)
		}
	}
	if got := backoff(1000); got != 60*time.Second {
		t.Errorf("backoff(1000) = %v, want 60s", got)
	}
}

// TestSendDueTime checks the row Send writes: due = now + level delay or
// exact delay, rounded up to the millisecond.
func TestSendDueTime(t *testing.T) {
	eachDialect(t, func(t *testing.T, tdb testDB) {
		now := time.UnixMilli(1_800_000_000_000).Add(300 * time.Microsecond).UTC()
		nowMs := now.UnixMilli()
		levels := []time.Duration{time.Second, 5 * time.Second, 10 * time.Minute}
		q, db := newQueue(t, tdb, Options{Levels: levels, Clock: fixedClock{now}})
		tests := []struct {
			name    string
			level   int
			delay   time.Duration
			wantDue int64 // unix ms
			wantErr string
		}{
			{"level 1", 1, 0, nowMs + 1000 + 1, ""},
			{"level 3 ignores delay", 3, time.Hour, nowMs + 600_000 + 1, ""},
			{"exact delay", 0, 2500 * time.Millisecond, nowMs + 2500 + 1, ""},
			{"zero delay is due now", 0, 0, nowMs + 1, ""},
			{"level past the table", 4, 0, 0, "level 4"},
			{"negative level", -1, 0, 0, "negative"},
			{"negative delay", 0, -time.Second, 0, "negative"},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				orderNo := fmt.Sprintf("O-%d", i)
				msg := core.TimeoutMsg{OrderNo: orderNo, Hop: 3, TraceID: "trace-" + orderNo}
				err := q.Send(context.Background(), []core.TimeoutMsg{msg}, tt.level, tt.delay)
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("Send: err = %v, want %q", err, tt.wantErr)
					}
					if n := countRows(t, db, "order_no = ?", orderNo); n != 0 {
						t.Fatalf("rejected Send stored %d rows", n)
					}
					return
				}
				if err != nil {
					t.Fatalf("Send: %v", err)
				}
				var got taskRow
				if err := db.Get(&got, `SELECT id, order_no, hop, trace_id, due_at, attempts FROM delay_task WHERE order_no = ?`, orderNo); err != nil {
					t.Fatal(err)
				}
				want := taskRow{ID: got.ID, OrderNo: orderNo, Hop: 3, TraceID: "trace-" + orderNo, DueAt: tt.wantDue}
				if got != want {
					t.Errorf("row = %+v, want %+v", got, want)
				}
			})
		}
	})
}

// TestLateness sends ~2,000 tasks with random delays and checks each fires,
// no earlier than due, with no poll to fall back on; it prints how late.
func TestLateness(t *testing.T) {
	eachDialect(t, func(t *testing.T, tdb testDB) {
		const n = 2000
		// A poll far past the test's end: every task must fire through the
		// wake-ups alone (Send's, and the sleep until the next due time),
		// so a broken one fails the test by tasks never firing, whatever
		// the machine's load; the lateness is reported, not asserted.
		const poll = time.Hour
		q, db := newQueue(t, tdb, Options{Poll: poll})
		var mu sync.Mutex
		due := make(map[string]time.Time, n) // earliest allowed delivery, by the test's own clock
		late := make([]time.Duration, 0, n)
		var early []string
		done := make(chan struct{})
		err := q.Consume(context.Background(), core.PerTimeout(func(_ context.Context, msg core.TimeoutMsg) error {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			d, ok := due[msg.OrderNo]
			if !ok {
				return errors.New("task delivered before Send returned or twice")
			}
			delete(due, msg.OrderNo)
			if now.Before(d) || now.Before(msg.DueAt) {
				early = append(early, fmt.Sprintf("%s %v early", msg.OrderNo, d.Sub(now)))
			}
			late = append(late, now.Sub(d))
			if len(late) == n {
				close(done)
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range n {
			orderNo := fmt.Sprintf("L-%d", i)
			delay := time.Duration(rng.Int64N(int64(1500 * time.Millisecond))) // some shorter than a poll
			mu.Lock()
			due[orderNo] = time.Now().Add(delay) // before Send reads its clock: a lower bound
			mu.Unlock()
			if err := q.Send(context.Background(), []core.TimeoutMsg{{OrderNo: orderNo, Hop: 1}}, 0, delay); err != nil {
				t.Fatal(err)
			}
			if i%100 == 99 {
				time.Sleep(50 * time.Millisecond) // spread sends like real traffic, not one burst
			}
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			mu.Lock()
			t.Fatalf("only %d of %d tasks fired", len(late), n)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(early) > 0 {
			t.Errorf("%d tasks fired early: %v", len(early), early[:min(5, len(early))])
		}
		slices.Sort(late)
		p50, p99, worst := late[n/2], late[n*99/100], late[n-1]
		t.Logf("%s lateness over %d tasks: p50 %v, p99 %v, max %v", tdb.dialect, n, p50, p99, worst)
		testenv.WaitFor(t, 2*time.Second, "every fired task's row deleted", func() bool { return countRows(t, db, "1 = 1") == 0 })
	})
}

// TestWakeUp: with a poll interval far longer than the delay, a task still
// fires on time when this queue sent it while the poller slept (Send wakes
// it) and when another instance had sent it before the last poll (the
// poller sleeps only until the next due time in the database).
func TestWakeUp(t *testing.T) {
	const poll = 3 * time.Second
	const delay = 500 * time.Millisecond
	tests := []struct {
		name          string
		otherInstance bool // send from another queue before Consume; else from q after its first poll
	}{
		{"Send wakes the poller", false},
		{"poller sleeps until the next due", true},
	}
	eachDialect(t, func(t *testing.T, tdb testDB) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				q, _ := newQueue(t, tdb, Options{Poll: poll})
				msg := core.TimeoutMsg{OrderNo: fmt.Sprintf("W-%d", i), Hop: 1}
				start := time.Now()
				if tt.otherInstance {
					other, _ := newQueue(t, tdb, Options{})
					if err := other.Send(ctx, []core.TimeoutMsg{msg}, 0, delay); err != nil {
						t.Fatal(err)
					}
				}
				got := make(chan time.Time, 1)
				if err := q.Consume(ctx, core.PerTimeout(func(context.Context, core.TimeoutMsg) error { got <- time.Now(); return nil })); err != nil {
					t.Fatal(err)
				}
				if !tt.otherInstance {
					time.Sleep(100 * time.Millisecond) // the first poll found nothing; the poller sleeps
					start = time.Now()
					if err := q.Send(ctx, []core.TimeoutMsg{msg}, 0, delay); err != nil {
						t.Fatal(err)
					}
				}
				select {
				case at := <-got:
					if late := at.Sub(start) - delay; late < 0 || late > poll/6 {
						t.Errorf("fired %v after due, want within %v (poll is %v)", late, poll/6, poll)
					}
				case <-time.After(poll + time.Second):
					t.Fatal("task never fired")
				}
			})
		}
	})
}

// TestRetryBackoff fails a task's first deliveries and checks each retry
// comes after its backoff with attempts counted.
func TestRetryBackoff(t *testing.T) {
	tests := []struct {
		name  string
		fails int
		fail  func() error
	}{
		{"error twice", 2, func() error { return errors.New("store down") }},
		{"panic once", 1, func() error { panic("handler bug") }},
	}
	eachDialect(t, func(t *testing.T, tdb testDB) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				q, db := newQueue(t, tdb, Options{Poll: 50 * time.Millisecond})
				type delivery struct {
					at       time.Time
					attempts int
					dueAt    time.Time
				}
				var deliveries []delivery
				done := make(chan struct{})
				err := q.Consume(context.Background(), core.PerTimeout(func(ctx context.Context, msg core.TimeoutMsg) error {
					var attempts int
					if err := db.GetContext(ctx, &attempts, `SELECT attempts FROM delay_task WHERE order_no = ?`, msg.OrderNo); err != nil {
						return fmt.Errorf("read attempts: %w", err)
					}
					deliveries = append(deliveries, delivery{time.Now(), attempts, msg.DueAt}) // one task: no concurrent calls
					if len(deliveries) <= tt.fails {
						return tt.fail()
					}
					close(done)
					return nil
				}))
				if err != nil {
					t.Fatal(err)
				}
				if err := q.Send(context.Background(), []core.TimeoutMsg{{OrderNo: "R-1", Hop: 1}}, 0, 0); err != nil {
					t.Fatal(err)
				}
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("task not handled after %d failures; deliveries %v", tt.fails, deliveries)
				}
				testenv.WaitFor(t, 2*time.Second, "row deleted after success", func() bool { return countRows(t, db, "1 = 1") == 0 })
				for i := 1; i < len(deliveries); i++ {
					gap := deliveries[i].at.Sub(deliveries[i-1].at)
					want := backoff(i - 1)
					if gap < want || gap > want+time.Second {
						t.Errorf("retry %d came %v after the failure, want %v (+ at most 1s)", i, gap, want)
					}
					if deliveries[i].attempts != i {
						t.Errorf("delivery %d saw attempts = %d, want %d", i+1, deliveries[i].attempts, i)
					}
					if !deliveries[i].dueAt.After(deliveries[i-1].dueAt) {
						t.Errorf("delivery %d DueAt %v, want after the previous %v", i+1, deliveries[i].dueAt, deliveries[i-1].dueAt)
					}
				}
				if len(deliveries) != tt.fails+1 {
					t.Errorf("%d deliveries, want %d", len(deliveries), tt.fails+1)
				}
			})
		}
	})
}

// TestRestart: tasks are rows, so a new queue on the same database delivers
// what a closed one left; tasks claimed but not started are handed back at
// Close rather than after their lease.
func TestRestart(t *testing.T) {
	eachDialect(t, func(t *testing.T, tdb testDB) {
		ctx := context.Background()
		q1, db := newQueue(t, tdb, Options{Workers: 1, Poll: 20 * time.Millisecond})
		started := make(chan string, 10)
		release := make(chan struct{})
		var handled1 []string
		err := q1.Consume(ctx, core.PerTimeout(func(_ context.Context, msg core.TimeoutMsg) error {
			handled1 = append(handled1, msg.OrderNo) // Workers: 1
			started <- msg.OrderNo
			<-release
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := q1.Send(ctx, []core.TimeoutMsg{{OrderNo: fmt.Sprintf("S-%d", i), Hop: 1}}, 0, 0); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				<-started // the worker holds S-0; S-1 and S-2 get claimed behind it
			}
		}
		if err := q1.Send(ctx, []core.TimeoutMsg{{OrderNo: "S-later", Hop: 1}}, 0, 1500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 5*time.Second, "q1 claims S-1 and S-2", func() bool {
			return countRows(t, db, "claimed_by = ?", q1.Owner()) == 3
		})
		closed := make(chan error)
		go func() { closed <- q1.Close() }()
		<-q1.consumer.ctx.Done() // Close has stopped the workers from taking more
		close(release)
		if err := <-closed; err != nil {
			t.Fatalf("Close: %v", err)
		}
		if !slices.Equal(handled1, []string{"S-0"}) {
			t.Fatalf("q1 handled %v, want [S-0]", handled1)
		}
		if n := countRows(t, db, "claimed_by <> '' OR claimed_until <> 0"); n != 0 {
			t.Fatalf("%d rows still claimed after Close, want all handed back", n)
		}
		if n := countRows(t, db, "1 = 1"); n != 3 {
			t.Fatalf("%d rows after Close, want 3 (S-0 deleted)", n)
		}

		q2, _ := newQueue(t, tdb, Options{Poll: 20 * time.Millisecond})
		got := make(chan string, 10)
		restarted := time.Now()
		if err := q2.Consume(ctx, core.PerTimeout(func(_ context.Context, msg core.TimeoutMsg) error { got <- msg.OrderNo; return nil })); err != nil {
			t.Fatal(err)
		}
		var handled2 []string
		for range 3 {
			select {
			case o := <-got:
				handled2 = append(handled2, o)
			case <-time.After(5 * time.Second):
				t.Fatalf("after restart got %v, want S-1, S-2, S-later", handled2)
			}
		}
		slices.Sort(handled2)
		if want := []string{"S-1", "S-2", "S-later"}; !slices.Equal(handled2, want) {
			t.Errorf("after restart got %v, want %v", handled2, want)
		}
		if took := time.Since(restarted); took > 3*time.Second {
			t.Errorf("restart delivery took %v: handed-back tasks should not wait for their lease", took)
		}
	})
}

// TestTwoOwnersExactlyOnce runs two queues (two pools, two owners) on one
// database over the same 2,000 tasks: each must be handled exactly once.
func TestTwoOwnersExactlyOnce(t *testing.T) {
	eachDialect(t, func(t *testing.T, tdb testDB) {
		const n = 2000
		ctx := context.Background()
		var mu sync.Mutex
		count := make(map[string]int, n)
		byOwner := make(map[string]int)
		var total atomic.Int64
		var queues []*Queue
		for _, owner := range []string{"owner-a", "owner-b"} {
			q, _ := newQueue(t, tdb, Options{Owner: owner, Poll: 20 * time.Millisecond, Batch: 50})
			queues = append(queues, q)
			err := q.Consume(ctx, core.PerTimeout(func(_ context.Context, msg core.TimeoutMsg) error {
				mu.Lock()
				count[msg.OrderNo]++
				byOwner[owner]++
				mu.Unlock()
				total.Add(1)
				time.Sleep(time.Duration(rand.IntN(2)) * time.Millisecond) // let the workers interleave
				return nil
			}))
			if err != nil {
				t.Fatal(err)
			}
		}
		// Half a burst already due, half trickling in through both queues.
		_, db := newQueue(t, tdb, Options{})
		insertDue(t, db, "T", n/2, time.Now().UnixMilli())
		for i := n / 2; i < n; i++ {
			q := queues[i%2]
			delay := time.Duration(rand.IntN(300)) * time.Millisecond
			if err := q.Send(ctx, []core.TimeoutMsg{{OrderNo: fmt.Sprintf("T-%d", i), Hop: 1}}, 0, delay); err != nil {
				t.Fatal(err)
			}
		}
		testenv.WaitFor(t, time.Minute, "every task handled", func() bool { return total.Load() >= n })
		time.Sleep(300 * time.Millisecond) // room for a duplicate to show up
		for _, q := range queues {
			if err := q.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		t.Logf("%s: handled by owner %v", tdb.dialect, byOwner)
		if len(count) != n {
			t.Errorf("%d distinct tasks handled, want %d", len(count), n)
		}
		for orderNo, c := range count {
			if c != 1 {
				t.Errorf("%s handled %d times", orderNo, c)
			}
		}
		if rows := countRows(t, db, "1 = 1"); rows != 0 {
			t.Errorf("%d rows left", rows)
		}
	})
}

// TestLeaseExpiry: a claim whose owner died or stalls past its lease is
// taken over by another owner, not before the lease ends.
func TestLeaseExpiry(t *testing.T) {
	eachDialect(t, func(t *testing.T, tdb testDB) {
		t.Run("crashed owner", func(t *testing.T) {
			ctx := context.Background()
			b, db := newQueue(t, tdb, Options{Owner: "survivor", Poll: 20 * time.Millisecond})
			leaseEnd := time.Now().Add(400 * time.Millisecond)
			insertDue(t, db, "C", 1, time.Now().UnixMilli())
			if _, err := db.Exec(`UPDATE delay_task SET claimed_by = 'crashed', claimed_until = ?`, leaseEnd.UnixMilli()); err != nil {
				t.Fatal(err)
			}
			got := make(chan time.Time, 2)
			if err := b.Consume(ctx, core.PerTimeout(func(context.Context, core.TimeoutMsg) error { got <- time.Now(); return nil })); err != nil {
				t.Fatal(err)
			}
			select {
			case at := <-got:
				if at.Before(leaseEnd) {
					t.Errorf("taken over %v before the crashed owner's lease ended", leaseEnd.Sub(at))
				}
			case <-time.After(5 * time.Second):
				t.Fatal("task of a crashed owner never taken over")
			}
			testenv.WaitFor(t, 2*time.Second, "row deleted", func() bool { return countRows(t, db, "1 = 1") == 0 })
		})
		t.Run("stalled handler", func(t *testing.T) {
			ctx := context.Background()
			const lease = 400 * time.Millisecond
			// Batch 1: while its handler stalls, "stalled" claims nothing more,
			// so only "taker" can pick the task up when the lease ends.
			a, db := newQueue(t, tdb, Options{Owner: "stalled", Lease: lease, Batch: 1, Poll: 20 * time.Millisecond})
			aLeaseEnd := make(chan time.Time, 10)
			aCtxErr := make(chan error, 10)
			bTook := make(chan struct{})
			err := a.Consume(ctx, core.PerTimeout(func(hctx context.Context, msg core.TimeoutMsg) error {
				var until int64
				if err := db.GetContext(ctx, &until, `SELECT claimed_until FROM delay_task WHERE order_no = ?`, msg.OrderNo); err != nil {
					return err
				}
				aLeaseEnd <- time.UnixMilli(until)
				<-hctx.Done() // stalls until its lease ends
				aCtxErr <- hctx.Err()
				select { // and on, until the taker has it
				case <-bTook:
				case <-time.After(10 * time.Second):
				}
				return nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Send(ctx, []core.TimeoutMsg{{OrderNo: "L-1", Hop: 1}}, 0, 0); err != nil {
				t.Fatal(err)
			}
			leaseEnd := <-aLeaseEnd
			b, _ := newQueue(t, tdb, Options{Owner: "taker", Poll: 20 * time.Millisecond})
			got := make(chan time.Time, 2)
			if err := b.Consume(ctx, core.PerTimeout(func(context.Context, core.TimeoutMsg) error { got <- time.Now(); return nil })); err != nil {
				t.Fatal(err)
			}
			select {
			case at := <-got:
				if at.Before(leaseEnd) {
					t.Errorf("taken over %v before the stalled owner's lease ended", leaseEnd.Sub(at))
				}
				close(bTook)
			case <-time.After(10 * time.Second):
				t.Fatal("stalled task never taken over")
			}
			if err := <-aCtxErr; !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("stalled handler's ctx ended with %v, want DeadlineExceeded at lease end", err)
			}
			testenv.WaitFor(t, 2*time.Second, "row deleted", func() bool { return countRows(t, db, "1 = 1") == 0 })
			if err := a.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if n := len(aLeaseEnd); n != 0 {
				t.Errorf("stalled owner delivered the task %d more times", n)
			}
			select {
			case <-got:
				t.Error("taker delivered the task twice")
			default:
			}
		})
	})
}

// TestDrainBurst: 10,000 tasks due in the same second drain in seconds.
func TestDrainBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("burst of 10,000 tasks")
	}
	eachDialect(t, func(t *testing.T, tdb testDB) {
		const n = 10_000
		// A long poll: only the re-poll after a full batch can drain in time.
		q, db := newQueue(t, tdb, Options{Poll: 10 * time.Second})
		insertDue(t, db, "B", n, time.Now().UnixMilli())
		var handled atomic.Int64
		start := time.Now()
		if err := q.Consume(context.Background(), core.PerTimeout(func(context.Context, core.TimeoutMsg) error { handled.Add(1); return nil })); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, time.Minute, "burst drained", func() bool { return countRows(t, db, "1 = 1") == 0 })
		took := time.Since(start)
		t.Logf("%s: drained %d tasks in %v (%.0f tasks/s)", tdb.dialect, n, took, n/took.Seconds())
		if got := handled.Load(); got != n {
			t.Errorf("handled %d, want %d", got, n)
		}
	})
}

func TestConsumeAndCloseLifecycle(t *testing.T) {
	tdb := newTestDB(t, SQLite)
	ctx := context.Background()
	nop := core.PerTimeout(func(context.Context, core.TimeoutMsg) error { return nil })
	q, _ := newQueue(t, tdb, Options{})
	if err := q.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
	if err := q.Close(); err != nil {
		t.Errorf("Close before Consume: %v", err)
	}
	if err := q.Consume(ctx, nop); err == nil {
		t.Error("Consume after Close: want an error")
	}
	q2, _ := newQueue(t, tdb, Options{})
	if err := q2.Consume(ctx, nil); err == nil {
		t.Error("Consume(nil handler): want an error")
	}
	if err := q2.Consume(ctx, nop); err != nil {
		t.Fatal(err)
	}
	if err := q2.Consume(ctx, nop); err == nil {
		t.Error("second Consume: want an error")
	}
	for i := range 2 {
		if err := q2.Close(); err != nil {
			t.Errorf("Close #%d: %v", i+1, err)
		}
	}
	pctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := q2.Ping(pctx); err == nil {
		t.Error("Ping with a cancelled ctx: want an error")
	}
}
