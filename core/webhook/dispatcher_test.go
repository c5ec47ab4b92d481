package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"seatflow/core"
	"seatflow/core/testenv"
	"seatflow/core/webhook"
)

// deliverDue runs one round of d and fails the test on an error.
func deliverDue(t *testing.T, d *webhook.Dispatcher) int {
	t.Helper()
	n, err := d.DeliverDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSignedDelivery: an event goes out as the contract says (body, event
// id, timestamp, signature) and a receiver with the secret verifies it;
// one with another secret refuses it, and the event stays owed.
func TestSignedDelivery(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		for _, c := range []struct {
			name           string
			receiverSecret string
			delivered      bool
		}{
			{"the receiver has the secret", secret, true},
			{"the receiver has another secret", "another-secret-0123456789", false},
		} {
			t.Run(c.name, func(t *testing.T) {
				db := openDB(t, dsn)
				rc := newReceiver(t, c.receiverSecret, nil)
				srv := rc.start()
				clock := newClock()
				id := core.NewWebhookEventID()
				queue(t, db, clock.Now(), id)
				m := webhook.NewMetrics(nil)
				d := dispatcher(t, db, webhook.Options{URL: srv.URL + "/hooks/seatflow", Clock: clock, Metrics: m})
				if n := deliverDue(t, d); n != 1 {
					t.Fatalf("claimed %d events, want 1", n)
				}
				_, _, accepted, refused, _ := rc.snapshot()
				r := readRow(t, db, id)
				if !c.delivered {
					if accepted != 0 || refused != 1 || r.DeliveredAt != nil || r.Attempts != 1 || !strings.Contains(r.LastError, "401") {
						t.Errorf("accepted %d, refused %d, row %+v: want refused, owed, its 401 kept", accepted, refused, r)
					}
					if got := testutil.ToFloat64(m.Failed.WithLabelValues(webhook.ReasonStatus)); got != 1 {
						t.Errorf("failed attempts (status) %v, want 1", got)
					}
					return
				}
				if accepted != 1 || refused != 0 || r.DeliveredAt == nil || *r.DeliveredAt != clock.Now().UnixMilli() || r.Attempts != 1 {
					t.Fatalf("accepted %d, refused %d, row %+v: want delivered now after one attempt", accepted, refused, r)
				}
				body := rc.accepted[id]
				want := fmt.Sprintf(`map[at:%s data:map[order_no:O-%s seats:[A-1]] id:%s kind:waitlist.offered]`,
					clock.Now().Format(time.RFC3339), id, id)
				if got := fmt.Sprint(body); got != want {
					t.Errorf("body %s, want %s", got, want)
				}
				if h := rc.headers; h.Get(webhook.HeaderEventID) != id || h.Get("User-Agent") != "SeatFlow-Webhook" {
					t.Errorf("headers %v", h)
				}
				if got := testutil.ToFloat64(m.Delivered); got != 1 {
					t.Errorf("delivered %v, want 1", got)
				}
				if n := deliverDue(t, d); n != 0 {
					t.Errorf("a delivered event was claimed again (%d)", n)
				}
			})
		}
	})
}

// TestSignMatchesTheContract: Sign is hex HMAC-SHA256(secret, timestamp +
// "." + body), as the receiver above computes it on its own.
func TestSignMatchesTheContract(t *testing.T) {
	rc := newReceiver(t, secret, nil)
	body := []byte(`{"id":"evt_1"}`)
	ts := fmt.Sprint(time.Now().Unix())
	h := http.Header{}
	h.Set(webhook.HeaderTimestamp, ts)
	h.Set(webhook.HeaderSignature, webhook.Sign(secret, ts, body))
	if !rc.verify(h, body) {
		t.Error("the receiver refuses Sign's signature")
	}
	h.Set(webhook.HeaderSignature, webhook.Sign("another-secret-0123456789", ts, body))
	if rc.verify(h, body) {
		t.Error("the receiver takes a signature made with another secret")
	}
}

