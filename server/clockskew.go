package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
)

// Every instance judges expiry by its own clock, so one that runs 5 s fast
// cancels holds 5 s early and turns paying customers into discrepancies.
// The database's clock is the one all instances share: each instance
// measures its offset to it at start (refusing to start beyond
// SEATFLOW_MAX_CLOCK_SKEW) and every clockCheckEvery while it runs.
const (
	clockCheckEvery   = time.Minute
	clockSamples      = 3 // the sample with the shortest round trip wins
	clockCheckTimeout = 5 * time.Second
)

// dbClock reads the database server's clock.
type dbClock interface {
	DBNow(ctx context.Context) (time.Time, error)
}

// clockSkew is the latest measured offset of this instance's clock to the
// database's: positive when this host is ahead.
type clockSkew struct {
	db    dbClock
	clock core.Clock
	max   time.Duration
	log   *slog.Logger
	gauge prometheus.Gauge

	mu       sync.Mutex
	offset   time.Duration
	measured bool
}

func newClockSkew(db dbClock, clock core.Clock, max time.Duration, reg prometheus.Registerer, log *slog.Logger) *clockSkew {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "seatflow_clock_offset_seconds",
		Help: "This instance's clock minus the database's (positive: this host is ahead), measured every minute."})
	reg.MustRegister(g)
	return &clockSkew{db: db, clock: clock, max: max, log: log, gauge: g}
}

// measure takes clockSamples readings of the database clock and keeps the
// one with the shortest round trip, taking the database's reading as made
// halfway through it.
func (s *clockSkew) measure(ctx context.Context) (time.Duration, error) {
	var best, bestRTT time.Duration = 0, -1
	for range clockSamples {
		before := s.clock.Now()
		dbNow, err := s.db.DBNow(ctx)
		if err != nil {
			return 0, err
		}
		after := s.clock.Now()
		rtt := after.Sub(before)
		if bestRTT < 0 || rtt < bestRTT {
			best, bestRTT = before.Add(rtt/2).Sub(dbNow), rtt
		}
	}
	s.mu.Lock()
	s.offset, s.measured = best, true
	s.mu.Unlock()
	s.gauge.Set(best.Seconds())
	return best, nil
}

// Offset is the latest measurement; false before the first one.
func (s *clockSkew) Offset() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offset, s.measured
}

// Skewed says whether the latest measurement is beyond the limit, and how
// far off the clock is, in words.
func (s *clockSkew) Skewed() (bool, string) {
	off, ok := s.Offset()
	if !ok || (off <= s.max && off >= -s.max) {
		return false, ""
	}
	return true, describeSkew(off, s.max)
}

func describeSkew(off, max time.Duration) string {
	dir := "ahead of"
	if off < 0 {
		dir, off = "behind", -off
	}
	return fmt.Sprintf("this host's clock is %v %s the database's (limit %v): fix its time sync (NTP)",
		off.Round(time.Millisecond), dir, max)
}

// checkAtStart measures once and refuses a clock beyond the limit.
func (s *clockSkew) checkAtStart(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, clockCheckTimeout)
	defer cancel()
	off, err := s.measure(ctx)
	if err != nil {
		return fmt.Errorf("SEATFLOW_DB: %w", err)
	}
	if bad, why := s.Skewed(); bad {
		return fmt.Errorf("SEATFLOW_MAX_CLOCK_SKEW: %s", why)
	}
	s.log.Info("clock offset to the database", "offset", off)
	return nil
}

// watch measures every clockCheckEvery until ctx ends; a skew found while
// running is logged (the metric and /readyz carry it too).
func (s *clockSkew) watch(ctx context.Context) {
	t := time.NewTicker(clockCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		mctx, cancel := context.WithTimeout(ctx, clockCheckTimeout)
		_, err := s.measure(mctx)
		cancel()
		if err != nil {
			continue // the database is down: the health watcher says so
		}
		if bad, why := s.Skewed(); bad {
			s.log.Warn("clock skew beyond SEATFLOW_MAX_CLOCK_SKEW", "detail", why)
		}
	}
}
