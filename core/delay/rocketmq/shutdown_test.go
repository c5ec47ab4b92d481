package rocketmq

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"seatflow/core"
)

// TestRestartsWhileAMessageIsDeliveredDoNotCountAsFailedAttempts restarts
// the consumer several times while one healthy message is being delivered:
// each time the message reaches the consumer callback, Close begins (the
// hooks hold the delivery until Close has stopped handler calls), and the
// consumer stops. With MaxAttempts 1 a restart counted as a failed attempt
// moves the message to the dead-letter topic at once. Every delivery must
// come with reconsume times 0, the consumer that stays up must handle it,
// and the dead-letter topic must have stayed empty: a marker the test
// writes there last must land at queue offset 0.
func TestRestartsWhileAMessageIsDeliveredDoNotCountAsFailedAttempts(t *testing.T) {
	t.Parallel()
	const restarts = 3
	base := testConfig(t)
	base.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	base.MaxAttempts = 1
	order := "RESTART-" + rand.Text()[:8]
	dlqTopic := dlqTopicPrefix + base.Group

	for i := range restarts + 1 {
		last := i == restarts
		cfg := base
		cfg.InstanceName = fmt.Sprintf("%s-%d", base.InstanceName, i)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		q, err := New(ctx, cfg)
		cancel()
		if err != nil {
			t.Fatalf("restart %d: New: %v", i, err)
		}
		arrived := make(chan int32, 1) // the message's reconsume times
		closing := make(chan struct{})
		q.onDeliver = func(m *primitive.MessageExt) {
			if m.GetKeys() != order {
				return
			}
			select {
			case arrived <- m.ReconsumeTimes:
			default:
			}
			if !last {
				<-closing // delivered while the consumer shuts down
			}
		}
		q.onClosing = func() { close(closing) }
		handled := make(chan struct{}, restarts+1)
		started := time.Now()
		consume(t, q, func(_ context.Context, msg core.TimeoutMsg) error {
			if msg.OrderNo == order {
				handled <- struct{}{}
			}
			return nil
		})
		if i == 0 {
			// As the broker would create it, with its one queue.
			if err := q.ensureTopic(context.Background(), dlqTopic, 1); err != nil {
				t.Fatal(err)
			}
			send(t, q, core.TimeoutMsg{OrderNo: order, Hop: 1}, 0, 0)
		}

		select {
		case n := <-arrived:
			if n != 0 {
				t.Errorf("restart %d: delivered with reconsume times %d, want 0 (a shutdown counted as a failed attempt)", i, n)
			}
		case <-time.After(20 * time.Second):
			_ = q.Close()
			t.Fatalf("restart %d: message not delivered within 20 s (moved to the dead-letter topic?)", i)
		}
		if last {
			select {
			case <-handled:
			case <-time.After(10 * time.Second):
				t.Errorf("the consumer that stays up did not handle the message")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			res, err := q.producer.SendSync(ctx, primitive.NewMessage(dlqTopic, []byte("marker")))
			cancel()
			if err != nil || res.Status != primitive.SendOK {
				t.Fatalf("send the marker to %s: %v %v", dlqTopic, res, err)
			}
			if res.QueueOffset != 0 {
				t.Errorf("%d message(s) reached %s before the marker, want none", res.QueueOffset, dlqTopic)
			}
		}
		// Closing within the client's start-up rebalances trips a data race
		// in the library (see the close test).
		time.Sleep(time.Until(started.Add(2 * time.Second)))
		if err := q.Close(); err != nil {
			t.Fatalf("restart %d: Close: %v", i, err)
		}
		if !last && len(handled) != 0 {
			t.Errorf("restart %d: handler ran for a message delivered while closing", i)
		}
	}
}