// TestRetriesThenDeliveredOnce: a receiver that answers 500 to the first
// four requests gets the event again after each, every wait at least the
// one before (1 s, 2 s, 4 s, 8 s with jitter) and nothing sent before it
// ends; the fifth is taken, once, and the row ends delivered with its five
// attempts and the last failure's error.
func TestRetriesThenDeliveredOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		db := openDB(t, dsn)
		const failures = 4
		rc := newReceiver(t, secret, func(_ string, n int) int {
			if n <= failures {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		srv := rc.start()
		clock := newClock()
		queue(t, db, clock.Now(), "evt_retry")
		m := webhook.NewMetrics(nil)
		d := dispatcher(t, db, webhook.Options{URL: srv.URL, Clock: clock, Metrics: m})
		var prev time.Duration
		for attempt := 1; ; attempt++ {
			if n := deliverDue(t, d); n != 1 {
				t.Fatalf("attempt %d: claimed %d events, want 1", attempt, n)
			}
			r := readRow(t, db, "evt_retry")
			if r.Attempts != attempt {
				t.Fatalf("attempt %d: row counts %d", attempt, r.Attempts)
			}
			if r.DeliveredAt != nil {
				if attempt != failures+1 {
					t.Fatalf("delivered at attempt %d, want %d", attempt, failures+1)
				}
				if !strings.Contains(r.LastError, "answered 500") {
					t.Errorf("last error %q: want the last failure's", r.LastError)
				}
				break
			}
			wait := time.Duration(r.NextAttempt-clock.Now().UnixMilli()) * time.Millisecond
			nominal := time.Second << (attempt - 1)
			if wait < nominal/2 || wait > nominal || wait < prev {
				t.Errorf("wait after failure %d: %v, want %v to %v and not below the last (%v)", attempt, wait, nominal/2, nominal, prev)
			}
			prev = wait
			clock.Advance(wait - time.Millisecond)
			if n := deliverDue(t, d); n != 0 {
				t.Fatalf("failure %d: claimed a millisecond before its retry is due", attempt)
			}
			clock.Advance(time.Millisecond)
		}
		requests, repeats, accepted, _, _ := rc.snapshot()
		if requests["evt_retry"] != failures+1 || accepted != 1 || len(repeats) != 0 {
			t.Errorf("receiver: %d requests, %d taken, repeats %v; want %d, 1, none", requests["evt_retry"], accepted, repeats, failures+1)
		}
		if got := testutil.ToFloat64(m.Failed.WithLabelValues(webhook.ReasonStatus)); got != failures {
			t.Errorf("failed attempts (status) %v, want %d", got, failures)
		}
	})
}

// TestFailedAttempts: whatever is not a 2xx answer is a failed attempt,
// counted by reason and kept in last_error: an error status, a redirect
// (not followed), no answer in time, no connection.
func TestFailedAttempts(t *testing.T) {
	var redirected atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { redirected.Store(true) }))
	defer target.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, c := range []struct {
		name    string
		url     func(t *testing.T) string
		reason  string
		lastErr string
	}{
		{"503", serve(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
		}), webhook.ReasonStatus, `answered 503 "maintenance"`},
		{"a redirect", serve(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
		}), webhook.ReasonStatus, "answered 307"},
		{"no answer in time", serve(func(w http.ResponseWriter, r *http.Request) {
			// Until the dispatcher hangs up: the server notices once the
			// body is read.
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		}), webhook.ReasonTimeout, "no answer within 200ms"},
		{"no connection", func(*testing.T) string { return closed.URL }, webhook.ReasonNetwork, "connection refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t, "sqlite://"+t.TempDir()+"/seatflow.db")
			clock := newClock()
			queue(t, db, clock.Now(), "evt_fail")
			m := webhook.NewMetrics(nil)
			d := dispatcher(t, db, webhook.Options{URL: c.url(t), Clock: clock, Metrics: m, Timeout: 200 * time.Millisecond})
			deliverDue(t, d)
			r := readRow(t, db, "evt_fail")
			if r.DeliveredAt != nil || r.Attempts != 1 || !strings.Contains(r.LastError, c.lastErr) {
				t.Errorf("row %+v: want one failed attempt with %q", r, c.lastErr)
			}
			for _, reason := range []string{webhook.ReasonStatus, webhook.ReasonTimeout, webhook.ReasonNetwork} {
				want := 0.0
				if reason == c.reason {
					want = 1
				}
				if got := testutil.ToFloat64(m.Failed.WithLabelValues(reason)); got != want {
					t.Errorf("failed attempts (%s) %v, want %v", reason, got, want)
				}
			}
		})
	}
	if redirected.Load() {
		t.Error("the redirect was followed")
	}
}

