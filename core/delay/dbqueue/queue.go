// Package dbqueue is the embedded durable delay queue: core.DelayQueue on the
// delay_task table of the system-of-record database (MySQL/MariaDB or SQLite).
//
// A task is a row, so it survives a restart. A consumer claims due rows by
// stamping them with its Owner and a lease (claimed_until); claiming is atomic
// (FOR UPDATE SKIP LOCKED on MySQL, one UPDATE ... RETURNING on SQLite), so
// two instances sharing a database never claim the same row at the same time.
//
// Delivery is at least once: a lease can run out while a slow handler is
// still working (its context ends then, but it may not stop), or the process
// can die between a handler's success and the row's deletion; the task is
// then delivered again, possibly to another instance. Handlers must be
// idempotent — the engine's timeout handler is.
//
// Due and lease times come from each instance's Clock: instances sharing a
// database need clocks that agree to well within the Lease.
package dbqueue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"seatflow/core"
)

// Dialects accepted by New.
const (
	MySQL  = "mysql"
	SQLite = "sqlite"
)

// maxOwnerLen is the width of delay_task.claimed_by in the MySQL schema.
const maxOwnerLen = 64

// Options tune a Queue; zero values take the defaults.
type Options struct {
	// Owner names this process in claimed_by; it must be unique per running
	// process. Default: host-pid-random.
	Owner string
	// Poll is how often due tasks are looked for when nothing wakes the
	// poller earlier. Default 100ms.
	Poll time.Duration
	// Batch is the most tasks claimed at once, and the most held claimed but
	// unfinished. Default 100.
	Batch int
	// Lease is how long a claim lasts: a crashed claimer's tasks become
	// claimable again after it, and a handler's context ends with it.
	// Default 30s.
	Lease time.Duration
	// Workers is the handler concurrency. Default 8.
	Workers int
	// Levels is the delay-level table used when Send gets level > 0:
	// delay = Levels[level-1].
	Levels []time.Duration
	// Logger receives consumer errors. Default slog.Default().
	Logger *slog.Logger
	// Clock stamps due and lease times. Default core.SystemClock.
	Clock core.Clock
	// MaxAttempts is how many failed deliveries make a task a dead letter
	// (moved to dead_letter, never retried on its own). Default
	// core.DefaultTimeoutMaxAttempts.
	MaxAttempts int
	// OnDeadLetter, if set, hears of each task moved to dead_letter, after
	// the move committed (the dead-letter metric).
	OnDeadLetter func(core.DeadLetter)
}

// Queue implements core.DelayQueue on the delay_task table.
type Queue struct {
	db      *sqlx.DB
	dialect string
	opts    Options

	// hint is the earliest due time (unix ms) Send stored since the poller
	// last looked; lowering it signals wake, so a task due sooner than the
	// next poll is not late by a whole poll interval.
	hint atomic.Int64
	wake chan struct{}

	mu       sync.Mutex
	consumer *consumer
	closed   bool

	closeOnce sync.Once
	closeErr  error
}

var _ core.DelayQueue = (*Queue)(nil)

// New returns a queue on db, whose schema must already hold delay_task.
// dialect is MySQL or SQLite. The caller keeps ownership of db.
func New(db *sqlx.DB, dialect string, opts Options) (*Queue, error) {
	if db == nil {
		return nil, errors.New("dbqueue: db is nil")
	}
	if dialect != MySQL && dialect != SQLite {
		return nil, fmt.Errorf("dbqueue: dialect %q: want %q or %q", dialect, MySQL, SQLite)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("dbqueue: %w", err)
	}
	q := &Queue{db: db, dialect: dialect, opts: opts, wake: make(chan struct{}, 1)}
	q.hint.Store(math.MaxInt64)
	return q, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Poll < 0 || o.Lease < 0 || o.Batch < 0 || o.Workers < 0 || o.MaxAttempts < 0 {
		return o, fmt.Errorf("options: Poll %v, Lease %v, Batch %d, Workers %d, MaxAttempts %d: none may be negative",
			o.Poll, o.Lease, o.Batch, o.Workers, o.MaxAttempts)
	}
	for i, d := range o.Levels {
		if d <= 0 {
			return o, fmt.Errorf("options: level %d is %v: levels must be positive", i+1, d)
		}
	}
	if len(o.Owner) > maxOwnerLen {
		return o, fmt.Errorf("options: owner %q is longer than %d bytes", o.Owner, maxOwnerLen)
	}
	if o.Owner == "" {
		owner, err := defaultOwner()
		if err != nil {
			return o, err
		}
		o.Owner = owner
	}
	if o.Poll == 0 {
		o.Poll = 100 * time.Millisecond
	}
	if o.Poll < time.Millisecond {
		return o, fmt.Errorf("options: Poll %v: want at least 1ms (due times are in ms)", o.Poll)
	}
	if o.Workers == 0 {
		o.Workers = 8
	}
	if o.Batch == 0 {
		// At least two claims' worth per worker round: the poller refills
		// at half a batch outstanding (waitCapacity).
		o.Batch = max(100, 2*o.Workers)
	}
	if o.Lease == 0 {
		o.Lease = 30 * time.Second
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = core.DefaultTimeoutMaxAttempts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = core.SystemClock{}
	}
	o.Levels = append([]time.Duration(nil), o.Levels...) // the caller may reuse its slice
	return o, nil
}

