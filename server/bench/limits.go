package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/delay/dbqueue"
	"seatflow/core/delay/rocketmq"
	"seatflow/core/seats"
	"seatflow/core/store"
)

// limitEvalLua has lock.lua's shape: one HMGET of the seats, one HSET of
// them, one HINCRBY of the user's counter, on throwaway keys.
const limitEvalLua = `local held = redis.call('HMGET', KEYS[1], unpack(ARGV))
local f = {}
for i = 1, #ARGV do
  f[2 * i - 1] = ARGV[i]
  f[2 * i] = '1|SF20260101000000aaaaaaaaaaaa|42|1767225600000'
end
redis.call('HSET', KEYS[1], unpack(f))
redis.call('HINCRBY', KEYS[2], 'u', #ARGV)
return #held`

// quietLog keeps the bench's own RocketMQ clients from writing their info
// lines into the progress output; their failures come back as errors.
func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// limitSpec is a phase of the raw limits: the same clients as the
// scenarios, for o.LimitTime.
func limitSpec(o Options, label string) loadSpec {
	return loadSpec{Label: label, Clients: o.Clients, Duration: o.LimitTime}
}

// limitErr is a limit phase's failure: ending on its time bound is how it
// is meant to end.
func limitErr(r loadResult) error {
	if r.Stopped == "time" {
		return nil
	}
	return r.failure()
}

// measureEval runs limitEvalLua with 1 to 4 seats (cycling, the mean of
// place's orders) on the real stack's Redis.
func measureEval(ctx context.Context, o Options, s *stack, p *progress) (_ loadResult, err error) {
	rdb := s.rdb
	id := randHex(4)
	keys := []string{"sf:{bench:" + id + "}:seats", "sf:{bench:" + id + "}:limit"}
	defer func() { err = errors.Join(err, rdb.Unlink(context.WithoutCancel(ctx), keys...).Err()) }()
	script := redis.NewScript(limitEvalLua)
	r := runLoad(ctx, limitSpec(o, "limit: Redis EVAL"), p, func(ctx context.Context, i int64) (string, error) {
		n := 1 + i%4
		args := make([]any, n)
		for k := range n {
			// A bounded field space keeps the hash at place's size.
			args[k] = "S-" + strconv.FormatInt((i*4+k)%5000, 10)
		}
		return "ok", script.Run(ctx, rdb, keys, args...).Err()
	})
	return r, limitErr(r)
}

// lockShowSeats is how many seats measureSeatLock locks in one show before
// it moves to the next: place's show size.
const lockShowSeats = 5000

// measureSeatLock runs the embedded stack's seat store, seats.Memory, in
// the bench's process (the server's lives inside the server): Lock of 1 to
// 4 fresh seats (cycling, as measureEval), no purchase limit. A Lock never
// takes a seat twice, so each show fills up to lockShowSeats and the show
// two behind is deleted, which keeps the state at place's size.
func measureSeatLock(ctx context.Context, o Options, p *progress) loadResult {
	m := seats.NewMemory()
	const opsPerShow = lockShowSeats / 4
	return runLoad(ctx, limitSpec(o, "limit: seat store lock (in-process)"), p, func(ctx context.Context, i int64) (string, error) {
		show := i / opsPerShow
		if i%opsPerShow == 0 && show >= 2 {
			if err := m.DeleteShow(ctx, show-2); err != nil {
				return "", err
			}
		}
		n := 1 + i%4
		ids := make([]string, n)
		for k := range n {
			ids[k] = "S-" + strconv.FormatInt(i*4+k, 10)
		}
		return "ok", m.Lock(ctx, show, i%100, "SF20260101000000aaaaaaaaaaaa", ids, 0, time.Now())
	})
}

// measureCommit runs single-row INSERT+COMMIT transactions on a throwaway
// table of the stack's database, through a pool like the server's
// (store.Open's defaults: 32 connections on MySQL, the one writer on SQLite),
// and where the machine's CPU went meanwhile.
func measureCommit(ctx context.Context, o Options, s *stack, p *progress) (_ loadResult, _ cpuUsage, err error) {
	x := s.db.X()
	table := "bench_commit_" + randHex(4)
	ddl := "CREATE TABLE " + table + " (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, k VARCHAR(40) NOT NULL, v BIGINT NOT NULL) ENGINE=InnoDB"
	if s.db.Dialect() == store.SQLite {
		ddl = "CREATE TABLE " + table + " (id INTEGER PRIMARY KEY, k TEXT NOT NULL, v BIGINT NOT NULL)"
	}
	if _, err := x.ExecContext(ctx, ddl); err != nil {
		return loadResult{}, cpuUsage{}, fmt.Errorf("create %s: %w", table, err)
	}
	defer func() {
		if _, derr := x.ExecContext(context.WithoutCancel(ctx), "DROP TABLE "+table); derr != nil {
			err = errors.Join(err, fmt.Errorf("drop %s: %w", table, derr))
		}
	}()
	insert := "INSERT INTO " + table + " (k, v) VALUES (?, ?)"
	ledger := s.startCPULedger()
	r := runLoad(ctx, limitSpec(o, "limit: DB INSERT+COMMIT"), p, func(ctx context.Context, i int64) (string, error) {
		tx, err := x.BeginTxx(ctx, nil)
		if err != nil {
			return "", fmt.Errorf("begin: %w", err)
		}
		if _, err := tx.ExecContext(ctx, insert, "SF20260101000000aaaaaaaaaaaa", i); err != nil {
			return "", errors.Join(fmt.Errorf("insert: %w", err), tx.Rollback())
		}
		if err := tx.Commit(); err != nil {
			return "", fmt.Errorf("commit: %w", err)
		}
		return "ok", nil
	})
	return r, ledger.stop(r.Ops), limitErr(r)
}

