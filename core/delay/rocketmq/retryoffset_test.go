package rocketmq

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"seatflow/core"
)

// TestRetryMessagesWaitingBeforeTheGroupCommittedARetryOffsetAreDelivered
// puts timeout messages into the group's %RETRY% topic the way the broker
// does with a failed message (RETRY_TOPIC names the original topic) before
// the group has committed any offset there: what a consumer restarted
// before its retry offset was persisted, a new group's first retries or a
// new master find. A consumer starting then must deliver them. The client
// library starts a retry queue at its end when the broker has no offset
// for it, but the broker (checked on 5.3.3) answers offset 0 instead while
// the queue's first message is still at offset 0 and in memory, as here.
func TestRetryMessagesWaitingBeforeTheGroupCommittedARetryOffsetAreDelivered(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	q := newQueue(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := q.ensureRetryTopic(ctx); err != nil {
		t.Fatal(err)
	}

	want := map[string]bool{}
	for range 2 {
		msg := core.TimeoutMsg{OrderNo: "RETRY-" + rand.Text()[:8], Hop: 2}
		body, err := json.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		m := primitive.NewMessage(retryTopicPrefix+cfg.Group, body).WithKeys([]string{msg.OrderNo})
		m.WithProperty(primitive.PropertyRetryTopic, cfg.Topic)
		if res, err := q.producer.SendSync(ctx, m); err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send to the retry topic: %v %v", res, err)
		}
		want[msg.OrderNo] = true
	}

	rec := newRecorder(0)
	started := time.Now()
	consume(t, q, rec.handle)
	for range want {
		d := rec.next(t, 20*time.Second)
		if !want[d.msg.OrderNo] {
			t.Errorf("delivered %+v, want one of %v", d.msg, want)
		}
		delete(want, d.msg.OrderNo)
	}
	// Closing within the client's start-up rebalances trips a data race in
	// the library (see the close test).
	time.Sleep(time.Until(started.Add(2 * time.Second)))
}
