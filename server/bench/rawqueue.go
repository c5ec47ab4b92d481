package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"seatflow/core"
	"seatflow/core/delay/dbqueue"
	"seatflow/core/delay/rocketmq"
	"seatflow/core/store"
)

// queueLateness is the raw limit for expire: how late the delay queue
// itself delivers n messages with no engine behind it.
type queueLateness struct {
	Messages int           `json:"messages"`
	Received int           `json:"received"`
	Level    int           `json:"level"` // 0: exact delay
	Lateness Summary       `json:"lateness"`
	Drain    time.Duration `json:"drain_ns"` // last delivery − last due time
	Send     loadResult    `json:"send"`
}

// rawDelay is how far ahead the raw messages are due: long enough to send
// them all first, like the holds of a burst.
const rawDelay = 10 * time.Second

// measureQueueLateness sends n timeout-sized messages from o.Clients
// senders to a queue of the bench's own, all due at once (timer mode) or
// each rawDelay after its send (levels), and records each delivery's
// lateness. Real stack: a fresh RocketMQ topic and group. Embedded: the DB
// queue on a throwaway SQLite file, since a second consumer on the server's
// database would take the server's own tasks.
func measureQueueLateness(ctx context.Context, o Options, s *stack, mode core.DelayMode, n int, p *progress) (_ queueLateness, err error) {
	levels := core.DefaultDelayPolicy().Levels
	var q core.DelayQueue
	if o.Stack == StackReal {
		mq, err := rocketmq.ParseURL(o.RocketMQ)
		if err != nil {
			return queueLateness{}, err
		}
		id := randHex(4)
		mq.Topic, mq.Group, mq.Logger = "SEATFLOW_BENCH_RAW_"+id, "seatflow-bench-raw-"+id, quietLog()
		if q, err = rocketmq.New(ctx, mq); err != nil {
			return queueLateness{}, err
		}
	} else {
		db, err := store.Open(ctx, "sqlite://"+filepath.Join(s.dir, "rawqueue.db"))
		if err != nil {
			return queueLateness{}, err
		}
		defer func() { err = errors.Join(err, db.Close()) }()
		if err := db.Migrate(ctx); err != nil {
			return queueLateness{}, err
		}
		if q, err = dbqueue.New(db.X(), string(db.Dialect()), dbqueue.Options{Levels: levels}); err != nil {
			return queueLateness{}, err
		}
	}
	defer func() { err = errors.Join(err, q.Close()) }()

	var (
		mu       sync.Mutex
		lateness = make([]time.Duration, 0, n)
		lastAt   time.Time
		seen     = make(map[string]bool, n)
		probe    = make(chan struct{})
		probed   atomic.Bool
		got      atomic.Int64
	)
	const probeNo = "SFPROBE"
	err = q.Consume(ctx, core.PerTimeout(func(_ context.Context, m core.TimeoutMsg) error {
		now := time.Now()
		if m.OrderNo == probeNo {
			if probed.CompareAndSwap(false, true) {
				close(probe)
			}
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if seen[m.OrderNo] { // at-least-once: count each message once
			return nil
		}
		seen[m.OrderNo] = true
		lateness = append(lateness, now.Sub(m.DueAt))
		lastAt = now
		got.Add(1)
		return nil
	}))
	if err != nil {
		return queueLateness{}, fmt.Errorf("raw queue consume: %w", err)
	}
	// A new consumer group takes a while to be assigned its queues: wait
	// until a message sent now comes back, so the wait is not counted.
	if err := q.Send(ctx, []core.TimeoutMsg{{OrderNo: probeNo, DueAt: time.Now()}}, 0, 0); err != nil {
		return queueLateness{}, fmt.Errorf("raw queue probe: %w", err)
	}
	select {
	case <-probe:
	case <-time.After(readyWait):
		return queueLateness{}, fmt.Errorf("raw queue: probe not delivered within %v", readyWait)
	case <-ctx.Done():
		return queueLateness{}, ctx.Err()
	}

	out := queueLateness{Messages: n}
	due := time.Now().Add(rawDelay)
	plan := core.DelayPlan{}
	if mode == core.DelayLevels {
		plan = core.DelayPolicy{Mode: core.DelayLevels, Levels: levels}.Plan(rawDelay)
		out.Level = plan.Level
	}
	var lastDue atomic.Int64
	out.Send = runLoad(ctx, loadSpec{Label: fmt.Sprintf("limit: raw %s queue, send", mode), Clients: o.Clients,
		Ops: int64(n), Duration: o.MaxTime}, p, func(ctx context.Context, i int64) (string, error) {
		d := plan.Delay
		msgDue := time.Now().Add(d)
		if plan.Level == 0 {
			d, msgDue = max(time.Until(due), 0), due
		}
		for {
			l := lastDue.Load()
			if msgDue.UnixNano() <= l || lastDue.CompareAndSwap(l, msgDue.UnixNano()) {
				break
			}
		}
		return "ok", q.Send(ctx, limitMsgs(i, msgDue), plan.Level, d)
	})
	if err := out.Send.failure(); err != nil {
		return out, fmt.Errorf("raw queue send: %w", err)
	}
	sent := out.Send.Ops // a failed send is counted in Send.Errors, not waited for
	t := p.track(fmt.Sprintf("limit: raw %s queue, deliveries", mode), sent, func() (int64, string) { return got.Load(), "" })
	deadline := time.After(o.MaxTime)
wait:
	for got.Load() < sent {
		select {
		case <-ctx.Done():
			break wait
		case <-deadline:
			break wait
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.done()
	mu.Lock()
	defer mu.Unlock()
	out.Received = len(lateness)
	out.Lateness = summarize(lateness)
	out.Drain = lastAt.Sub(time.Unix(0, lastDue.Load()))
	if int64(out.Received) < sent {
		return out, fmt.Errorf("raw queue: %d of %d messages delivered within %v", out.Received, sent, o.MaxTime)
	}
	return out, nil
}
