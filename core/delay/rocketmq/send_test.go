package rocketmq

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"seatflow/core"
)

// fakeProducer records what Send hands to the library.
type fakeProducer struct {
	rmq.Producer // only SendSync is called
	status       primitive.SendStatus
	err          error
	got          *primitive.Message
	deadline     time.Duration // time left on ctx when SendSync ran
}

func (p *fakeProducer) SendSync(ctx context.Context, msgs ...*primitive.Message) (*primitive.SendResult, error) {
	p.got = msgs[0]
	if d, ok := ctx.Deadline(); ok {
		p.deadline = time.Until(d)
	}
	if p.err != nil {
		return nil, p.err
	}
	return &primitive.SendResult{Status: p.status}, nil
}

// TestSend covers the message Send builds and how it reads the result,
// without a broker (the broker tests check the delays themselves).
func TestSend(t *testing.T) {
	msg := core.TimeoutMsg{OrderNo: "O1", Hop: 4, DueAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), TraceID: "tr-1"}
	tests := []struct {
		name      string
		level     int
		delay     time.Duration
		status    primitive.SendStatus
		sendErr   error
		closed    bool
		wantErr   error // errors.Is target; nil with wantFail means any error
		wantFail  bool
		wantLevel string        // DELAY property
		wantTimer time.Duration // TIMER_DELIVER_MS - now, 0 = property absent
	}{
		{name: "level", level: 3, delay: 10 * time.Second, wantLevel: "3"},
		{name: "timer", delay: 90 * time.Second, wantTimer: 90 * time.Second},
		{name: "no delay", level: 0, delay: 0},
		{name: "negative level", level: -1, wantFail: true},
		{name: "flush timeout is an error", level: 1, status: primitive.SendFlushDiskTimeout, wantFail: true},
		{name: "send error", level: 1, sendErr: errors.New("broker busy"), wantFail: true},
		{name: "closed", level: 1, closed: true, wantErr: ErrClosed, wantFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakeProducer{status: tt.status, err: tt.sendErr}
			cfg, err := Config{NameServers: []string{"127.0.0.1:9876"}, Topic: "T", SendTimeout: 2 * time.Second,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			q := &Queue{cfg: cfg, log: cfg.Logger, producer: p}
			q.closed.Store(tt.closed)

			start := time.Now()
			err = q.Send(context.Background(), []core.TimeoutMsg{msg}, tt.level, tt.delay)
			if tt.wantFail {
				if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
					t.Fatalf("Send = %v, want an error (%v)", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Send = %v", err)
			}
			m := p.got
			got, err := decodeBody(m.Body)
			if err != nil || len(got) != 1 || got[0].OrderNo != msg.OrderNo ||
				got[0].Hop != msg.Hop || got[0].TraceID != msg.TraceID || !got[0].DueAt.Equal(msg.DueAt) {
				t.Errorf("body %s (%v), want one timeout %+v", m.Body, err, msg)
			}
			if m.Topic != "T" || m.GetKeys() != "O1" || m.GetProperty(PropTraceID) != "tr-1" || m.GetProperty(PropHop) != "4" {
				t.Errorf("topic %q keys %q props %v", m.Topic, m.GetKeys(), m.GetProperties())
			}
			if got := m.GetProperty(primitive.PropertyDelayTimeLevel); got != tt.wantLevel {
				t.Errorf("delay level property %q, want %q", got, tt.wantLevel)
			}
			timer := m.GetProperty(primitive.PropertyTimerDeliverMS)
			if tt.wantTimer == 0 {
				if timer != "" {
					t.Errorf("timer property %q, want none", timer)
				}
			} else {
				ms, err := strconv.ParseInt(timer, 10, 64)
				if err != nil {
					t.Fatalf("timer property %q: %v", timer, err)
				}
				if at := time.UnixMilli(ms); at.Before(start.Add(tt.wantTimer).Truncate(time.Millisecond)) ||
					at.After(time.Now().Add(tt.wantTimer)) {
					t.Errorf("timer deliver at %v, want now+%v", at, tt.wantTimer)
				}
			}
			if p.deadline <= 0 || p.deadline > 2*time.Second {
				t.Errorf("SendSync ctx deadline in %v, want within SendTimeout 2s", p.deadline)
			}
		})
	}
}