// limitMsgs is a message of one order's timeout, of the engine's size
// (order numbers and trace ids have a fixed length): the raw limit is one
// send per message, whatever a message carries.
func limitMsgs(i int64, due time.Time) []core.TimeoutMsg {
	return []core.TimeoutMsg{{OrderNo: fmt.Sprintf("SF%s%012x", due.UTC().Format("20060102150405"), i),
		Hop: 1, DueAt: due, TraceID: fmt.Sprintf("%016x", i)}}
}

// measureSend sends timeout-sized messages with the delay plan the server
// uses for its first hop, on the real stack after the broker's warm-up
// (whose window rates it returns). Real stack: RocketMQ on a topic of the bench's own
// that nobody consumes. Embedded: the DB queue's Send on the server's
// database, due a day later so the server never picks the rows up.
func measureSend(ctx context.Context, o Options, s *stack, policy core.DelayPolicy, p *progress) (_ loadResult, warmup []float64, err error) {
	var (
		q    core.DelayQueue
		plan core.DelayPlan
	)
	if o.Stack == StackReal {
		mq, err := rocketmq.ParseURL(s.mq) // through the proxies with --rtt, as the server's sends
		if err != nil {
			return loadResult{}, nil, err
		}
		id := randHex(4)
		mq.Topic, mq.Group, mq.Logger = "SEATFLOW_BENCH_SEND_"+id, "seatflow-bench-send-"+id, quietLog()
		rq, err := rocketmq.New(ctx, mq)
		if err != nil {
			return loadResult{}, nil, err
		}
		q, plan = rq, policy.Plan(s.cfg.holdTTL)
	} else {
		dq, err := dbqueue.New(s.db.X(), string(s.db.Dialect()), dbqueue.Options{Levels: policy.Levels})
		if err != nil {
			return loadResult{}, nil, err
		}
		q, plan = dq, core.DelayPlan{Delay: 24 * time.Hour}
	}
	defer func() { err = errors.Join(err, q.Close()) }()
	send := func(ctx context.Context, i int64) (string, error) {
		return "ok", q.Send(ctx, limitMsgs(i, time.Now().Add(plan.Delay)), plan.Level, plan.Delay)
	}
	if o.Stack == StackReal {
		if warmup, err = warmUp(ctx, o, p, send); err != nil {
			return loadResult{}, nil, fmt.Errorf("broker warm-up: %w", err)
		}
	}
	label := fmt.Sprintf("limit: queue send (level %d, delay %v)", plan.Level, plan.Delay)
	r := runLoad(ctx, limitSpec(o, label), p, send)
	return r, warmup, limitErr(r)
}

// Broker warm-up: a broker started moments ago (its JIT compiling the
// store path) costs several times its steady CPU per message, so the
// figures of the first phases would be the warm-up's. The real stack's
// limits therefore start with windows of sends, as fast as o.Clients go,
// until two in a row agree within warmTolerance, or warmMax has passed.
const (
	warmWindow    = time.Second
	warmTolerance = 0.10
	warmMax       = 30 * time.Second
)

// warmUp runs send in windows of warmWindow until the rate settles and
// returns each window's rate (sends/s). A cold broker times some sends
// out: a window's failures only end it early (they count as no rate); the
// warm-up fails when a window sends nothing at all.
func warmUp(ctx context.Context, o Options, p *progress, send func(context.Context, int64) (string, error)) ([]float64, error) {
	var rates []float64
	for start := time.Now(); time.Since(start) < warmMax; {
		r := runLoad(ctx, loadSpec{Label: fmt.Sprintf("broker warm-up, window %d", len(rates)+1), Clients: o.Clients,
			Duration: warmWindow, MaxErrors: math.MaxInt64}, p, send)
		if r.Stopped == "cancelled" {
			return rates, ctx.Err()
		}
		if r.Ops == 0 {
			return rates, fmt.Errorf("no send went through in %v (%d failed, first: %s)", warmWindow, r.Errors, r.FirstErr)
		}
		if r.Errors > 0 {
			p.logf("broker warm-up, window %d: %d sends failed (first: %s)", len(rates)+1, r.Errors, r.FirstErr)
		}
		rates = append(rates, r.Rate)
		if n := len(rates); n >= 2 && math.Abs(rates[n-1]-rates[n-2]) <= warmTolerance*rates[n-1] {
			break
		}
	}
	return rates, nil
}
