package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"seatflow/core"
)

// TestDeadLetterStoreDuplicateDLQDelivery: a broker message delivered twice
// from the DLQ is stored once (uk_msg_key), DB-queue dead letters (no key)
// are all kept, the list is newest first, a long error is cut, a delete
// wins once and the count is of those left.
func TestDeadLetterStoreDuplicateDLQDelivery(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		t0 := time.Now().UTC().Truncate(time.Millisecond)
		msg := func(no string) core.TimeoutMsg {
			return core.TimeoutMsg{OrderNo: no, Hop: 3, DueAt: t0, TraceID: "tr-" + no}
		}
		fromBroker := core.NewDeadLetter(core.DeadLetterRocketMQ, msg("SF-MQ"), 17, "", t0)
		fromBroker.MsgKey = "7F000001000000000000000000ABCDEF"
		tests := []struct {
			name  string
			d     core.DeadLetter
			added bool
		}{
			{"db queue", core.NewDeadLetter(core.DeadLetterDBQueue, msg("SF-1"), 16, strings.Repeat("错", 2000), t0), true},
			{"db queue, same order again", core.NewDeadLetter(core.DeadLetterDBQueue, msg("SF-1"), 16, "boom", t0.Add(time.Second)), true},
			{"broker", fromBroker, true},
			{"broker, delivered again", fromBroker, false},
		}
		for _, tt := range tests {
			added, err := db.AddDeadLetter(ctx, tt.d)
			if err != nil || added != tt.added {
				t.Errorf("%s: added %v, %v; want %v", tt.name, added, err, tt.added)
			}
		}
		list, err := db.DeadLetters(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 3 || list[0].Msg.OrderNo != "SF-1" || list[0].LastError != "boom" {
			t.Fatalf("list %+v", list)
		}
		for _, d := range list {
			if d.Msg.DueAt.IsZero() || !d.Msg.DueAt.Equal(t0) || d.Msg.TraceID != "tr-"+d.Msg.OrderNo {
				t.Errorf("dead letter %d: message %+v not rebuilt from its payload", d.ID, d.Msg)
			}
			if len(d.LastError) > 2000 {
				t.Errorf("dead letter %d: error of %d bytes kept", d.ID, len(d.LastError))
			}
		}
		id := list[0].ID
		for i, want := range []bool{true, false} {
			var deleted bool
			err := db.InDeadLetterTx(ctx, func(tx core.DeadLetterTx) error {
				var err error
				deleted, err = tx.DeleteDeadLetter(ctx, id)
				return err
			})
			if err != nil || deleted != want {
				t.Errorf("delete %d: %v, %v; want %v", i+1, deleted, err, want)
			}
		}
		if _, err := db.DeadLetter(ctx, id); !errors.Is(err, core.ErrDeadLetterNotFound) {
			t.Errorf("deleted dead letter: %v, want ErrDeadLetterNotFound", err)
		}
		// The dashboard's count: the ones still waiting for ops.
		if n, err := db.DeadLetterCount(ctx); err != nil || n != 2 {
			t.Errorf("DeadLetterCount after a delete = %d, %v; want 2", n, err)
		}
	})
}
