package store

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core"
)

// TestPruneOrderEvents1M prunes a million history rows the way the
// retention job does (batches sized by core.BatchSizer, then a rest of
// core.PruneIdle times the batch) while placements run, and prints the worst time one batch's
// DELETE held its locks against core.BatchTarget and the 100 ms limit, and
// the placements' p99 without and during pruning. Heavy:
// SEATFLOW_TEST_RETENTION_1M=1.
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

		placing := mkShow(t, db, placerSeats/100, 100) // one seat per placement
		placer := newPlacer(db, placing.ID)
		without := placer.run(ctx, 3*time.Second)

		var worst, total time.Duration
		var deleted, batches int
		sizer := core.BatchSizer{Max: core.DefaultRetention.Batch}
		stop := make(chan struct{})
		during := make(chan []time.Duration)
		go func() { during <- placer.runUntil(ctx, stop) }()
		start = time.Now()
		for from := int64(0); ; batches++ {
			b, err := db.PruneOrderEvents(ctx, from, t0.Add(-90*24*time.Hour), sizer.Size())
			if err != nil {
				t.Fatal(err)
			}
			if b.Done {
				break
			}
			deleted += b.Deleted
			worst, total = max(worst, b.Took), total+b.Took
			sizer.Took(b.Took)
			from = b.Next
			time.Sleep(core.PruneIdle * b.Took)
		}
		close(stop)
		withPruning := <-during
		if err := placer.err(); err != nil {
			t.Fatal(err)
		}
		t.Logf("pruned %d events in %d batches, %v; worst batch %v (%.2f of the 100 ms limit, target %v), mean %v",
			deleted, batches, time.Since(start), worst, float64(worst)/float64(100*time.Millisecond), core.BatchTarget,
			total/time.Duration(max(batches, 1)))
		p99a, p99b := p99(without), p99(withPruning)
		t.Logf("placements: p99 %v without pruning (%d placed), %v during pruning (%d placed): %.2f×",
			p99a, len(without), p99b, len(withPruning), float64(p99b)/float64(max(p99a, 1)))
		if deleted != rows {
			t.Errorf("deleted %d, want %d", deleted, rows)
		}
	})
}

// placerSeats outlasts the placements of a pruning run on either backend.
const placerSeats = 60_000

// placer places one-seat orders with an event each, as the engine writes
// them, from four goroutines, and times each placement.
type placer struct {
	db     *DB
	showID int64
	next   atomic.Int64
	mu     sync.Mutex
	failed error
}

func newPlacer(db *DB, showID int64) *placer { return &placer{db: db, showID: showID} }

func (p *placer) run(ctx context.Context, d time.Duration) []time.Duration {
	stop := make(chan struct{})
	time.AfterFunc(d, func() { close(stop) })
	return p.runUntil(ctx, stop)
}

func (p *placer) runUntil(ctx context.Context, stop <-chan struct{}) []time.Duration {
	var mu sync.Mutex
	var took []time.Duration
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := p.next.Add(1)
				if n > placerSeats {
					return
				}
				seat := fmt.Sprintf("%s-%d", RowName(int((n-1)/100)+1), (n-1)%100+1)
				o := pending(fmt.Sprintf("load-%d", n), p.showID, n, t0, seat)
				start := time.Now()
				err := place(ctx, p.db, o)
				if err == nil {
					err = p.db.AddEvent(ctx, core.Event{OrderNo: o.OrderNo, At: t0, Kind: "placed"})
				}
				d := time.Since(start)
				if err != nil {
					p.mu.Lock()
					p.failed = err
					p.mu.Unlock()
					return
				}
				mu.Lock()
				took = append(took, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return took
}

func (p *placer) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

func p99(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)*99/100]
}
