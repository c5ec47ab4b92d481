package store

import (
	"context"
	"os"
	"testing"
	"time"

	"seatflow/core"
)

// TestPruneOrderEvents1M prunes a million history rows and prints the worst
// time one batch's DELETE held its locks. Heavy: SEATFLOW_TEST_RETENTION_1M=1.
func TestPruneOrderEvents1M(t *testing.T) {
	if os.Getenv("SEATFLOW_TEST_RETENTION_1M") != "1" {
		t.Skip("set SEATFLOW_TEST_RETENTION_1M=1 to prune a million rows")
	}
	const rows = 1_000_000
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		old := t0.Add(-100 * 24 * time.Hour)
		show := mkShow(t, db, 1, 2)
		mustPlace(t, db, pending("old", show.ID, 1, old, "A-1"))
		if _, err := db.X().ExecContext(ctx, `UPDATE order_info SET status = ?, closed_at = ? WHERE order_no = 'old'`,
			core.StatusCancelled, ms(old)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		// Bulk INSERT ... SELECT of 1000 × 100 rows each (MariaDB stops a
		// recursion at 1000 iterations; one statement of a million rows
		// outlasts the connection's read timeout).
		for range rows / 100_000 {
			if _, err := db.X().ExecContext(ctx, `INSERT INTO order_event (order_no, at, kind, detail)
 WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 1000)
 SELECT 'old', ?, 'test', '{}' FROM seq a, seq b WHERE b.n <= 100`, ms(old)); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("inserted %d events in %v", rows, time.Since(start))
		var worst, total time.Duration
		var deleted, batches int
		start = time.Now()
		for from := int64(0); ; batches++ {
			b, err := db.PruneOrderEvents(ctx, from, t0.Add(-90*24*time.Hour), 1000)
			if err != nil {
				t.Fatal(err)
			}
			if b.Done {
				break
			}
			deleted += b.Deleted
			worst, total = max(worst, b.Took), total+b.Took
			from = b.Next
		}
		t.Logf("pruned %d events in %d batches, %v; worst batch %v, mean %v",
			deleted, batches, time.Since(start), worst, total/time.Duration(max(batches, 1)))
		if deleted != rows {
			t.Errorf("deleted %d, want %d", deleted, rows)
		}
	})
}
