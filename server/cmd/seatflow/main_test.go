package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"seatflow/core/stacktest"
	"seatflow/core/testenv"
)

const testToken = "cmd-test-token-0123456789"

// lockedBuffer is run's stdout: the server writes to it from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testEnv(t *testing.T, extra map[string]string) func(string) string {
	env := map[string]string{
		"SEATFLOW_DB":             "sqlite://" + filepath.Join(t.TempDir(), "seatflow.db"),
		"SEATFLOW_API_TOKEN":      testToken,
		"SEATFLOW_PAYMENT_SECRET": "cmd-test-secret-0123456789",
		"SEATFLOW_ADMISSION_KEY":  "Y21kLXRlc3QtYWRtaXNzaW9uLWtleS0wMTIzNDU2Nzg5MDE=",
	}
	for k, v := range extra {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

// freeAddr returns a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServe runs the whole program as main would, talks to it over TCP and
// stops it the way SIGTERM does: by cancelling its context.
func TestServe(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"seatflow", "serve", "--demo"}, testEnv(t, map[string]string{"SEATFLOW_ADDR": addr}), &out)
	}()

	base := "http://" + addr
	waitHealthy(t, base, done)

	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return resp.StatusCode, m
	}
	status, shows := call("GET", "/api/v1/shows", "")
	list, _ := shows["shows"].([]any)
	if status != 200 || len(list) != 1 {
		t.Fatalf("shows: %d %v", status, shows)
	}
	show := list[0].(map[string]any)
	if show["name"] != "SeatFlow Gala" || show["rows"] != 20.0 || show["cols"] != 30.0 {
		t.Errorf("demo show %v", show)
	}
	status, order := call("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":1,"show_id":%v,"seat_ids":["T-30"]}`, show["id"]))
	if status != http.StatusCreated || order["status"] != "pending" {
		t.Fatalf("place: %d %v", status, order)
	}
	if status, got := call("GET", "/api/v1/orders/"+order["order_no"].(string), ""); status != 200 || got["order_no"] != order["order_no"] {
		t.Errorf("get order: %d %v", status, got)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after its context was cancelled")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after shutdown")
	}
	if s := out.String(); !strings.Contains(s, "Demo show created") || strings.Contains(s, testToken) {
		t.Errorf("stdout does not announce the demo show, or shows the configured token:\n%s", s)
	}
}

func waitHealthy(t *testing.T, base string, done <-chan error) {
	t.Helper()
	// A hang bound, not a timing claim: --demo seeds its shows first, and
	// under -race on a CI machine running other suites that took over 20 s.
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("run returned before serving: %v", err)
		default:
		}
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("server did not become healthy")
}

func TestCommands(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string // "" = success
		wantOut []string
	}{
		{name: "help", args: []string{"help"}, wantOut: []string{"usage: seatflow", "README.md", "SEATFLOW_ADMISSION_KEY"}},
		{name: "serve -h", args: []string{"serve", "-h"}, wantOut: []string{"-demo"}},
		{name: "unknown command", args: []string{"launch"}, wantErr: `unknown command "launch"`},
		{name: "unknown flag", args: []string{"serve", "--fast"}, wantErr: "fast"},
		{name: "stray argument", args: []string{"migrate", "now"}, wantErr: "unexpected arguments"},
		{name: "bad config", args: []string{"serve"}, env: map[string]string{"SEATFLOW_HOLD_TTL": "-1m"}, wantErr: "SEATFLOW_HOLD_TTL"},
		{name: "bad config for migrate", args: []string{"migrate"}, env: map[string]string{"SEATFLOW_DB": "oracle://x"}, wantErr: "SEATFLOW_DB"},
		{name: "migrate", args: []string{"migrate"}, wantOut: []string{"migrated"}},
		{name: "demo", args: []string{"demo"}, wantOut: []string{"Demo show created", `"SeatFlow Gala", 20 rows x 30 seats`,
			"curl", "/api/v1/orders", "box_office password ", "ops        password ", "admin      password "}},
		{name: "staff add", args: []string{"staff", "add", "--role", "ops", "olga"}, wantOut: []string{"added olga (ops); password: "}},
		{name: "staff without add", args: []string{"staff"}, wantErr: "usage: seatflow staff add"},
		{name: "apikey add", args: []string{"apikey", "add", "--name", "front end", "--scope", "orders:read,orders:write"},
			wantOut: []string{`added API key 1 "front end" (sfk_`, "with scopes orders:read,orders:write", "key (shown once, store it now): sfk_"}},
		{name: "apikey list", args: []string{"apikey", "list"}, wantOut: []string{"PREFIX", "LAST USED"}},
		{name: "apikey revoke unknown", args: []string{"apikey", "revoke", "7"}, wantErr: "API key not found"},
		{name: "apikey without a verb", args: []string{"apikey"}, wantErr: "usage: seatflow apikey"},
		{name: "apikey add bad scope", args: []string{"apikey", "add", "--name", "x", "--scope", "all"}, wantErr: `unknown scope "all"`},
		{name: "reconcile without --once", args: []string{"reconcile"}, wantErr: "pass --once"},
		{name: "reconcile on the embedded stack", args: []string{"reconcile", "--once"}, wantErr: "needs a shared Redis"},
		{name: "seats without rebuild", args: []string{"seats"}, wantErr: "usage: seatflow seats rebuild"},
		{name: "seats rebuild on the embedded stack", args: []string{"seats", "rebuild"}, wantErr: "needs a shared Redis"},
		{name: "staff add bad role", args: []string{"staff", "add", "--role", "king", "olga"}, wantErr: "staff add"},
		{name: "demo with a generated token", args: []string{"demo"}, env: map[string]string{"SEATFLOW_API_TOKEN": ""},
			wantOut: []string{"WARNING: SEATFLOW_API_TOKEN not set", "written to"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(t.Context(), append([]string{"seatflow"}, tc.args...), testEnv(t, tc.env), &out)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v\n%s", err, out.String())
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			for _, want := range tc.wantOut {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// Running demo twice creates one show and one account per role.
func TestDemoIsIdempotent(t *testing.T) {
	env := testEnv(t, nil)
	for i, wants := range [][]string{
		{"Demo show created", "admin      password"},
		{"Demo show exists", "staff accounts exist"},
	} {
		var out bytes.Buffer
		if err := run(t.Context(), []string{"seatflow", "demo"}, env, &out); err != nil {
			t.Fatal(err)
		}
		for _, want := range wants {
			if !strings.Contains(out.String(), want) {
				t.Errorf("run %d: output lacks %q:\n%s", i+1, want, out.String())
			}
		}
	}
}

// The one-shot repair commands on the real stack: reconcile prints its table
// and a fresh database has nothing to repair; seats rebuild succeeds.
func TestRepairCommandsOnRealStack(t *testing.T) {
	env := testEnv(t, map[string]string{
		"SEATFLOW_DB":    stacktest.FreshMySQL(t, testenv.MySQL(t)),
		"SEATFLOW_REDIS": testenv.Redis(t),
		"SEATFLOW_MQ":    testenv.RocketMQ(t),
	})
	tests := []struct {
		args    []string
		wantOut []string
	}{
		{[]string{"reconcile", "--once"}, []string{"expired_pending", "stale_redis_lock", "limit_drift", "open_discrepancy"}},
		{[]string{"reconcile", "--once", "--dry-run"}, []string{"paid_not_sold", "orphan_order_seat"}},
		{[]string{"seats", "rebuild"}, []string{"seat state rebuilt"}},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		if err := run(t.Context(), append([]string{"seatflow"}, tc.args...), env, &out); err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, out.String())
		}
		for _, want := range tc.wantOut {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, want, out.String())
			}
		}
	}
}
