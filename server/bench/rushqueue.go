package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"seatflow/core/admission"
)

// The rush through the show's waiting room (ISSUE29.md item 2): the queue
// opens a little after the buyers arrive, so they form a pre-queue drawn
// at opening; the last of them arrive one by one after it, first come
// first served. Buyers join, poll as told, and place with their admission.

// Queue rush shape.
const (
	lateGap       = 10 * time.Millisecond // between two late arrivals
	maxLateBuyers = 200
	pollFloor     = 50 * time.Millisecond // a poll_after_ms below it is taken as it
)

// lateBuyers is how many of the buyers arrive after opening.
func lateBuyers(buyers int) int { return min(max(buyers/10, 2), maxLateBuyers, buyers/2) }

// openAfter is how long after the rush starts the queue opens: time for
// the buyers at once to have joined, on this 2-core machine.
func openAfter(buyers int) time.Duration {
	return 3*time.Second + time.Duration(buyers)*500*time.Microsecond
}

// queueView is a join's or a poll's answer.
type queueView struct {
	Ticket      string `json:"ticket"`
	State       string `json:"state"`
	Position    int64  `json:"position"`
	PollAfterMS int64  `json:"poll_after_ms"`
	Admission   string `json:"admission"`
}

func queuePath(show int64) string { return fmt.Sprintf("/api/v1/shows/%d/queue", show) }

// enableQueue turns the show's queue on, opening at opensAt (zero: open).
func enableQueue(ctx context.Context, c *apiClient, show int64, opensAt time.Time) error {
	set := map[string]any{"enabled": true}
	if !opensAt.IsZero() {
		set["opens_at"] = opensAt.UTC().Format(time.RFC3339Nano)
	}
	body, err := json.Marshal(set)
	if err != nil {
		return err
	}
	if err := c.do(ctx, http.MethodPut, queuePath(show), body, nil, nil); err != nil {
		return fmt.Errorf("enable the queue of show %d: %w", show, err)
	}
	return nil
}

func joinBody(user int64) []byte { return []byte(`{"user_id":` + strconv.FormatInt(user, 10) + `}`) }

// waitAdmission joins the show's queue and polls until admitted; false
// when the buyer stops first (sold out, failure, the rush's bound).
func (b *buyer) waitAdmission(ctx context.Context) (string, bool) {
	if !b.lateAt.IsZero() {
		select {
		case <-ctx.Done():
			return "", false
		case <-time.After(time.Until(b.lateAt)):
		}
	}
	var v queueView
	b.t.joinSent = time.Since(b.run.start)
	status, d, err := b.send(ctx, http.MethodPost, queuePath(b.run.show), joinBody(b.user), &v)
	if status != http.StatusCreated && status != http.StatusOK {
		b.fail(err)
		return "", false
	}
	b.t.joins = append(b.t.joins, d)
	b.t.joinDone, b.t.late = time.Since(b.run.start), !b.lateAt.IsZero()
	for {
		if v.Position > 0 {
			b.t.position = v.Position
		}
		if v.State == "admitted" {
			return v.Admission, true
		}
		wait := max(time.Duration(v.PollAfterMS)*time.Millisecond, pollFloor)
		select {
		case <-ctx.Done():
			return "", false
		case <-time.After(wait):
		}
		if b.run.soldOut.Load() {
			return "", false
		}
		status, d, err = b.send(ctx, http.MethodGet, "/api/v1/queue/"+v.Ticket, nil, &v)
		if status != http.StatusOK {
			b.fail(err)
			return "", false
		}
		b.t.polls = append(b.t.polls, d)
	}
}

// fairness is the rank correlation of arrival and position in line: about
// 0 in the drawn pre-queue, 1 after opening (first come, first served).
type fairness struct {
	PreQueue     float64 `json:"pre_queue_rank_correlation"`
	PreN         int     `json:"pre_queue_pairs"`
	AfterOpening float64 `json:"after_opening_rank_correlation"`
	AfterN       int     `json:"after_opening_pairs"`
}

