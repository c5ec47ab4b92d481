package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/testenv"
	"seatflow/core/webhook"
)

// outboxRow is a webhook_outbox row as a test reads it.
type outboxRow struct {
	EventID     string `db:"event_id"`
	Kind        string `db:"kind"`
	Payload     string `db:"payload"`
	CreatedAt   int64  `db:"created_at"`
	NextAttempt int64  `db:"next_attempt_at"`
	Attempts    int    `db:"attempts"`
	DeliveredAt *int64 `db:"delivered_at"`
	LastError   string `db:"last_error"`
}

func readOutbox(t *testing.T, db *DB, eventID string) outboxRow {
	t.Helper()
	var r outboxRow
	if err := db.X().GetContext(context.Background(), &r, `SELECT event_id, kind, payload, created_at, next_attempt_at,
 attempts, delivered_at, last_error FROM webhook_outbox WHERE event_id = ?`, eventID); err != nil {
		t.Fatalf("outbox row %s: %v", eventID, err)
	}
	return r
}

func addWebhooks(ctx context.Context, db *DB, evs ...core.WebhookEvent) error {
	return db.InTx(ctx, func(tx core.Tx) error { return tx.AddWebhookEvents(ctx, evs) })
}

func webhookEvent(id string) core.WebhookEvent {
	return core.WebhookEvent{ID: id, Kind: "waitlist.offered", At: t0, Data: map[string]any{"order_no": "O-" + id}}
}

// TestAddWebhookEvents: events are written with their transaction or not at
// all, the body is the contract's, a bad or repeated event fails its
// transaction, and the wake-up runs after a commit that wrote events only.
func TestAddWebhookEvents(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		var wakes atomic.Int32
		db.OnWebhooksCommitted(func() { wakes.Add(1) })

		if err := addWebhooks(ctx, db, webhookEvent("evt_a"), webhookEvent("evt_b")); err != nil {
			t.Fatal(err)
		}
		r := readOutbox(t, db, "evt_a")
		var body map[string]any
		if err := json.Unmarshal([]byte(r.Payload), &body); err != nil {
			t.Fatalf("payload %q: %v", r.Payload, err)
		}
		want := `{"at":"2026-03-04T05:06:07.008Z","data":{"order_no":"O-evt_a"},"id":"evt_a","kind":"waitlist.offered"}`
		if got, _ := json.Marshal(body); string(got) != want {
			t.Errorf("payload %s, want %s", got, want)
		}
		if r.Kind != "waitlist.offered" || r.CreatedAt != ms(t0) || r.NextAttempt != 0 || r.Attempts != 0 || r.DeliveredAt != nil {
			t.Errorf("new row %+v: want due at once, no attempt, undelivered", r)
		}
		if n := wakes.Load(); n != 1 {
			t.Errorf("%d wake-ups after one commit with events, want 1", n)
		}

		boom := errors.New("boom")
		err := db.InTx(ctx, func(tx core.Tx) error {
			if err := tx.AddWebhookEvents(ctx, []core.WebhookEvent{webhookEvent("evt_rolled_back")}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("rolled-back transaction: %v", err)
		}
		for _, c := range []struct {
			name string
			evs  []core.WebhookEvent
		}{
			{"an id queued before", []core.WebhookEvent{webhookEvent("evt_c"), webhookEvent("evt_a")}},
			{"twice in one call", []core.WebhookEvent{webhookEvent("evt_d"), webhookEvent("evt_d")}},
			{"no kind", []core.WebhookEvent{{ID: "evt_e", At: t0}}},
			{"no id", []core.WebhookEvent{{Kind: "waitlist.offered", At: t0}}},
			{"no time", []core.WebhookEvent{{ID: "evt_f", Kind: "waitlist.offered"}}},
			{"data that is not JSON", []core.WebhookEvent{{ID: "evt_g", Kind: "k", At: t0, Data: map[string]any{"f": func() {}}}}},
			{"an id too long", []core.WebhookEvent{{ID: strings.Repeat("x", 65), Kind: "k", At: t0}}},
		} {
			if err := addWebhooks(ctx, db, c.evs...); err == nil {
				t.Errorf("%s: no error", c.name)
			}
		}
		if err := db.InTx(ctx, func(tx core.Tx) error { return tx.AddWebhookEvents(ctx, nil) }); err != nil {
			t.Fatal(err)
		}
		var ids []string
		if err := db.X().SelectContext(ctx, &ids, `SELECT event_id FROM webhook_outbox ORDER BY id`); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids) != "[evt_a evt_b]" {
			t.Errorf("outbox holds %v, want [evt_a evt_b]: nothing of a failed or rolled-back transaction", ids)
		}
		if n := wakes.Load(); n != 1 {
			t.Errorf("%d wake-ups, want still 1: no commit since wrote events", n)
		}
	})
}

