package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// errDone is what an op returns when there is no more work: no new ops
// start, those in flight finish.
var errDone = errors.New("no more work")

// loadSpec bounds one load phase in count and in time.
type loadSpec struct {
	Label    string
	Clients  int
	Ops      int64         // most ops started; 0: until an op returns errDone
	Duration time.Duration // time bound of the phase
	// Interval, when positive, paces the phase: op i starts no earlier than
	// start + i×Interval.
	Interval  time.Duration
	MaxErrors int64 // the phase stops after this many failed ops; 0 means 100
}

// op is one request of a load phase: i numbers the ops from 0. Its outcome
// ("ok", "conflict", ...) is counted; an error is a failed op.
type op func(ctx context.Context, i int64) (outcome string, err error)

// loadResult is what one phase measured.
type loadResult struct {
	Ops      int64            `json:"ops"` // ops that completed without error
	Elapsed  time.Duration    `json:"elapsed_ns"`
	Rate     float64          `json:"ops_per_s"`
	Latency  Summary          `json:"latency"`
	Outcomes map[string]int64 `json:"outcomes"`
	Errors   int64            `json:"errors"`
	FirstErr string           `json:"first_error,omitempty"`
	Stopped  string           `json:"stopped"` // done, count, time or errors
	samples  []time.Duration
}

// runLoad runs fn from spec.Clients goroutines until the work is done or a
// bound is hit. Every completed op's latency is kept (see summarize).
func runLoad(ctx context.Context, spec loadSpec, p *progress, fn op) loadResult {
	maxErrors := spec.MaxErrors
	if maxErrors == 0 {
		maxErrors = 100
	}
	ctx, cancel := context.WithTimeout(ctx, spec.Duration)
	defer cancel()

	var (
		next, done, failed atomic.Int64
		mu                 sync.Mutex // guards firstErr and stopped
		firstErr           error
		stopped            string
		wg                 sync.WaitGroup
	)
	// halt ends the phase: no new op starts. Only a failed phase (errors,
	// time) also cancels the ops in flight; a finished one lets them end,
	// or their half-done work would be measured by the checks that follow.
	var halted atomic.Bool
	halt := func(why string) {
		mu.Lock()
		if stopped == "" {
			stopped = why
		}
		mu.Unlock()
		halted.Store(true)
		if why == "errors" || why == "time" {
			cancel()
		}
	}
	samples := make([][]time.Duration, spec.Clients)
	outcomes := make([]map[string]int64, spec.Clients)
	t := p.track(spec.Label, spec.Ops, func() (int64, string) {
		if n := failed.Load(); n > 0 {
			return done.Load(), fmt.Sprintf("errors %d", n)
		}
		return done.Load(), ""
	})
	start := time.Now()
	var last atomic.Int64 // end of the latest op, ns since start
	for w := range spec.Clients {
		outcomes[w] = map[string]int64{}
		wg.Go(func() {
			defer func() {
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					halt("time")
				}
			}()
			for ctx.Err() == nil && !halted.Load() {
				i := next.Add(1) - 1
				if spec.Ops > 0 && i >= spec.Ops {
					halt("count")
					return
				}
				if spec.Interval > 0 {
					wait := time.Until(start.Add(time.Duration(i) * spec.Interval))
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
				}
				t0 := time.Now()
				outcome, err := fn(ctx, i)
				end := time.Now()
				switch {
				case errors.Is(err, errDone):
					halt("done")
					return
				case err != nil && ctx.Err() != nil:
					return // cut short by the phase's own bound, not a failure
				case err != nil:
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					if failed.Add(1) >= maxErrors {
						halt("errors")
					}
					continue
				}
				samples[w] = append(samples[w], end.Sub(t0))
				outcomes[w][outcome]++
				done.Add(1)
				for e := int64(end.Sub(start)); ; {
					l := last.Load()
					if e <= l || last.CompareAndSwap(l, e) {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	t.done()

	r := loadResult{Ops: done.Load(), Elapsed: time.Duration(last.Load()), Outcomes: map[string]int64{},
		Errors: failed.Load(), Stopped: stopped}
	if r.Stopped == "" {
		r.Stopped = "cancelled"
	}
	if firstErr != nil {
		r.FirstErr = firstErr.Error()
	}
	for w := range spec.Clients {
		r.samples = append(r.samples, samples[w]...)
		for k, v := range outcomes[w] {
			r.Outcomes[k] += v
		}
	}
	if r.Elapsed > 0 {
		r.Rate = float64(r.Ops) / r.Elapsed.Seconds()
	}
	r.Latency = summarize(r.samples)
	return r
}

// failure reports a phase that did not finish its work: stopped by its
// error budget or its time bound.
func (r loadResult) failure() error {
	switch r.Stopped {
	case "errors":
		return fmt.Errorf("%d ops failed (first: %s)", r.Errors, r.FirstErr)
	case "time":
		return fmt.Errorf("time bound hit after %d ops", r.Ops)
	case "cancelled":
		return errors.New("cancelled")
	}
	return nil
}
