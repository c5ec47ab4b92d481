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
	// this are deleted.
	OrderEvents time.Duration
	// ShowGrace: a show that started longer ago than this is over; its
	// seat keys in Redis are deleted and a start-up rebuild skips it.
	ShowGrace time.Duration
	Every     time.Duration // how often the pruning job runs
	Batch     int           // rows per DELETE
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
