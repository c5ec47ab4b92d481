package dbqueue

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/testenv"
)

// TestTasksDueTogetherShareAHandlerCall: one Send of many orders writes a
// task per order, and tasks claimed together reach the handler in shared
// calls (at most maxHandleBatch each), every task exactly once. The one
// worker's first call waits until every task is claimed, so the rest are
// waiting for it when it comes back.
func TestTasksDueTogetherShareAHandlerCall(t *testing.T) {
	const n = 100
	eachDialect(t, func(t *testing.T, tdb testDB) {
		ctx := context.Background()
		q, db := newQueue(t, tdb, Options{Poll: 5 * time.Millisecond, Workers: 1, Batch: n})
		var (
			mu    sync.Mutex
			calls []int
			seen  = map[string]int{}
			first = true
		)
		err := q.Consume(ctx, func(_ context.Context, msgs []core.TimeoutMsg) []error {
			mu.Lock()
			wait := first
			first = false
			mu.Unlock()
			// Not t.Fatal here: this is the consumer's goroutine. A claim
			// that never completes shows as handler calls of one task.
			for deadline := time.Now().Add(10 * time.Second); wait && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				var claimed int
				if db.Get(&claimed, "SELECT COUNT(*) FROM delay_task WHERE claimed_by <> ''") == nil && claimed == n {
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, len(msgs))
			for _, m := range msgs {
				seen[m.OrderNo]++
			}
			return make([]error, len(msgs))
		})
		if err != nil {
			t.Fatal(err)
		}
		msgs := make([]core.TimeoutMsg, n)
		for i := range msgs {
			msgs[i] = core.TimeoutMsg{OrderNo: fmt.Sprintf("G-%03d", i), Hop: 1}
		}
		if err := q.Send(ctx, msgs, 0, 0); err != nil {
			t.Fatal(err)
		}
		if got := countRows(t, db, "1 = 1"); got != n {
			t.Fatalf("%d tasks for a message of %d orders", got, n)
		}
		testenv.WaitFor(t, 10*time.Second, "every task handled and deleted", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) == n && countRows(t, db, "1 = 1") == 0
		})
		mu.Lock()
		defer mu.Unlock()
		for no, k := range seen {
			if k != 1 {
				t.Errorf("%s handled %d times", no, k)
			}
		}
		if slices.Max(calls) > maxHandleBatch || len(calls) > 1+(n-1+maxHandleBatch-1)/maxHandleBatch+1 {
			t.Errorf("handler calls of %v tasks, want the %d after the first in calls of up to %d", calls, n-1, maxHandleBatch)
		}
	})
}
