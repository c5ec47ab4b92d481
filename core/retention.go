package core

import (
	"context"
	"fmt"
	"time"
)

// Retention bounds what a year of operation leaves behind. Money records
// (payment, refund, discrepancy) and the audit log are never deleted: they
// are archived with `seatflow archive` instead.
type Retention struct {
	// OrderEvents: the timeline events of orders closed longer ago than
	// this, with no refund or discrepancy case open or settled since, are
	// deleted; those of order numbers no order has, by their own age.
	OrderEvents time.Duration
	// ShowGrace: a show that started longer ago than this is over; its
	// seat keys in Redis are deleted and a start-up rebuild skips it,
	// unless an order on it is still pending.
	ShowGrace time.Duration
	Every     time.Duration // how often the pruning job runs
	Batch     int           // the most rows one DELETE spans
	// MaxBatches bounds one run, so it gives the lease back to reconcile
	// soon; a backlog is worked off over several runs.
	MaxBatches int
}

// DefaultRetention is the safe default: 90 days of order history, Redis
// keys kept a week past a show's start.
var DefaultRetention = Retention{OrderEvents: 90 * 24 * time.Hour, ShowGrace: 7 * 24 * time.Hour,
	Every: 15 * time.Minute, Batch: 1000, MaxBatches: 500}

// minRetention keeps every setting past the longest an order can stay open
// and the day reconcile still compares a started show's seats.
const minRetention = 24 * time.Hour

// Validate reports the first setting out of range.
func (r Retention) Validate() error {
	switch {
	case r.OrderEvents < minRetention:
		return fmt.Errorf("order event retention %v: must be at least %v", r.OrderEvents, minRetention)
	case r.ShowGrace < minRetention:
		return fmt.Errorf("show grace %v: must be at least %v", r.ShowGrace, minRetention)
	case r.Every <= 0:
		return fmt.Errorf("retention interval %v: must be greater than zero", r.Every)
	case r.Batch < 1 || r.Batch > 10000:
		return fmt.Errorf("retention batch %d: want 1 to 10000", r.Batch)
	case r.MaxBatches < 1:
		return fmt.Errorf("retention max batches %d: must be positive", r.MaxBatches)
	}
	return nil
}

// BatchTarget is how long one pruning DELETE should hold its locks: well
// under the 100 ms a placement waiting on the same index pages may afford.
const BatchTarget = 40 * time.Millisecond

// PruneIdle is how many times as long as a batch took the pruning job then
// rests: it takes at most a tenth of the database's write time, which keeps
// placements' p99 close to what it is without pruning (the 1 M-row test
// prints both), and still works off a day's history in minutes.
const PruneIdle = 9

// BatchSizer picks the size of each pruning batch so that one DELETE stays
// near BatchTarget whatever the database's speed today: it starts small,
// doubles while batches are quick and shrinks in proportion after a slow
// one, never above Max.
type BatchSizer struct {
	Max  int
	size int
}

// minBatch keeps a slow database from pruning one row at a time.
const minBatch = 10

// Size is the number of ids the next batch should span.
func (s *BatchSizer) Size() int {
	if s.size == 0 {
		s.size = min(s.Max, 100)
	}
	return s.size
}

// Took records how long the last batch's DELETE ran.
func (s *BatchSizer) Took(d time.Duration) {
	n := s.Size()
	switch {
	case d > BatchTarget:
		n = int(int64(n) * int64(BatchTarget) / int64(d))
	case d < BatchTarget/2:
		n *= 2
	}
	s.size = max(min(n, s.Max), min(minBatch, s.Max))
}

// RebuildShows rebuilds the seat state of the shows given (the ones still
// on sale: a start-up rebuild of every show ever created grows without end).
func (e *Engine) RebuildShows(ctx context.Context, showIDs []int64) error {
	for _, id := range showIDs {
		if err := e.RebuildSeats(ctx, id); err != nil {
			return err
		}
	}
	return nil
}
