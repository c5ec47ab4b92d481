package bench

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"seatflow/core"
	"seatflow/core/stacktest"
	"seatflow/server"
)

// TestRushShort is the rush's CI mode: a small rush against the embedded
// stack's engine and HTTP handler, served in process on a loopback port.
// It asserts correctness only, never timings: every show sells out, no
// seat is sold twice, no 5xx other than shed 503s, no request left
// unanswered, and every figure of the report is there.
func TestRushShort(t *testing.T) {
	tests := []struct {
		name  string
		queue string
		// figures the report must carry, by the end of their metric name
		want []string
	}{
		{"no queue", QueueOff, []string{"goodput (holds/s)", "decided answers (201/409) p99", "5xx answers other than shed 503s",
			"requests with no answer", "/readyz worst", "server peak RSS", "time to sell out", "answers 201", "answers 409",
			"seats sold or held twice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Scenario: ScenarioRush, Stack: StackEmbedded, Clients: 8, Buyers: 300, BaselineBuyers: 100,
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
					if !strings.HasSuffix(r.Metric, w) || !strings.HasPrefix(r.Metric, "300 buyers") {
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
				if r.Met == "no" && (r.Target == "= 0") {
					t.Errorf("%s = %v, want 0", r.Metric, r.Value)
				}
			}
			for _, key := range []string{"rush_baseline", "rush: 300 buyers"} {
				res, ok := rep.Details[key].(rushResult)
				if !ok {
					t.Fatalf("no details %q", key)
				}
				if res.Check.Taken != o.RushSeats || res.Holds == 0 || res.GaveUp != 0 {
					t.Errorf("%s: %d of %d seats taken, %d holds, %d buyers gave up (%s)", key, res.Check.Taken, o.RushSeats,
						res.Holds, res.GaveUp, res.FirstFailure)
				}
			}
		})
	}
}

// inProcessStack serves the embedded stack's engine over HTTP on a
// loopback port, as `seatflow serve` would with the rush's settings: the
// per-address limits on, the per-key one off.
func inProcessStack(t *testing.T, o Options) *stack {
	st := stacktest.Embedded(t)
	e := st.Engine(t, core.Config{HoldTTL: longHold, MaxHoldsPerClient: 8, Delay: serverPolicy(StackEmbedded, "")}, nil)
	const token, secret = "rush-token-0123456789", "rush-secret-0123456789"
	h := server.NewServer(server.Config{APIToken: token, PaymentSecret: secret, RequestTimeout: 10 * time.Second,
		RateLimits: server.RateLimits{PerClient: 20}},
		server.Deps{Engine: e, DB: st.DB, Hub: server.NewSeatHub(nil, nil), Registry: prometheus.NewRegistry(),
			Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := &stack{kind: o.Stack, db: st.DB, api: newAPIClient(srv.URL, token, secret, o.Clients)}
	t.Cleanup(s.api.close)
	return s
}
