package bench

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"seatflow/server"
)

// TestRushShort is the rush's CI mode: a small rush against the embedded
// stack's engine and HTTP handler, served in process on a loopback port.
// It asserts correctness only, never timings: every show sells out, no
// seat is sold twice, no 5xx other than shed 503s, no request left
// unanswered, and every figure of the report is there.
func TestRushShort(t *testing.T) {
	tests := []struct {
		name   string
		queue  string
		detail string // the key of the rush's details
		// figures the report must carry, by the end of their metric name
		want []string
	}{
		{"no queue", QueueOff, "rush: 300 buyers", []string{"goodput (holds/s)", "decided answers (201/409) p99", "5xx answers other than shed 503s",
			"requests with no answer", "/readyz worst", "/readyz p99", "server peak RSS", "time to sell out", "answers 201", "answers 409",
			"seats sold or held twice"}},
		{"queue", QueueOn, "rush: 300 buyers through the queue", []string{"goodput (holds/s)", "decided answers (201/409) p99", "admitted placements p99",
			"joins p99", "polls p99", "vs position", "5xx answers other than shed 503s", "requests with no answer",
			"/readyz worst", "/readyz p99", "server peak RSS", "time to sell out", "answers 201", "seats sold or held twice", "joins, joins/s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Scenario: ScenarioRush, Stack: StackEmbedded, Clients: 8, Buyers: 300, BaselineBuyers: 150,
				RushSeats: 200, Queue: tt.queue, Joins: 2000, LimitTime: time.Second, MaxTime: 50 * time.Second}
			s := inProcessStack(t, o)
			rep := &Report{Details: map[string]any{}}
			mem := &procSampler{pid: os.Getpid()}
			if err := rushPhases(context.Background(), o, s, mem, newProgress(io.Discard, true), rep); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				found := false
				for _, r := range rep.Rows {
					if !strings.Contains(r.Metric, w) || strings.HasPrefix(r.Metric, "150 buyers") {
						continue
					}
					found = true
					if r.Absent != "" {
						t.Errorf("%s: absent (%s)", r.Metric, r.Absent)
					}
				}
				if !found {
					t.Errorf("no figure %q of the 300 buyers in %d rows", w, len(rep.Rows))
				}
			}
			for _, r := range rep.Rows {
				// Correctness targets only: the timed ones are figures, not assertions.
				// A failed /readyz probe is a timing (a store ping slower
				// than its bound on a loaded machine), not a wrong answer.
				if r.Met == "no" && r.Target == "= 0" && !strings.Contains(r.Metric, "/readyz") {
					t.Errorf("%s = %v, want 0", r.Metric, r.Value)
				}
			}
			t.Log("\n" + formatTable(rep.Rows))
			for _, key := range []string{"rush_baseline", tt.detail} {
				res, ok := rep.Details[key].(rushResult)
				if !ok {
					t.Fatalf("no details %q", key)
				}
				// /readyz was probed by the prober child on the operations listener.
				if res.Ready.Probes == 0 || res.Ready.URL != s.opsBase+"/readyz" {
					t.Errorf("%s: %d /readyz probes of %q, want some of %s/readyz", key, res.Ready.Probes, res.Ready.URL, s.opsBase)
				}
				if res.Check.Taken != o.RushSeats || res.Holds == 0 || res.GaveUp != 0 {
					t.Errorf("%s: %d of %d seats taken, %d holds, %d buyers gave up (%s)", key, res.Check.Taken, o.RushSeats,
						res.Holds, res.GaveUp, res.FirstFailure)
				}
			}
		})
	}
}

// inProcessStack runs the whole app of `seatflow serve` on the embedded
// stack in process (the test binary cannot be started as the server), on
// loopback ports, the API's and the operations listener's, with the
// rush's settings: the per-address limits on, the per-key one off; more
// settings, "KEY=value", override them.
func inProcessStack(t *testing.T, o Options, settings ...string) *stack {
	const token, secret = "rush-token-0123456789", "rush-secret-0123456789"
	addr, ops := testAddr(t), testAddr(t)
	env := map[string]string{"SEATFLOW_DB": "sqlite://" + filepath.Join(t.TempDir(), "seatflow.db"),
		"SEATFLOW_REDIS": "embedded", "SEATFLOW_MQ": "embedded", "SEATFLOW_API_TOKEN": token,
		"SEATFLOW_PAYMENT_SECRET": secret, "SEATFLOW_HOLD_TTL": longHold.String(), "SEATFLOW_RATE_PER_KEY": "0",
		"SEATFLOW_ADDR": addr, "SEATFLOW_OPS_LISTEN": ops}
	for _, kv := range settings {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := server.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	app, err := server.NewApp(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := errors.Join(<-served, app.Close()); err != nil {
			t.Error(err)
		}
	})
	s := &stack{kind: o.Stack, db: app.DB, api: newAPIClient("http://"+addr, token, secret, o.Clients), opsBase: "http://" + ops}
	t.Cleanup(s.api.close)
	for deadline := time.Now().Add(30 * time.Second); s.api.ready(t.Context()) != nil; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-served:
			t.Fatalf("serve: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the in-process server is not ready after 30 s")
		}
	}
	return s
}

// testAddr is a free loopback address (freeAddr), for a listener the
// server opens itself.
func testAddr(t *testing.T) string {
	t.Helper()
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestScanTaken: the scan reads what encoding/json reads from the
// server's answers, and refuses what is not one.
func TestScanTaken(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want []string
		ok   bool
	}{
		{`{"show_id":2,"seats":4,"free":4,"taken":[]}`, nil, true},
		{`{"show_id":2,"seats":4,"free":2,"taken":["A-1","B-10"]}`, []string{"A-1", "B-10"}, true},
		{`{"taken":["A-1"],"show_id":2}`, []string{"A-1"}, true},
		{`{"show_id":2,"taken":["A\"1","B-2"]}`, []string{`A"1`, "B-2"}, true}, // an escape: encoding/json
		{`{"show_id":2,"taken":["A-1",]}`, nil, false},
		{`{"show_id":2,"taken":["A-1"`, nil, false},
		{`{"show_id":2,"taken":[1]}`, nil, false},
		{`{"show_id":2,"taken":[,"A-1"]}`, nil, false},
		{`not json`, nil, false},
	} {
		got, err := scanTaken([]byte(c.raw))
		if (err == nil) != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("scanTaken(%s) = %q, %v; want %q, ok %v", c.raw, got, err, c.want, c.ok)
		}
	}
}

// TestFreeSeats: the plan less the taken seats, taken sorted or not.
func TestFreeSeats(t *testing.T) {
	plan := []string{"A-1", "A-2", "A-3", "B-1"}
	for _, c := range []struct {
		taken, want []string
	}{
		{nil, plan},
		{[]string{"A-2", "B-1"}, []string{"A-1", "A-3"}},
		{[]string{"B-1", "A-1"}, []string{"A-2", "A-3"}},
		{[]string{"A-0", "A-3", "Z-9"}, []string{"A-1", "A-2", "B-1"}},
		{plan, []string{}},
	} {
		if got := freeSeats(plan, c.taken); !slices.Equal(got, c.want) {
			t.Errorf("freeSeats(%q) = %q, want %q", c.taken, got, c.want)
		}
	}
}
