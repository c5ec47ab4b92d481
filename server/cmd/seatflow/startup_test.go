package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"seatflow/core/testenv"
)

// runMainVar makes the test binary run main() itself, so a test can watch
// a real process start, fail and exit.
const runMainVar = "SEATFLOW_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainVar) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStartupErrors: a setting that cannot work stops `seatflow serve` with
// one line on stderr naming the variable and the cause, a non-zero exit
// status, and no panic (a failed RocketMQ start used to panic in Close on
// a typed-nil queue).
func TestStartupErrors(t *testing.T) {
	mq := testenv.RocketMQ(t)
	fresh := "SEATFLOW_T_" + rand.Text()[:10]
	busy, err := net.Listen("tcp", "127.0.0.1:0") // the operations address someone else holds
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() }) // after the parallel subtests
	tests := []struct {
		name string
		env  map[string]string
		say  []string
	}{
		{name: "unreachable name server", env: map[string]string{"SEATFLOW_MQ": "rocketmq://" + freeAddr(t)},
			say: []string{"SEATFLOW_MQ=", "no rocketmq name server answered", "connection refused"}},
		{name: "one of two name servers unreachable is fine, both are not",
			env: map[string]string{"SEATFLOW_MQ": "rocketmq://" + freeAddr(t) + "," + freeAddr(t)},
			say: []string{"SEATFLOW_MQ=", "no rocketmq name server answered"}},
		{name: "wrong cluster name", env: map[string]string{"SEATFLOW_MQ": mq, "SEATFLOW_ROCKETMQ_TOPIC": fresh,
			"SEATFLOW_ROCKETMQ_CLUSTER": "NoSuchCluster"},
			say: []string{`SEATFLOW_ROCKETMQ_CLUSTER="NoSuchCluster"`, "no master broker"}},
		{name: "missing topic with creation off", env: map[string]string{"SEATFLOW_MQ": mq, "SEATFLOW_ROCKETMQ_TOPIC": fresh,
			"SEATFLOW_ROCKETMQ_CREATE_TOPICS": "false"},
			say: []string{"SEATFLOW_ROCKETMQ_CREATE_TOPICS=false", fresh, "mqadmin updateTopic"}},
		{name: "bad create-topics value", env: map[string]string{"SEATFLOW_ROCKETMQ_CREATE_TOPICS": "sometimes"},
			say: []string{"SEATFLOW_ROCKETMQ_CREATE_TOPICS=", "true or false"}},
		{name: "rocketmq URL with a path", env: map[string]string{"SEATFLOW_MQ": "rocketmq://ns1:9876/x"},
			say: []string{"SEATFLOW_MQ=", "rocketmq://"}},
		{name: "wrong Redis URL scheme", env: map[string]string{"SEATFLOW_REDIS": "memcached://127.0.0.1:11211"},
			say: []string{"SEATFLOW_REDIS=", "redis://"}},
		{name: "webhook URL not absolute", env: map[string]string{"SEATFLOW_WEBHOOK_URL": "/hooks/seatflow",
			"SEATFLOW_WEBHOOK_SECRET": "cmd-test-webhook-0123456789"},
			say: []string{`SEATFLOW_WEBHOOK_URL="/hooks/seatflow"`, "absolute http"}},
		{name: "operations address without a port", env: map[string]string{"SEATFLOW_OPS_LISTEN": "9091"},
			say: []string{`SEATFLOW_OPS_LISTEN="9091"`, "want host:port"}},
		{name: "operations address in use", env: map[string]string{"SEATFLOW_OPS_LISTEN": busy.Addr().String()},
			say: []string{"SEATFLOW_OPS_LISTEN: listen tcp " + busy.Addr().String(), "address already in use"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "serve")
			env := map[string]string{
				runMainVar:                "1",
				"SEATFLOW_ADDR":           freeAddr(t),
				"SEATFLOW_DB":             "sqlite://" + t.TempDir() + "/seatflow.db",
				"SEATFLOW_API_TOKEN":      testToken,
				"SEATFLOW_PAYMENT_SECRET": "cmd-test-secret-0123456789",
				"PATH":                    os.Getenv("PATH"),
			}
			for k, v := range tt.env {
				env[k] = v
			}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("serve = %v, want a non-zero exit; stderr:\n%s", err, stderr.String())
			}
			// The last line is main's; lines before it are the JSON log.
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			t.Logf("exit %d after %v: %s", exit.ExitCode(), time.Since(start).Round(time.Millisecond), last)
			if strings.Contains(stderr.String(), "panic") || strings.Contains(stderr.String(), "goroutine ") {
				t.Fatalf("panicked:\n%s", stderr.String())
			}
			if !strings.HasPrefix(last, "seatflow: ") {
				t.Errorf("last stderr line %q is not the start-up error", last)
			}
			for _, s := range tt.say {
				if !strings.Contains(last, s) {
					t.Errorf("error line %q does not say %q", last, s)
				}
			}
		})
	}
}
