package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"seatflow/core"
)

// backlogDrain is the backlog phase's own figures: the server (and with it
// the timeout consumer) was down while every hold came due, then started
// again; how fast did it work off what had piled up?
type backlogDrain struct {
	Down time.Duration `json:"down_ns"` // stopped → started again
	// EndedBeforeStop holds had ended before the server went down (placing
	// took longer than the TTL): they are not part of the backlog.
	EndedBeforeStop int           `json:"ended_before_stop"`
	Cancels         int           `json:"cancels"`              // ended after the start
	FirstCancel     time.Duration `json:"start_to_first_ns"`    // start → first cancel
	Drain           time.Duration `json:"first_to_last_ns"`     // first → last cancel
	Rate            float64       `json:"drain_cancels_per_s"`  // Cancels over Drain
	Overdue         time.Duration `json:"oldest_overdue_at_ns"` // how long the first hold was overdue at the start
}

// backlogOnce places o.Orders holds, stops the server before the first of
// them comes due, waits until the last one is due, and starts the server
// again: every timeout message and every expired hold is waiting for it at
// once. This is how 10,000 holds come due in the same second, which the
// API cannot produce (placing them takes seconds).
func backlogOnce(ctx context.Context, o Options, s *stack, policy core.DelayPolicy, p *progress) (expirePhase, error) {
	ph, err := placeHolds(ctx, o, s, "backlog", policy, p)
	if err != nil {
		return ph, err
	}
	stopped := time.Now()
	p.logf("expire backlog: stopping the server with %d holds pending", o.Orders)
	if err := s.stopServer(); err != nil {
		return ph, fmt.Errorf("expire backlog: stop: %w", err)
	}
	var first, last int64 // expire_at, unix ms
	if err := s.db.X().QueryRowxContext(ctx, `SELECT MIN(expire_at), MAX(expire_at) FROM order_info WHERE show_id = ?`,
		ph.Show).Scan(&first, &last); err != nil {
		return ph, fmt.Errorf("expire backlog: read expiries: %w", err)
	}
	// A second past the last expiry: every hold and every timeout message
	// is due before the consumer is back.
	wake := time.UnixMilli(last).Add(time.Second)
	p.logf("expire backlog: server down until every hold is due (%v)", time.Until(wake).Round(time.Second))
	select {
	case <-time.After(time.Until(wake)):
	case <-ctx.Done():
		return ph, ctx.Err()
	}
	started := time.Now()
	if err := s.startServer(ctx); err != nil {
		return ph, fmt.Errorf("expire backlog: start again: %w", err)
	}
	err = waitEnded(ctx, o, s, &ph, p)
	var d backlogDrain
	if rerr := readBacklog(ctx, s, ph.Show, stopped, started, &d); rerr != nil {
		return ph, errors.Join(err, rerr)
	}
	d.Overdue = started.Sub(time.UnixMilli(first))
	ph.Backlog = &d
	return ph, err
}

// readBacklog reads, from the orders the server closed, how the backlog of
// show drained after started.
func readBacklog(ctx context.Context, s *stack, show int64, stopped, started time.Time, d *backlogDrain) error {
	var r struct {
		Before int64 `db:"before_stop"`
		After  int64 `db:"after_start"`
		First  int64 `db:"first_closed"`
		Last   int64 `db:"last_closed"`
	}
	err := s.db.X().GetContext(ctx, &r, `SELECT
 COALESCE(SUM(CASE WHEN closed_at < ? THEN 1 ELSE 0 END), 0) AS before_stop,
 COALESCE(SUM(CASE WHEN closed_at >= ? THEN 1 ELSE 0 END), 0) AS after_start,
 COALESCE(MIN(CASE WHEN closed_at >= ? THEN closed_at END), 0) AS first_closed,
 COALESCE(MAX(closed_at), 0) AS last_closed
 FROM order_info WHERE show_id = ? AND status <> ?`,
		stopped.UnixMilli(), started.UnixMilli(), started.UnixMilli(), show, int(core.StatusPending))
	if err != nil {
		return fmt.Errorf("expire backlog: read cancels: %w", err)
	}
	*d = drainFigures(started.Sub(stopped), int(r.Before), int(r.After), started, r.First, r.Last)
	return nil
}

// drainFigures computes the drain from the cancels after the start: first
// and last are their closed_at (unix ms).
func drainFigures(down time.Duration, before, after int, started time.Time, first, last int64) backlogDrain {
	d := backlogDrain{Down: down, EndedBeforeStop: before, Cancels: after}
	if after == 0 {
		return d
	}
	d.FirstCancel = time.UnixMilli(first).Sub(started)
	d.Drain = time.Duration(last-first) * time.Millisecond
	// One cancel, or all in the same millisecond: the rate is at least
	// what a millisecond's resolution can tell.
	d.Rate = float64(after) / max(d.Drain.Seconds(), 1e-3)
	return d
}

// backlogRows turns the backlog phase into table rows, beside the raw
// commit rate of the same stack.
func backlogRows(scen, stack string, ph expirePhase, commit loadResult) []Row {
	d := ph.Backlog
	if d == nil {
		return nil
	}
	row := func(metric string, v float64, unit string) Row {
		return Row{Scenario: scen, Stack: stack, Metric: metric, Value: v, Unit: unit}
	}
	return []Row{
		row("server down while the holds came due", d.Down.Seconds(), "s").vs("oldest hold overdue at the start (s)", d.Overdue.Seconds()),
		row("backlog cancels/s (first → last cancel after the start)", d.Rate, "/s").vs("raw DB commit/s", commit.Rate).
			target(fmt.Sprintf("≥ %.1f of the raw commit rate", ratioTarget(stack, 0.4, 0.6)), commit.Rate > 0 && d.Rate >= ratioTarget(stack, 0.4, 0.6)*commit.Rate),
		row("start → first cancel", d.FirstCancel.Seconds(), "s"),
		row("first → last cancel", d.Drain.Seconds(), "s"),
		row("cancelled after the start", float64(d.Cancels), "").vs("holds placed", float64(ph.Orders)),
		row("cancelled by the timeout chain", float64(ph.Reasons[core.ReasonTimeout]), "").vs("holds placed", float64(ph.Orders)),
		row("cancelled by the reconcile sweep", float64(ph.Reasons[core.ReasonReconcile]), "").vs("holds placed", float64(ph.Orders)),
	}
}
