package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/core/store"
	"seatflow/core/testenv"
	"seatflow/core/webhook"
)

const secret = "whsec-test-0123456789abcdef"

// receiver is a storefront as the contract asks it to be: it checks each
// request's signature with HMAC code of its own (written from the
// contract, not with webhook.Sign, so a mistake in either shows), takes an
// event id once (a repeat is answered 200 and dropped), and answers
// whatever answer says for the id's n-th request (1-based; nil: 200).
type receiver struct {
	t      *testing.T
	secret string
	answer func(id string, n int) int
	hold   time.Duration // how long each request is held before its answer

	mu       sync.Mutex
	requests map[string]int            // POSTs per event id, signed or not
	accepted map[string]map[string]any // body of each event id taken
	repeats  map[string]int            // 2xx answers to an id taken before
	refused  int                       // requests whose signature did not verify
	inFlight map[string]int
	overlaps []string // ids POSTed while a POST of theirs was in flight
	headers  http.Header
}

func newReceiver(t *testing.T, secret string, answer func(id string, n int) int) *receiver {
	return &receiver{t: t, secret: secret, answer: answer, requests: map[string]int{},
		accepted: map[string]map[string]any{}, repeats: map[string]int{}, inFlight: map[string]int{}}
}

// start serves the receiver on a free loopback port.
func (rc *receiver) start() *httptest.Server {
	srv := httptest.NewServer(rc)
	rc.t.Cleanup(srv.Close)
	return srv
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		rc.t.Errorf("request %s %v %q: want a JSON POST", r.Method, err, r.Header.Get("Content-Type"))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	id := r.Header.Get(webhook.HeaderEventID)
	rc.mu.Lock()
	rc.requests[id]++
	n := rc.requests[id]
	rc.headers = r.Header.Clone()
	if rc.inFlight[id]++; rc.inFlight[id] > 1 {
		rc.overlaps = append(rc.overlaps, id)
	}
	rc.mu.Unlock()
	defer func() {
		rc.mu.Lock()
		rc.inFlight[id]--
		rc.mu.Unlock()
	}()
	if !rc.verify(r.Header, body) {
		rc.mu.Lock()
		rc.refused++
		rc.mu.Unlock()
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil || ev["id"] != id {
		rc.t.Errorf("body %s (%v): not an event with the header's id %s", body, err, id)
	}
	if rc.hold > 0 {
		time.Sleep(rc.hold)
	}
	status := http.StatusOK
	if rc.answer != nil {
		status = rc.answer(id, n)
	}
	if status/100 == 2 {
		rc.mu.Lock()
		if _, seen := rc.accepted[id]; seen {
			rc.repeats[id]++
		} else {
			rc.accepted[id] = ev
		}
		rc.mu.Unlock()
	}
	w.WriteHeader(status)
	io.WriteString(w, http.StatusText(status))
}

// verify is the check the contract asks of a receiver: a timestamp within
// 5 minutes, and hex HMAC-SHA256(secret, timestamp + "." + body) equal in
// constant time.
func (rc *receiver) verify(h http.Header, body []byte) bool {
	ts := h.Get(webhook.HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return false
	}
	got, err := hex.DecodeString(h.Get(webhook.HeaderSignature))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(rc.secret))
	io.WriteString(mac, ts+".")
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

func (rc *receiver) snapshot() (requests, repeats map[string]int, accepted int, refused int, overlaps []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	requests, repeats = map[string]int{}, map[string]int{}
	for k, v := range rc.requests {
		requests[k] = v
	}
	for k, v := range rc.repeats {
		repeats[k] = v
	}
	return requests, repeats, len(rc.accepted), rc.refused, append([]string(nil), rc.overlaps...)
}

// eachDB runs fn on a fresh SQLite file and a fresh MariaDB database
// (SEATFLOW_TEST_MYSQL), each given by its DSN so a test can open it twice.
func eachDB(t *testing.T, fn func(t *testing.T, dsn string)) {
	for _, b := range []struct {
		name string
		dsn  func(t testing.TB) string
	}{
		{"sqlite", func(t testing.TB) string { return "sqlite://" + filepath.Join(t.TempDir(), "seatflow.db") }},
		{"mariadb", testenv.NewMySQLDatabase},
	} {
		t.Run(b.name, func(t *testing.T) { fn(t, b.dsn(t)) })
	}
}

// openDB opens a store on dsn, migrated; another call on the same dsn is
// another instance's store.
func openDB(t *testing.T, dsn string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

// queue commits events of the given ids, as the engine does.
func queue(t *testing.T, db *store.DB, at time.Time, ids ...string) {
	t.Helper()
	ctx := context.Background()
	evs := make([]core.WebhookEvent, len(ids))
	for i, id := range ids {
		evs[i] = core.WebhookEvent{ID: id, Kind: "waitlist.offered", At: at, Data: map[string]any{"order_no": "O-" + id, "seats": []string{"A-1"}}}
	}
	if err := db.InTx(ctx, func(tx core.Tx) error { return tx.AddWebhookEvents(ctx, evs) }); err != nil {
		t.Fatal(err)
	}
}

// row is an outbox row as a test reads it.
type row struct {
	NextAttempt int64  `db:"next_attempt_at"`
	Attempts    int    `db:"attempts"`
	DeliveredAt *int64 `db:"delivered_at"`
	LastError   string `db:"last_error"`
}

func readRow(t *testing.T, db *store.DB, id string) row {
	t.Helper()
	var r row
	if err := db.X().GetContext(context.Background(), &r,
		`SELECT next_attempt_at, attempts, delivered_at, last_error FROM webhook_outbox WHERE event_id = ?`, id); err != nil {
		t.Fatalf("outbox row %s: %v", id, err)
	}
	return r
}

// dispatcher builds one on db, closed when the test ends. Its log goes to
// the test's output (shown with -v or on failure).
func dispatcher(t *testing.T, db *store.DB, opts webhook.Options) *webhook.Dispatcher {
	t.Helper()
	if opts.Secret == "" {
		opts.Secret = secret
	}
	opts.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	d, err := webhook.New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

func newClock() *stacktest.Clock {
	return stacktest.NewClock(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
}
