package rocketmq

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"seatflow/core"
)

// TestBatchMessages runs batch messages through the real broker: one
// message carries several orders' timeouts, each delivered intact to one
// handler call; a message in the body of the versions before batches (one
// order's core.TimeoutMsg, with its key and trace property) still reaches
// the handler; and a batch every timeout of which fails every attempt
// becomes one dead letter per order, each retried alone.
func TestBatchMessages(t *testing.T) {
	t.Run("one message, several orders", func(t *testing.T) {
		t.Parallel()
		q := newTestQueue(t, nil)
		calls := make(chan []core.TimeoutMsg, 4)
		if err := q.Consume(t.Context(), func(_ context.Context, msgs []core.TimeoutMsg) []error {
			calls <- slices.Clone(msgs)
			return make([]error, len(msgs))
		}); err != nil {
			t.Fatal(err)
		}
		due := time.Now().Add(time.Second).UTC().Truncate(time.Millisecond)
		var sent []core.TimeoutMsg
		for i := range 3 {
			sent = append(sent, core.TimeoutMsg{OrderNo: "ORD-" + rand.Text()[:8], Hop: i + 1, DueAt: due, TraceID: "trace-" + rand.Text()[:6]})
		}
		if err := q.Send(t.Context(), sent, 1, time.Second); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-calls:
			if len(got) != len(sent) {
				t.Fatalf("handler got %d timeouts in one call, want %d", len(got), len(sent))
			}
			for i := range sent {
				if got[i].OrderNo != sent[i].OrderNo || got[i].Hop != sent[i].Hop || got[i].TraceID != sent[i].TraceID || !got[i].DueAt.Equal(sent[i].DueAt) {
					t.Errorf("timeout %d: got %+v, want %+v", i, got[i], sent[i])
				}
			}
		case <-time.After(20 * time.Second):
			t.Fatal("batch message not delivered")
		}
		// A healthy broker delivers once; a second copy within the wait is a
		// bug here (and the wait lets the consumer's first rebalance end
		// before Close: the client library races with a Close during it).
		time.Sleep(time.Second)
		if n := len(calls); n != 0 {
			t.Errorf("the batch was delivered %d times more", n)
		}
	})

	t.Run("a message of the version before batches", func(t *testing.T) {
		t.Parallel()
		q := newTestQueue(t, nil)
		rec := newRecorder(0)
		consume(t, q, rec.handle)
		old := core.TimeoutMsg{OrderNo: "ORD-" + rand.Text()[:8], Hop: 3, DueAt: time.Now().UTC().Truncate(time.Millisecond), TraceID: "trace-old"}
		body, err := json.Marshal(old) // exactly what Send wrote before batches
		if err != nil {
			t.Fatal(err)
		}
		m := primitive.NewMessage(q.cfg.Topic, body).WithKeys([]string{old.OrderNo})
		m.WithProperty(PropTraceID, old.TraceID)
		m.WithProperty(PropHop, "3")
		if res, err := q.producer.SendSync(t.Context(), m); err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send an old message: %v %v", res, err)
		}
		d := rec.next(t, 20*time.Second)
		if d.msg.OrderNo != old.OrderNo || d.msg.Hop != old.Hop || d.msg.TraceID != old.TraceID || !d.msg.DueAt.Equal(old.DueAt) {
			t.Errorf("handler got %+v, want %+v", d.msg, old)
		}
		if d.trace != old.TraceID {
			t.Errorf("ctx trace id %q, want %q", d.trace, old.TraceID)
		}
		time.Sleep(time.Second) // as above
		if n := rec.count(); n != 1 {
			t.Errorf("delivered %d times, want 1", n)
		}
	})

	t.Run("every timeout fails: one dead letter per order", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig(t)
		cfg.MaxAttempts = 1
		dead := make(chan core.DeadLetter, 4)
		cfg.OnDeadLetter = func(_ context.Context, d core.DeadLetter) error {
			dead <- d
			return nil
		}
		q := newQueue(t, cfg)
		if err := q.Consume(t.Context(), func(_ context.Context, msgs []core.TimeoutMsg) []error {
			return core.FailAll(len(msgs), context.DeadlineExceeded) // the database is out of reach
		}); err != nil {
			t.Fatal(err)
		}
		a, b := "POISON-A-"+rand.Text()[:6], "POISON-B-"+rand.Text()[:6]
		if err := q.Send(t.Context(), []core.TimeoutMsg{{OrderNo: a, Hop: 1}, {OrderNo: b, Hop: 2}}, 0, 0); err != nil {
			t.Fatal(err)
		}
		got := map[string]core.DeadLetter{}
		for len(got) < 2 {
			select {
			case d := <-dead:
				got[d.Msg.OrderNo] = d
			case <-time.After(60 * time.Second):
				t.Fatalf("dead letters read: %+v, want one for each of %s and %s", got, a, b)
			}
		}
		for no, other := range map[string]string{a: b, b: a} {
			d := got[no]
			if !strings.HasSuffix(d.MsgKey, "/"+no) || !strings.Contains(d.Payload, no) || strings.Contains(d.Payload, other) {
				t.Errorf("dead letter of %s: key %q payload %q, want its own key and payload", no, d.MsgKey, d.Payload)
			}
		}
		if got[a].MsgKey == got[b].MsgKey {
			t.Errorf("both dead letters keyed %q", got[a].MsgKey)
		}
	})
}