// TestWebhookOutboxClaims walks events through claim, failure, delivery,
// backlog and pruning: a claim hides its rows until it ends, a claim that
// ran out cannot record over a newer one, delivered is final.
func TestWebhookOutboxClaims(t *testing.T) {
	eachBackend(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		for i := range 5 {
			if err := addWebhooks(ctx, db, webhookEvent(fmt.Sprintf("evt_%d", i))); err != nil {
				t.Fatal(err)
			}
		}
		now := t0.Add(time.Minute)
		until := now.Add(15 * time.Second)
		claimed, err := db.ClaimWebhooks(ctx, now, until, 3)
		if err != nil {
			t.Fatal(err)
		}
		if got := pendingIDs(claimed); got != "[evt_0 evt_1 evt_2]" {
			t.Fatalf("claimed %s, want the three lowest rows", got)
		}
		if b := string(claimed[0].Body); b != readOutbox(t, db, "evt_0").Payload || claimed[0].Kind != "waitlist.offered" {
			t.Errorf("claimed body %s / kind %s: not the stored payload", b, claimed[0].Kind)
		}
		rest, err := db.ClaimWebhooks(ctx, now, until, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := pendingIDs(rest); got != "[evt_3 evt_4]" {
			t.Fatalf("second claim got %s, want only the unclaimed rows", got)
		}

		// evt_0 fails, evt_1 is delivered, evt_2's claim runs out and
		// another takes it before the first claimer records its failure.
		if err := db.MarkWebhookFailed(ctx, claimed[0].ID, until, now.Add(2*time.Second), "POST: answered 500 \"\""); err != nil {
			t.Fatal(err)
		}
		if err := db.MarkWebhookDelivered(ctx, claimed[1].ID, now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		later := until.Add(time.Second)
		again, err := db.ClaimWebhooks(ctx, later, later.Add(15*time.Second), 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := pendingIDs(again); got != "[evt_0 evt_2 evt_3 evt_4]" {
			t.Fatalf("claim after the first ran out: %s, want every undelivered row", got)
		}
		if err := db.MarkWebhookFailed(ctx, claimed[2].ID, until, later, "late"); err != nil {
			t.Fatal(err)
		}
		if r := readOutbox(t, db, "evt_2"); r.LastError != "" || r.Attempts != 0 || r.NextAttempt != ms(later.Add(15*time.Second)) {
			t.Errorf("a lapsed claim's failure changed the row: %+v", r)
		}
		if err := db.MarkWebhookFailed(ctx, claimed[1].ID, until, later, "late"); err != nil {
			t.Fatal(err)
		}
		if err := db.MarkWebhookDelivered(ctx, claimed[1].ID, later); err != nil {
			t.Fatal(err)
		}
		r1 := readOutbox(t, db, "evt_1")
		if r1.DeliveredAt == nil || *r1.DeliveredAt != ms(now.Add(time.Second)) || r1.Attempts != 1 || r1.LastError != "" {
			t.Errorf("delivered row after late records: %+v, want delivered once at its first time", r1)
		}
		r0 := readOutbox(t, db, "evt_0")
		if r0.Attempts != 1 || r0.LastError != `POST: answered 500 ""` || r0.DeliveredAt != nil {
			t.Errorf("failed row %+v", r0)
		}
		long := strings.Repeat("é", 400) // 800 bytes: cut to the column, on a rune boundary
		if err := db.MarkWebhookFailed(ctx, again[1].ID, later.Add(15*time.Second), later, long); err != nil {
			t.Fatal(err)
		}
		if r := readOutbox(t, db, "evt_2"); len(r.LastError) != maxWebhookError || !strings.HasPrefix(long, r.LastError) {
			t.Errorf("long error stored as %d bytes, want the first %d", len(r.LastError), maxWebhookError)
		}

		b, err := db.WebhookBacklog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if b.Undelivered != 4 || !b.Oldest.Equal(t0) {
			t.Errorf("backlog %+v, want 4 undelivered since %v", b, t0)
		}

		// Retention: only delivered rows, only those delivered before the cut.
		for i := range 3 {
			if err := db.MarkWebhookDelivered(ctx, again[i+1].ID, t0.Add(time.Duration(i)*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		n, _, err := db.PruneWebhookOutbox(ctx, t0.Add(90*time.Minute), 1)
		if err != nil || n != 1 {
			t.Fatalf("prune batch of 1: %d, %v", n, err)
		}
		if n, _, err = db.PruneWebhookOutbox(ctx, t0.Add(90*time.Minute), 10); err != nil || n != 2 {
			t.Fatalf("prune: %d, %v; want the two left delivered before the cut", n, err)
		}
		var left []string
		if err := db.X().SelectContext(ctx, &left, `SELECT event_id FROM webhook_outbox ORDER BY id`); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(left) != "[evt_0 evt_4]" {
			t.Errorf("after pruning: %v, want the undelivered evt_0 and evt_4 delivered after the cut", left)
		}
	})
}

// TestWebhookClaimsRace: two stores on one database (two instances) claim
// the same due events at once, over and over; every event is claimed once.
func TestWebhookClaimsRace(t *testing.T) {
	for _, b := range []struct {
		name string
		dsn  func(t testing.TB) string
	}{
		{"sqlite", func(t testing.TB) string { return "sqlite://" + filepath.Join(t.TempDir(), "seatflow.db") }},
		{"mariadb", testenv.NewMySQLDatabase},
	} {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.dsn(t)
			db, other := openMigrated(t, dsn), openMigrated(t, dsn)
			const events = 300
			for i := 0; i < events; i += 50 {
				evs := make([]core.WebhookEvent, 50)
				for j := range evs {
					evs[j] = webhookEvent(fmt.Sprintf("evt_%03d", i+j))
				}
				if err := addWebhooks(ctx, db, evs...); err != nil {
					t.Fatal(err)
				}
			}
			var mu sync.Mutex
			claims := map[string]int{}
			var wg sync.WaitGroup
			for w := range 6 {
				store := []*DB{db, other}[w%2]
				wg.Go(func() {
					for {
						got, err := store.ClaimWebhooks(ctx, t0.Add(time.Minute), t0.Add(time.Hour), 7)
						if err != nil {
							t.Error(err)
							return
						}
						if len(got) == 0 {
							return
						}
						mu.Lock()
						total := 0
						for _, p := range got {
							claims[p.EventID]++
						}
						for _, n := range claims {
							total += n
						}
						mu.Unlock()
						if total > events {
							t.Errorf("%d claims of %d events", total, events)
							return
						}
					}
				})
			}
			wg.Wait()
			if len(claims) != events {
				t.Errorf("%d events claimed, want %d", len(claims), events)
			}
			for id, n := range claims {
				if n != 1 {
					t.Errorf("%s claimed %d times", id, n)
				}
			}
		})
	}
}

func pendingIDs(ps []webhook.Pending) string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.EventID
	}
	return fmt.Sprint(ids)
}