// newFairness pairs each buyer's arrival with its position: pre-queue
// buyers whose join was answered before opening, ranked by when it was;
// late buyers by when they joined. Buyers answered across the opening, or
// that never saw a position, are left out.
func newFairness(tallies []*tally, opens time.Duration) *fairness {
	var preX, preY, postX, postY []float64
	for _, t := range tallies {
		switch {
		case t.position == 0:
		case t.late:
			postX, postY = append(postX, float64(t.joinSent)), append(postY, float64(t.position))
		case t.joinDone > 0 && t.joinDone < opens:
			preX, preY = append(preX, float64(t.joinDone)), append(preY, float64(t.position))
		}
	}
	return &fairness{PreQueue: admission.RankCorrelation(preX, preY), PreN: len(preX),
		AfterOpening: admission.RankCorrelation(postX, postY), AfterN: len(postX)}
}

// joinsResult is the joins phase: joins through the API beside the raw
// rate of the queue's store.
type joinsResult struct {
	Show  int64      `json:"show_id"`
	Joins loadResult `json:"joins"`
	Raw   loadResult `json:"raw_store_op"`
	// RawOp names what the raw rate measured.
	RawOp string `json:"raw_store_op_name"`
}

// limitJoinLua has a join's shape on the seat store's Redis: the user's
// entry if it has one, else the next sequence number stored for it.
const limitJoinLua = `local s = redis.call('HGET', KEYS[1], ARGV[1])
if s then return s end
s = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], ARGV[1], s)
return s`

// runJoins sends o.Joins joins of distinct users to a fresh show's open
// queue from o.Clients clients, then measures the raw store operation for
// o.LimitTime with as many: on the real stack a script of a join's shape
// on the server's Redis, on the embedded one the in-process queue store's
// Join in the bench's process (the server's is out of reach).
func runJoins(ctx context.Context, o Options, s *stack, p *progress) (res joinsResult, err error) {
	if res.Show, err = s.newShowAPI(ctx, o.RushSeats); err != nil {
		return res, err
	}
	if err := enableQueue(ctx, s.api, res.Show, time.Time{}); err != nil {
		return res, err
	}
	spec := loadSpec{Label: fmt.Sprintf("queue joins (%d)", o.Joins), Clients: o.Clients, Ops: int64(o.Joins), Duration: o.MaxTime}
	res.Joins = runLoad(ctx, spec, p, func(ctx context.Context, i int64) (string, error) {
		h := http.Header{clientIPHeader: {buyerAddr(i + 1)}}
		return "ok", s.api.do(ctx, http.MethodPost, queuePath(res.Show), joinBody(i+1), h, nil)
	})
	if err := res.Joins.failure(); err != nil {
		return res, fmt.Errorf("joins: %w", err)
	}
	if s.rdb == nil {
		res.RawOp = "queue store Join (in-process)"
		m := admission.NewMemory()
		if _, err := m.Configure(ctx, 1, admission.Settings{Enabled: true}); err != nil {
			return res, err
		}
		res.Raw = runLoad(ctx, limitSpec(o, "limit: "+res.RawOp), p, func(ctx context.Context, i int64) (string, error) {
			_, _, err := m.Join(ctx, 1, i+1, "t", time.Now())
			return "ok", err
		})
		return res, limitErr(res.Raw)
	}
	res.RawOp = "Redis EVAL (join shape)"
	id := randHex(4)
	keys := []string{"sf:{bench:" + id + "}:joins", "sf:{bench:" + id + "}:seq"}
	defer func() { err = errors.Join(err, s.rdb.Unlink(context.WithoutCancel(ctx), keys...).Err()) }()
	script := redis.NewScript(limitJoinLua)
	res.Raw = runLoad(ctx, limitSpec(o, "limit: "+res.RawOp), p, func(ctx context.Context, i int64) (string, error) {
		return "ok", script.Run(ctx, s.rdb, keys, i+1).Err()
	})
	return res, limitErr(res.Raw)
}