// defaultOwner is host-pid-random: the random part keeps two processes that
// reuse a pid (containers) apart.
func defaultOwner() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		host = "host"
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("default owner: %w", err)
	}
	suffix := fmt.Sprintf("-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
	if len(host)+len(suffix) > maxOwnerLen {
		host = host[:maxOwnerLen-len(suffix)]
	}
	return host + suffix, nil
}

// Owner is the name this queue claims tasks under.
func (q *Queue) Owner() string { return q.opts.Owner }

// Send stores msgs as tasks due after Levels[level-1] (level > 0) or after
// delay (level == 0), in one multi-row INSERT: a task is one order's
// timeout, so each keeps its own attempts, and the consumer hands tasks due
// together to one handler call. The rows' due time is rounded up to the
// millisecond, so a task is never delivered early.
func (q *Queue) Send(ctx context.Context, msgs []core.TimeoutMsg, level int, delay time.Duration) error {
	if len(msgs) == 0 {
		return nil
	}
	qm := make([]core.QueuedMsg, len(msgs))
	for i, m := range msgs {
		qm[i] = core.QueuedMsg{Msg: m, Level: level, Delay: delay}
	}
	first, err := q.insertTasks(ctx, q.db, qm)
	if err != nil {
		return err
	}
	q.wakeBy(first)
	return nil
}

// SendTx is Send for many messages inside the caller's transaction
// (core.TxQueue): one multi-row INSERT that commits or rolls back with it.
// tx must come from core/store on this queue's database.
func (q *Queue) SendTx(ctx context.Context, tx core.Tx, msgs []core.QueuedMsg) (func(), error) {
	sx, ok := tx.(interface{ SQL() *sqlx.Tx })
	if !ok {
		return nil, fmt.Errorf("dbqueue: send in a %T: not a transaction on a database", tx)
	}
	if len(msgs) == 0 {
		return func() {}, nil
	}
	first, err := q.insertTasks(ctx, sx.SQL(), msgs)
	if err != nil {
		return nil, err
	}
	return func() { q.wakeBy(first) }, nil
}

// insertTasks writes msgs as delay_task rows through x (the queue's pool,
// or a caller's transaction) and returns the earliest due time (unix ms).
func (q *Queue) insertTasks(ctx context.Context, x sqlx.ExecerContext, msgs []core.QueuedMsg) (int64, error) {
	now := q.opts.Clock.Now()
	first := int64(math.MaxInt64)
	args := make([]any, 0, 5*len(msgs))
	for _, m := range msgs {
		d, err := q.delayFor(m.Level, m.Delay)
		if err != nil {
			return 0, fmt.Errorf("dbqueue: send %s hop %d: %w", m.Msg.OrderNo, m.Msg.Hop, err)
		}
		due := ceilMilli(now.Add(d))
		first = min(first, due)
		args = append(args, m.Msg.OrderNo, m.Msg.Hop, m.Msg.TraceID, due, now.UnixMilli())
	}
	const tuple = "(?, ?, ?, ?, ?)"
	_, err := x.ExecContext(ctx, `INSERT INTO delay_task (order_no, hop, trace_id, due_at, created_at) VALUES `+
		tuple+strings.Repeat(", "+tuple, len(msgs)-1), args...)
	if err != nil {
		return 0, fmt.Errorf("dbqueue: send %s hop %d (%d in all): insert: %w", msgs[0].Msg.OrderNo, msgs[0].Msg.Hop, len(msgs), err)
	}
	return first, nil
}

func (q *Queue) delayFor(level int, delay time.Duration) (time.Duration, error) {
	switch {
	case level < 0:
		return 0, fmt.Errorf("level %d is negative", level)
	case level > len(q.opts.Levels):
		return 0, fmt.Errorf("level %d: the level table has %d levels", level, len(q.opts.Levels))
	case level > 0:
		return q.opts.Levels[level-1], nil
	case delay < 0:
		return 0, fmt.Errorf("delay %v is negative", delay)
	}
	return delay, nil
}

// wakeBy makes the poller look no later than due (unix ms).
func (q *Queue) wakeBy(due int64) {
	for {
		cur := q.hint.Load()
		if due >= cur {
			return
		}
		if q.hint.CompareAndSwap(cur, due) {
			break
		}
	}
	select {
	case q.wake <- struct{}{}:
	default: // a wake-up is already pending; the poller rereads wakeAt
	}
}

// Ping checks the database answers.
func (q *Queue) Ping(ctx context.Context) error {
	var one int
	if err := q.db.GetContext(ctx, &one, `SELECT 1`); err != nil {
		return fmt.Errorf("dbqueue: ping: %w", err)
	}
	return nil
}

// Close stops claiming, waits up to Lease for running handlers, deletes the
// tasks they finished and hands claimed-but-unstarted tasks back at once (not
// after their lease), so a restarted or sibling instance takes them over.
// It leaves the database open and is safe to call more than once.
func (q *Queue) Close() error {
	q.closeOnce.Do(func() {
		q.mu.Lock()
		q.closed = true
		c := q.consumer
		q.mu.Unlock()
		if c != nil {
			q.closeErr = c.shutdown()
		}
	})
	return q.closeErr
}

// ceilMilli is t in unix ms, rounded up.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}

// backoff is the retry delay after a task's attempts-th failure (0-based):
// 1s, 2s, 4s ... capped at 60s.
func backoff(attempts int) time.Duration {
	if attempts >= 6 { // 2^6 s is past the cap
		return 60 * time.Second
	}
	return time.Second << max(attempts, 0)
}
