package dbqueue

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"seatflow/core"
	"seatflow/core/testenv"
)

// stepClock is the real clock moved forward by the test, so a retry's
// backoff passes at once without sleeping through it.
type stepClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// TestHandlerAlwaysFailingForOneOrderMakesItsTaskADeadLetter injects a
// handler fault for one order only: after MaxAttempts failed deliveries its
// task moves to dead_letter (attempts and the last error kept, the metric
// counted once) and is delivered no more, while the other orders' tasks,
// sent in the same message, are handled as usual.
func TestHandlerAlwaysFailingForOneOrderMakesItsTaskADeadLetter(t *testing.T) {
	const maxAttempts = 3
	eachDialect(t, func(t *testing.T, tdb testDB) {
		ctx := context.Background()
		clock := &stepClock{}
		metrics := core.NewMetrics(nil)
		var buried []core.DeadLetter
		var buriedMu sync.Mutex
		q, db := newQueue(t, tdb, Options{Poll: 5 * time.Millisecond, Clock: clock, MaxAttempts: maxAttempts,
			OnDeadLetter: func(d core.DeadLetter) {
				buriedMu.Lock()
				defer buriedMu.Unlock()
				metrics.TimeoutDeadLetters.Inc()
				buried = append(buried, d)
			}})
		var poisonCalls atomic.Int32
		var handled sync.Map
		err := q.Consume(ctx, core.PerTimeout(func(_ context.Context, msg core.TimeoutMsg) error {
			if msg.OrderNo == "POISON" {
				n := poisonCalls.Add(1)
				return fmt.Errorf("injected fault: handler always fails for POISON (call %d)", n)
			}
			handled.Store(msg.OrderNo, true)
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		// One message of three orders: each is a task of its own.
		var batch []core.TimeoutMsg
		for _, no := range []string{"OK-1", "POISON", "OK-2"} {
			batch = append(batch, core.TimeoutMsg{OrderNo: no, Hop: 2, TraceID: "tr-" + no})
		}
		if err := q.Send(ctx, batch, 0, 0); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < maxAttempts; i++ {
			testenv.WaitFor(t, 5*time.Second, "poison task rescheduled after failure", func() bool {
				return countRows(t, db, "order_no = 'POISON' AND attempts = ? AND claimed_by = ''", i) == 1
			})
			clock.advance(time.Minute + time.Second) // past any backoff
		}
		// The move commits first; the metric and OnDeadLetter follow it.
		testenv.WaitFor(t, 5*time.Second, "poison task moved to dead_letter and reported", func() bool {
			buriedMu.Lock()
			defer buriedMu.Unlock()
			return countRows(t, db, "order_no = 'POISON'") == 0 && len(buried) > 0
		})
		testenv.WaitFor(t, 5*time.Second, "other tasks handled and deleted", func() bool {
			_, ok1 := handled.Load("OK-1")
			_, ok2 := handled.Load("OK-2")
			return ok1 && ok2 && countRows(t, db, "1 = 1") == 0
		})

		var rows []struct {
			OrderNo   string `db:"order_no"`
			Hop       int    `db:"hop"`
			Source    string `db:"source"`
			Payload   string `db:"payload"`
			Attempts  int    `db:"attempts"`
			LastError string `db:"last_error"`
			CreatedAt int64  `db:"created_at"`
		}
		if err := db.SelectContext(ctx, &rows, `SELECT order_no, hop, source, payload, attempts, last_error, created_at FROM dead_letter`); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("dead letters %+v, want one for POISON", rows)
		}
		r := rows[0]
		if r.OrderNo != "POISON" || r.Hop != 2 || r.Source != core.DeadLetterDBQueue || r.Attempts != maxAttempts ||
			!strings.Contains(r.LastError, "injected fault") || !strings.Contains(r.Payload, `"trace_id":"tr-POISON"`) || r.CreatedAt == 0 {
			t.Errorf("dead letter %+v", r)
		}
		if got := poisonCalls.Load(); got != maxAttempts {
			t.Errorf("poison handler calls = %d, want %d", got, maxAttempts)
		}
		if got := testutil.ToFloat64(metrics.TimeoutDeadLetters); got != 1 {
			t.Errorf("seatflow_timeout_dead_letters_total = %v, want 1", got)
		}
		buriedMu.Lock()
		defer buriedMu.Unlock()
		if len(buried) != 1 || buried[0].Msg.OrderNo != "POISON" || buried[0].Attempts != maxAttempts {
			t.Errorf("OnDeadLetter saw %+v", buried)
		}
	})
}
