package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core"
)

// steps times the store calls the engine makes while placing, so that
// BenchmarkPlace reports where a placement waits (the profile shows CPU only).
type steps struct {
	show, seats, lock, tx, send, event atomic.Int64 // ns, summed over every call
}

func (s *steps) since(c *atomic.Int64, t0 time.Time) { c.Add(int64(time.Since(t0))) }

// report adds the mean time per placement of each step to b's results.
func (s *steps) report(b *testing.B) {
	for _, x := range []struct {
		name string
		v    *atomic.Int64
	}{{"show", &s.show}, {"seats", &s.seats}, {"lock", &s.lock}, {"tx", &s.tx}, {"send", &s.send}, {"event", &s.event}} {
		b.ReportMetric(float64(x.v.Load())/float64(b.N)/1e3, "µs-"+x.name+"/op")
	}
}

type timedStore struct {
	core.Store
	s *steps
}

func (t timedStore) Show(ctx context.Context, id int64) (core.Show, error) {
	defer t.s.since(&t.s.show, time.Now())
	return t.Store.Show(ctx, id)
}

func (t timedStore) Seats(ctx context.Context, showID int64) ([]core.Seat, error) {
	defer t.s.since(&t.s.seats, time.Now())
	return t.Store.Seats(ctx, showID)
}

func (t timedStore) InTx(ctx context.Context, fn func(core.Tx) error) error {
	defer t.s.since(&t.s.tx, time.Now())
	return t.Store.InTx(ctx, fn)
}

func (t timedStore) AddEvent(ctx context.Context, ev core.Event) error {
	defer t.s.since(&t.s.event, time.Now())
	return t.Store.AddEvent(ctx, ev)
}

func (t timedStore) AddEvents(ctx context.Context, evs []core.Event) error {
	defer t.s.since(&t.s.event, time.Now())
	return t.Store.AddEvents(ctx, evs)
}

type timedSeats struct {
	core.SeatStore
	s *steps
}

func (t timedSeats) Lock(ctx context.Context, showID, userID int64, orderNo string, ids []string, limit int, now time.Time) error {
	defer t.s.since(&t.s.lock, time.Now())
	return t.SeatStore.Lock(ctx, showID, userID, orderNo, ids, limit, now)
}

type timedQueue struct {
	core.DelayQueue
	s *steps
}

func (t timedQueue) Send(ctx context.Context, msgs []core.TimeoutMsg, level int, delay time.Duration) error {
	defer t.s.since(&t.s.send, time.Now())
	return t.DelayQueue.Send(ctx, msgs, level, delay)
}