// serve starts handler for one test and gives its URL.
func serve(handler http.HandlerFunc) func(t *testing.T) string {
	return func(t *testing.T) string {
		srv := httptest.NewServer(handler)
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

// TestReceiverDownThenUp: while nothing listens the event fails and is
// kept; once the receiver listens on the address it is delivered.
func TestReceiverDownThenUp(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		db := openDB(t, dsn)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		clock := newClock()
		queue(t, db, clock.Now(), "evt_down")
		d := dispatcher(t, db, webhook.Options{URL: "http://" + addr + "/hooks", Clock: clock})
		for attempt := 1; attempt <= 2; attempt++ {
			deliverDue(t, d)
			r := readRow(t, db, "evt_down")
			if r.DeliveredAt != nil || r.Attempts != attempt || !strings.Contains(r.LastError, "connection refused") {
				t.Fatalf("receiver down, attempt %d: row %+v", attempt, r)
			}
			clock.Advance(time.Duration(r.NextAttempt-clock.Now().UnixMilli()) * time.Millisecond)
		}

		rc := newReceiver(t, secret, nil)
		srv := httptest.NewUnstartedServer(rc)
		if srv.Listener, err = net.Listen("tcp", addr); err != nil {
			t.Fatalf("listen on %s again: %v", addr, err)
		}
		srv.Start()
		defer srv.Close()
		if n := deliverDue(t, d); n != 1 {
			t.Fatalf("claimed %d, want the retry", n)
		}
		r := readRow(t, db, "evt_down")
		_, _, accepted, _, _ := rc.snapshot()
		if r.DeliveredAt == nil || r.Attempts != 3 || accepted != 1 {
			t.Errorf("receiver up: row %+v, %d taken; want delivered at the third attempt", r, accepted)
		}
	})
}

