package dbqueue

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/testenv"
)

// BenchmarkDrainSQLite measures how fast one queue drains a burst of due
// tasks from SQLite (claim, trivial handler, batched delete).
func BenchmarkDrainSQLite(b *testing.B) {
	const burst = 5000
	tdb := newTestDB(b, SQLite)
	_, db := newQueue(b, tdb, Options{})
	var drained time.Duration
	tasks := 0
	for b.Loop() {
		b.StopTimer()
		insertDue(b, db, "D", burst, time.Now().UnixMilli())
		q, _ := newQueue(b, tdb, Options{})
		var handled atomic.Int64
		start := time.Now()
		b.StartTimer()
		if err := q.Consume(context.Background(), core.PerTimeout(func(context.Context, core.TimeoutMsg) error {
			handled.Add(1)
			return nil
		})); err != nil {
			b.Fatal(err)
		}
		testenv.WaitFor(b, time.Minute, "burst drained", func() bool { return countRows(b, db, "1 = 1") == 0 })
		drained += time.Since(start)
		tasks += burst
		if err := q.Close(); err != nil {
			b.Fatal(err)
		}
		if handled.Load() != burst {
			b.Fatalf("handled %d, want %d", handled.Load(), burst)
		}
	}
	b.ReportMetric(float64(tasks)/drained.Seconds(), "tasks/s")
}
