package rocketmq

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core"
)

// TestHandlerAlwaysFailingForOneOrderLandsInTheDLQAndIsCounted injects a
// handler fault for one order against the real broker: the consumer gives
// it exactly MaxAttempts calls, the broker moves it to %DLQ%<group>, and
// the queue reads it back from there (attempts, last error, payload) while
// the other order is handled once. With 2 attempts the one retry waits the
// broker's level-3 back-off (~10 s); the figure is printed. Sent in one
// message with the other order, the poison order is split off after its
// first failure and sent alone, so it takes one call more and its dead
// letter is its own.
func TestHandlerAlwaysFailingForOneOrderLandsInTheDLQAndIsCounted(t *testing.T) {
	for _, tt := range []struct {
		maxAttempts int
		batched     bool
	}{{1, false}, {2, false}, {1, true}, {2, true}} {
		maxAttempts := tt.maxAttempts
		t.Run(fmt.Sprintf("max attempts %d, in one message %v", maxAttempts, tt.batched), func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t)
			cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			cfg.MaxAttempts = maxAttempts
			dead := make(chan core.DeadLetter, 4)
			cfg.OnDeadLetter = func(_ context.Context, d core.DeadLetter) error {
				dead <- d
				return nil
			}
			q := newQueue(t, cfg)

			poison, good := "POISON-"+rand.Text()[:8], "OK-"+rand.Text()[:8]
			var poisonCalls, goodCalls atomic.Int32
			// Written by the consumer's goroutine, read here after the
			// dead letter came back through the broker: the race detector
			// sees no ordering through the network, so it is atomic.
			var failedAt atomic.Int64
			consume(t, q, func(_ context.Context, msg core.TimeoutMsg) error {
				switch msg.OrderNo {
				case poison:
					poisonCalls.Add(1)
					failedAt.CompareAndSwap(0, time.Now().UnixNano())
					return fmt.Errorf("injected fault: handler always fails for %s", poison)
				case good:
					goodCalls.Add(1)
				}
				return nil
			})
			poisonMsg, goodMsg := core.TimeoutMsg{OrderNo: poison, Hop: 4, TraceID: "trace-" + poison}, core.TimeoutMsg{OrderNo: good, Hop: 1}
			wantPoisonCalls := int32(maxAttempts)
			if tt.batched {
				if err := q.Send(t.Context(), []core.TimeoutMsg{goodMsg, poisonMsg}, 0, 0); err != nil {
					t.Fatal(err)
				}
				wantPoisonCalls++
			} else {
				send(t, q, poisonMsg, 0, 0)
				send(t, q, goodMsg, 0, 0)
			}

			var d core.DeadLetter
			select {
			case d = <-dead:
			case <-time.After(time.Duration(maxAttempts) * 30 * time.Second):
				t.Fatalf("no dead letter read from the DLQ; poison handled %d times", poisonCalls.Load())
			}
			t.Logf("dead letter read %v after the first failure: %+v", time.Since(time.Unix(0, failedAt.Load())), d)
			if d.Msg.OrderNo != poison || d.Msg.Hop != 4 || d.Msg.TraceID != "trace-"+poison || d.Source != core.DeadLetterRocketMQ ||
				d.MsgKey == "" || !strings.Contains(d.Payload, poison) || d.Attempts < maxAttempts ||
				!strings.Contains(d.LastError, "injected fault") {
				t.Errorf("dead letter %+v", d)
			}
			if got := poisonCalls.Load(); got != wantPoisonCalls {
				t.Errorf("poison handler calls = %d, want %d", got, wantPoisonCalls)
			}
			// The other order's message is consumed beside the poison's,
			// not before its dead letter is read back: wait for it.
			for deadline := time.Now().Add(30 * time.Second); goodCalls.Load() == 0 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if got := goodCalls.Load(); got != 1 {
				t.Errorf("other order handled %d times, want 1", got)
			}
			select {
			case extra := <-dead:
				t.Errorf("second dead letter %+v", extra)
			default:
			}
		})
	}
}