// TestRolledBackEventNeverSent: only a committed transaction's events go.
func TestRolledBackEventNeverSent(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := openDB(t, dsn)
		rc := newReceiver(t, secret, nil)
		clock := newClock()
		boom := errors.New("the change failed")
		err := db.InTx(ctx, func(tx core.Tx) error {
			if err := tx.AddWebhookEvents(ctx, []core.WebhookEvent{{ID: "evt_rolled_back", Kind: "waitlist.offered", At: clock.Now()}}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		queue(t, db, clock.Now(), "evt_committed")
		d := dispatcher(t, db, webhook.Options{URL: rc.start().URL, Clock: clock})
		for deliverDue(t, d) > 0 {
		}
		requests, _, _, _, _ := rc.snapshot()
		if fmt.Sprint(requests) != "map[evt_committed:1]" {
			t.Errorf("receiver got %v, want the committed event only", requests)
		}
	})
}

// TestTwoDispatchers: two instances dispatch from one database while
// events are committed; a third of first attempts are refused. Every
// event is delivered, taken once (a redelivery would need a failure after
// the receiver's 2xx), and none is ever POSTed by both at once.
func TestTwoDispatchers(t *testing.T) {
	eachDB(t, func(t *testing.T, dsn string) {
		rc := newReceiver(t, secret, func(id string, n int) int {
			if n == 1 && id[len(id)-1]%3 == 0 {
				return http.StatusBadGateway
			}
			return http.StatusOK
		})
		rc.hold = time.Millisecond // widens the window two senders of one event would share
		srv := rc.start()
		reg := prometheus.NewRegistry()
		var ms []*webhook.Metrics
		for i := range 2 {
			db := openDB(t, dsn)
			m := webhook.NewMetrics(prometheus.WrapRegistererWith(prometheus.Labels{"instance": fmt.Sprint(i)}, reg))
			ms = append(ms, m)
			d := dispatcher(t, db, webhook.Options{URL: srv.URL, Poll: 5 * time.Millisecond, Batch: 4,
				MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond, Metrics: m})
			db.OnWebhooksCommitted(d.Wake)
			d.Start(t.Context())
		}
		writer := openDB(t, dsn)
		const events = 120
		for i := 0; i < events; i += 6 {
			ids := make([]string, 6)
			for j := range ids {
				ids[j] = fmt.Sprintf("evt_%03d", i+j)
			}
			queue(t, writer, time.Now(), ids...)
		}
		undelivered := func() int {
			var n int
			if err := writer.X().GetContext(context.Background(), &n,
				`SELECT COUNT(*) FROM webhook_outbox WHERE delivered_at IS NULL`); err != nil {
				t.Fatal(err)
			}
			return n
		}
		// The receiver takes an event before its sender records it: wait
		// for the records.
		testenv.WaitFor(t, 60*time.Second, "every event delivered and recorded", func() bool { return undelivered() == 0 })
		requests, repeats, _, refused, overlaps := rc.snapshot()
		if len(overlaps) > 0 || len(repeats) > 0 || refused > 0 {
			t.Errorf("POSTed by both at once: %v; taken again: %v; bad signatures: %d", overlaps, repeats, refused)
		}
		for id, n := range requests {
			want := 1
			if id[len(id)-1]%3 == 0 {
				want = 2
			}
			if n != want {
				t.Errorf("%s: %d requests, want %d", id, n, want)
			}
		}
		if len(requests) != events {
			t.Errorf("%d events reached the receiver, want %d", len(requests), events)
		}
		if delivered := testutil.ToFloat64(ms[0].Delivered) + testutil.ToFloat64(ms[1].Delivered); delivered != events {
			t.Errorf("%v deliveries counted, want %d", delivered, events)
		}
		t.Logf("deliveries per instance: %v and %v", testutil.ToFloat64(ms[0].Delivered), testutil.ToFloat64(ms[1].Delivered))
	})
}

// TestWakeAfterCommit: with a poll of an hour, a committed event is sent
// all the same: the store's commit wakes the dispatcher. Close then ends it.
func TestWakeAfterCommit(t *testing.T) {
	db := openDB(t, "sqlite://"+t.TempDir()+"/seatflow.db")
	rc := newReceiver(t, secret, nil)
	d := dispatcher(t, db, webhook.Options{URL: rc.start().URL, Poll: time.Hour})
	// The loop's first round sends this one; once the receiver has it,
	// that round has claimed, and the next can only come from a wake-up.
	queue(t, db, time.Now(), "evt_first")
	d.Start(t.Context())
	accepted := func(n int) func() bool {
		return func() bool {
			_, _, got, _, _ := rc.snapshot()
			return got == n
		}
	}
	testenv.WaitFor(t, 10*time.Second, "the first round", accepted(1))
	db.OnWebhooksCommitted(d.Wake)
	queue(t, db, time.Now(), "evt_woken")
	testenv.WaitFor(t, 10*time.Second, "the event sent on the wake-up", accepted(2))
	d.Close()
	d.Start(t.Context()) // after Close: nothing
	queue(t, db, time.Now(), "evt_after_close")
	d.Close()
	if requests, _, _, _, _ := rc.snapshot(); requests["evt_after_close"] != 0 {
		t.Error("a closed dispatcher sent an event")
	}
}

// TestCloseWaitsForRequestsInFlight: Close stops the loop but lets the
// request in flight finish and records it: a shutdown neither cuts an
// attempt short nor leaves a delivered event to be sent again.
func TestCloseWaitsForRequestsInFlight(t *testing.T) {
	db := openDB(t, "sqlite://"+t.TempDir()+"/seatflow.db")
	release := make(chan struct{})
	rc := newReceiver(t, secret, func(string, int) int {
		<-release
		return http.StatusNoContent
	})
	url := rc.start().URL
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // runs before the server's Close, which waits for its handlers
	queue(t, db, time.Now(), "evt_in_flight")
	d := dispatcher(t, db, webhook.Options{URL: url})
	d.Start(t.Context())
	testenv.WaitFor(t, 10*time.Second, "the request in flight", func() bool {
		requests, _, _, _, _ := rc.snapshot()
		return requests["evt_in_flight"] == 1
	})
	closed := make(chan struct{})
	go func() {
		d.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while a request was in flight")
	case <-time.After(50 * time.Millisecond): // a wrong Close returns at once
	}
	free()
	<-closed
	if r := readRow(t, db, "evt_in_flight"); r.DeliveredAt == nil || r.Attempts != 1 {
		t.Errorf("after Close: row %+v, want delivered by the request that was in flight", r)
	}
}

// TestNewRefusesBadOptions: a URL the dispatcher cannot POST to, no secret
// or impossible numbers fail New, naming the cause.
func TestNewRefusesBadOptions(t *testing.T) {
	db := openDB(t, "sqlite://"+t.TempDir()+"/seatflow.db")
	for _, c := range []struct {
		name string
		opts webhook.Options
		want string
	}{
		{"ftp", webhook.Options{URL: "ftp://x", Secret: secret}, `scheme "ftp"`},
		{"not a URL", webhook.Options{URL: "not a url", Secret: secret}, "absolute http"},
		{"no host", webhook.Options{URL: "http://", Secret: secret}, "no host"},
		{"a port but no host", webhook.Options{URL: "http://:8080/hooks", Secret: secret}, "no host"},
		{"a relative path", webhook.Options{URL: "/hooks/seatflow", Secret: secret}, "absolute http"},
		{"no secret", webhook.Options{URL: "https://shop.example/hooks"}, "no secret"},
		{"a negative timeout", webhook.Options{URL: "https://shop.example/hooks", Secret: secret, Timeout: -time.Second}, "negative"},
		{"backoff upside down", webhook.Options{URL: "https://shop.example/hooks", Secret: secret,
			MinBackoff: time.Minute, MaxBackoff: time.Second}, "below MinBackoff"},
	} {
		if _, err := webhook.New(db, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}

// TestBacklogCollector: the gauges read the outbox at scrape, 0 when it is
// empty; a failed read leaves them out and counts the failure.
func TestBacklogCollector(t *testing.T) {
	db := openDB(t, "sqlite://"+t.TempDir()+"/seatflow.db")
	gauges := func(c prometheus.Collector) string {
		t.Helper()
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, mf := range mfs {
			v := mf.GetMetric()[0]
			out = append(out, fmt.Sprintf("%s=%v", mf.GetName(), v.GetGauge().GetValue()+v.GetCounter().GetValue()))
		}
		return strings.Join(out, " ")
	}
	c := webhook.NewBacklogCollector(db.WebhookBacklog)
	if got := gauges(c); got != "seatflow_webhook_backlog=0 seatflow_webhook_backlog_errors_total=0 seatflow_webhook_oldest_undelivered_seconds=0" {
		t.Errorf("empty outbox: %s", got)
	}
	queue(t, db, time.Now().Add(-time.Hour), "evt_old", "evt_older")
	if got := gauges(c); !strings.HasPrefix(got, "seatflow_webhook_backlog=2 ") || !strings.Contains(got, "oldest_undelivered_seconds=36") {
		t.Errorf("two events an hour old: %s", got)
	}
	failing := webhook.NewBacklogCollector(func(context.Context) (webhook.Backlog, error) { return webhook.Backlog{}, errors.New("down") })
	if got := gauges(failing); got != "seatflow_webhook_backlog_errors_total=1" {
		t.Errorf("failed read: %s", got)
	}
}
