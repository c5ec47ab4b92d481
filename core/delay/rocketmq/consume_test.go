package rocketmq

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"seatflow/core"
)

// TestHandle covers the consumer callback without a broker: what is acked,
// what goes back for a retry, and what the handler sees. Bodies of one
// order's core.TimeoutMsg are what versions before batch messages sent.
func TestHandle(t *testing.T) {
	due := time.Date(2026, 12, 1, 10, 15, 0, 0, time.UTC)
	valid := `{"order_no":"O1","hop":2,"due_at":"2026-12-01T10:15:00Z","trace_id":"body-trace"}`
	tests := []struct {
		name      string
		body      string
		props     map[string]string
		closing   bool
		handler   func(ctx context.Context, msg core.TimeoutMsg) error
		wantAck   bool
		wantCalls int
		wantMsg   core.TimeoutMsg
		wantTrace string // trace id the handler finds in its ctx
		wantErr   bool   // what OnConsumed hears
	}{
		{
			name: "valid", body: valid, wantAck: true, wantCalls: 1,
			wantMsg:   core.TimeoutMsg{OrderNo: "O1", Hop: 2, DueAt: due, TraceID: "body-trace"},
			wantTrace: "body-trace",
		},
		{
			name: "trace id from property when body has none", body: `{"order_no":"O2","hop":1}`,
			props: map[string]string{PropTraceID: "prop-trace"}, wantAck: true, wantCalls: 1,
			wantMsg:   core.TimeoutMsg{OrderNo: "O2", Hop: 1, TraceID: "prop-trace"},
			wantTrace: "prop-trace",
		},
		{
			name: "one-order batch body", body: `{"orders":[` + valid + `]}`, wantAck: true, wantCalls: 1,
			wantMsg:   core.TimeoutMsg{OrderNo: "O1", Hop: 2, DueAt: due, TraceID: "body-trace"},
			wantTrace: "body-trace",
		},
		{name: "malformed json is acked", body: `{"order_no":`, wantAck: true},
		{name: "empty batch is acked", body: `{"orders":[]}`, wantAck: true},
		{name: "batch with an order missing its number is acked", body: `{"orders":[` + valid + `,{"hop":1}]}`, wantAck: true},
		{name: "missing order no is acked", body: `{"hop":1}`, wantAck: true},
		{name: "null body is acked", body: `null`, wantAck: true},
		{
			name: "handler error is retried", body: valid, wantCalls: 1, wantErr: true,
			handler: func(context.Context, core.TimeoutMsg) error { return errors.New("db down") },
			wantMsg: core.TimeoutMsg{OrderNo: "O1", Hop: 2, DueAt: due, TraceID: "body-trace"}, wantTrace: "body-trace",
		},
		{
			name: "handler panic is retried", body: valid, wantCalls: 1, wantErr: true,
			handler: func(context.Context, core.TimeoutMsg) error { panic("boom") },
			wantMsg: core.TimeoutMsg{OrderNo: "O1", Hop: 2, DueAt: due, TraceID: "body-trace"}, wantTrace: "body-trace",
		},
		{name: "closing queue runs nothing and acks nothing", body: valid, closing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				calls    int
				gotMsg   core.TimeoutMsg
				gotTrace string
				observed []error
			)
			cfg, err := Config{NameServers: []string{"127.0.0.1:9876"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				OnConsumed: func(_ time.Duration, err error) { observed = append(observed, err) }}.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			// A closing queue holds a delivery until its consumer stopped:
			// here it already has.
			stopped := make(chan struct{})
			close(stopped)
			q := &Queue{cfg: cfg, log: cfg.Logger, closing: tt.closing, consumerStopped: stopped}
			h := func(ctx context.Context, msg core.TimeoutMsg) error {
				calls++
				gotMsg, gotTrace = msg, core.TraceID(ctx)
				if _, ok := ctx.Deadline(); !ok {
					t.Error("handler ctx has no deadline")
				}
				if tt.handler != nil {
					return tt.handler(ctx, msg)
				}
				return nil
			}
			m := &primitive.MessageExt{Message: primitive.Message{Body: []byte(tt.body)}}
			for k, v := range tt.props {
				m.WithProperty(k, v)
			}

			if got := q.handle(context.Background(), core.PerTimeout(h), m); got != tt.wantAck {
				t.Errorf("ack = %v, want %v", got, tt.wantAck)
			}
			if calls != tt.wantCalls {
				t.Fatalf("handler calls = %d, want %d", calls, tt.wantCalls)
			}
			if calls == 0 {
				if len(observed) != 0 {
					t.Errorf("OnConsumed called %d times without a handler call", len(observed))
				}
				return
			}
			if !gotMsg.DueAt.Equal(tt.wantMsg.DueAt) || gotMsg.OrderNo != tt.wantMsg.OrderNo ||
				gotMsg.Hop != tt.wantMsg.Hop || gotMsg.TraceID != tt.wantMsg.TraceID {
				t.Errorf("handler got %+v, want %+v", gotMsg, tt.wantMsg)
			}
			if gotTrace != tt.wantTrace {
				t.Errorf("ctx trace id = %q, want %q", gotTrace, tt.wantTrace)
			}
			if len(observed) != 1 || (observed[0] != nil) != tt.wantErr {
				t.Errorf("OnConsumed saw %v, want one call with error=%v", observed, tt.wantErr)
			}
		})
	}
}
