package server

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/admission"
)

func TestLoadConfigDefaults(t *testing.T) {
	c, err := LoadConfig(mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"addr", c.Addr, "127.0.0.1:8080"},
		{"db", c.DB, "sqlite://data/seatflow.db"},
		{"redis", c.Redis, "embedded"},
		{"mq", c.MQ, "embedded"},
		{"hold ttl", c.Engine.HoldTTL, 15 * time.Minute},
		{"purchase limit", c.Engine.PurchaseLimit, 6},
		{"timeout max attempts", c.TimeoutMaxAttempts, 16},
		{"timeout workers", c.TimeoutWorkers, 256},
		{"delay mode with the embedded queue", c.Engine.Delay.Mode, core.DelayTimer},
		{"delay slack", c.Engine.Delay.Slack, time.Second},
		{"delay levels", len(c.Engine.Delay.Levels), 18},
		{"log level", c.LogLevel, slog.LevelInfo},
		{"token generated", c.APITokenGenerated, true},
		{"secret generated", c.PaymentSecretGenerated, true},
		{"session idle", c.SessionIdle, 30 * time.Minute},
		{"IPv6 prefix", c.RateLimits.IPv6Prefix, 64},
		{"max in flight: derived", c.MaxInFlight, 0},
		{"latency objective", c.LatencyObjective, 250 * time.Millisecond},
		{"max conns: derived", c.MaxConns, 0},
		{"seat map cache: off", c.SeatMapMaxAge, time.Duration(0)},
		{"operations listener: off", c.OpsAddr, ""},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	if len(c.APIToken.Reveal()) < minSecretLen || c.APIToken == c.PaymentSecret {
		t.Errorf("generated secrets are weak or equal")
	}
	if c2, _ := LoadConfig(mapEnv(nil)); c2.APIToken == c.APIToken {
		t.Error("generated token repeats across starts")
	}
}

func TestLoadConfigValues(t *testing.T) {
	c, err := LoadConfig(mapEnv(map[string]string{
		"SEATFLOW_ADDR":                  ":9000",
		"SEATFLOW_DB":                    "mysql://sf:pw@tcp(127.0.0.1:3306)/seatflow",
		"SEATFLOW_REDIS":                 "redis://127.0.0.1:6379/0",
		"SEATFLOW_MQ":                    "rocketmq://127.0.0.1:9876",
		"SEATFLOW_DELAY_LEVELS":          "1s 5s 10s",
		"SEATFLOW_DELAY_SLACK":           "0s",
		"SEATFLOW_HOLD_TTL":              "15s",
		"SEATFLOW_PURCHASE_LIMIT":        "2",
		"SEATFLOW_API_TOKEN":             testToken,
		"SEATFLOW_LOG_LEVEL":             "debug",
		"SEATFLOW_ROCKETMQ_TOPIC":        "SF_T",
		"SEATFLOW_REFUND_APPROVAL_CENTS": "5000",
		"SEATFLOW_SESSION_IDLE":          "2h",
		"SEATFLOW_REQUIRE_2FA":           "admin",
		"SEATFLOW_MAX_INFLIGHT":          "40",
		"SEATFLOW_LATENCY_OBJECTIVE":     "100ms",
		"SEATFLOW_MAX_CONNS":             "5000",
		"SEATFLOW_SEAT_MAP_MAX_AGE":      "100ms",
		"SEATFLOW_OPS_LISTEN":            "0.0.0.0:9091",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := core.DelayPolicy{Mode: core.DelayLevels, Levels: []time.Duration{time.Second, 5 * time.Second, 10 * time.Second}}
	if fmt.Sprint(c.Engine.Delay) != fmt.Sprint(want) {
		t.Errorf("delay policy %+v, want %+v (levels are the default with RocketMQ)", c.Engine.Delay, want)
	}
	if c.Engine.HoldTTL != 15*time.Second || c.Engine.PurchaseLimit != 2 || c.LogLevel != slog.LevelDebug ||
		c.APIToken.Reveal() != testToken || c.APITokenGenerated || c.RocketMQTopic != "SF_T" || c.IsEmbeddedMQ() ||
		c.RefundApprovalCents != 5000 || c.RequireSecondFactor != access.SecondFactorAdmins || c.SessionIdle != 2*time.Hour ||
		c.MaxInFlight != 40 || c.LatencyObjective != 100*time.Millisecond || c.MaxConns != 5000 ||
		c.SeatMapMaxAge != 100*time.Millisecond || c.OpsAddr != "0.0.0.0:9091" {
		t.Errorf("config %+v", c)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name, value string
		want        string // in the error besides the name; "" = the value itself
	}{
		{"SEATFLOW_ADDR", "localhost", ""},
		{"SEATFLOW_ADDR", "127.0.0.1:99999", ""},
		{"SEATFLOW_PPROF_ADDR", "0.0.0.0:6060", "loopback"},
		{"SEATFLOW_PPROF_ADDR", "198.18.0.1:6060", "loopback"},
		{"SEATFLOW_PPROF_ADDR", "127.0.0.1", ""},
		{"SEATFLOW_OPS_LISTEN", "localhost", "want host:port"},
		{"SEATFLOW_OPS_LISTEN", "127.0.0.1:99999", "0 to 65535"},
		{"SEATFLOW_OPS_LISTEN", "127.0.0.1:8080", "the same address as SEATFLOW_ADDR"},
		{"SEATFLOW_DB", "postgres://x/y", ""},
		{"SEATFLOW_DB", "data/seatflow.db", ""},
		{"SEATFLOW_DB", "mysql://root:hunter2hunter2@tcp(db:3306)sf", "root:***@"},
		{"SEATFLOW_REDIS", "localhost:6379", ""},
		{"SEATFLOW_REDIS", "memcached://x", ""},
		{"SEATFLOW_MQ", "kafka://127.0.0.1:9092", ""},
		{"SEATFLOW_MQ", "rocketmq://127.0.0.1", ""},
		{"SEATFLOW_DELAY_MODE", "exact", ""},
		{"SEATFLOW_DELAY_LEVELS", "1s 5x", ""},
		{"SEATFLOW_DELAY_LEVELS", "5s 1s", ""},
		{"SEATFLOW_DELAY_SLACK", "-1s", ""},
		{"SEATFLOW_DELAY_SLACK", "soon", ""},
		{"SEATFLOW_HOLD_TTL", "0s", ""},
		{"SEATFLOW_HOLD_TTL", "-5m", ""},
		{"SEATFLOW_HOLD_TTL", "15", ""},
		{"SEATFLOW_PURCHASE_LIMIT", "0", ""},
		{"SEATFLOW_TOTP_KEY", "c2hvcnQ=", "want 32"},
		{"SEATFLOW_TOTP_KEY", "not base64!", "not base64"},
		{"SEATFLOW_TOTP_KEY_FILE", "/nonexistent/totp.key", "no such file"},
		{"SEATFLOW_TOTP_KEYS_PREVIOUS", "c2hvcnQ=", "needs the current key"},
		{"SEATFLOW_ADMISSION_KEY", "c2hvcnQ=", "want at least 32"},
		{"SEATFLOW_ADMISSION_KEY", "not base64!", "not base64"},
		{"SEATFLOW_ADMISSION_KEY_FILE", "/nonexistent/admission.key", "no such file"},
		{"SEATFLOW_ADMISSION_KEYS_PREVIOUS", "c2hvcnQ=", "needs the current key"},
		{"SEATFLOW_IPV6_PREFIX", "0", ""},
		{"SEATFLOW_IPV6_PREFIX", "129", "1 to 128"},
		{"SEATFLOW_TIMEOUT_MAX_ATTEMPTS", "0", ""},
		{"SEATFLOW_TIMEOUT_MAX_ATTEMPTS", "many", ""},
		{"SEATFLOW_TIMEOUT_MAX_ATTEMPTS", "1001", "1 to 1000"},
		{"SEATFLOW_TIMEOUT_WORKERS", "0", ""},
		{"SEATFLOW_TIMEOUT_WORKERS", "1025", "1 to 1024"},
		{"SEATFLOW_PURCHASE_LIMIT", "six", ""},
		{"SEATFLOW_MAX_SEATS_PER_ORDER", "-1", ""},
		{"SEATFLOW_REQUEST_TIMEOUT", "0", ""},
		{"SEATFLOW_SHUTDOWN_TIMEOUT", "1 minute", ""},
		{"SEATFLOW_LOG_LEVEL", "loud", ""},
		{"SEATFLOW_ROCKETMQ_TOPIC", "bad topic", ""},
		{"SEATFLOW_ROCKETMQ_GROUP", strings.Repeat("g", 128), ""},
		{"SEATFLOW_REFUND_APPROVAL_CENTS", "-1", ""},
		{"SEATFLOW_REFUND_APPROVAL_CENTS", "12.50", ""},
		{"SEATFLOW_TILL_TOLERANCE_CENTS", "-5", "cents"},
		{"SEATFLOW_REQUIRE_2FA", "admins", "want admin, all or empty"},
		{"SEATFLOW_RATE_PER_KEY", "-1", "0 (no limit)"},
		{"SEATFLOW_RATE_PER_CLIENT", "fast", ""},
		{"SEATFLOW_MAX_HOLDS_PER_CLIENT", "2.5", ""},
		{"SEATFLOW_API_TOKEN", "short", "at least 16"},
		{"SEATFLOW_PAYMENT_SECRET", "short", "at least 16"},
		{"SEATFLOW_SESSION_IDLE", "0s", ""},
		{"SEATFLOW_SESSION_IDLE", "30", ""},
		{"SEATFLOW_SESSION_IDLE", "4m", "at least 5m"},
		{"SEATFLOW_MAX_INFLIGHT", "-1", "0 (derived)"},
		{"SEATFLOW_MAX_INFLIGHT", "lots", ""},
		{"SEATFLOW_MAX_CONNS", "1000001", "0 (derived) to 1000000"},
		{"SEATFLOW_LATENCY_OBJECTIVE", "0s", ""},
		{"SEATFLOW_SEAT_MAP_MAX_AGE", "-1s", "must not be negative"},
		{"SEATFLOW_SEAT_MAP_MAX_AGE", "soon", ""},
		{"SEATFLOW_LATENCY_OBJECTIVE", "250", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			_, err := LoadConfig(mapEnv(map[string]string{tc.name: tc.value}))
			if err == nil {
				t.Fatal("no error")
			}
			want := tc.want
			if want == "" {
				want = tc.value
			}
			if msg := err.Error(); !strings.Contains(msg, tc.name) || !strings.Contains(msg, want) {
				t.Errorf("error %q does not name %s and %q", msg, tc.name, want)
			}
			if strings.Contains(err.Error(), "hunter2") || (strings.Contains(tc.name, "SECRET") || strings.Contains(tc.name, "TOKEN")) && strings.Contains(err.Error(), tc.value) {
				t.Errorf("error %q leaks a secret", err)
			}
		})
	}
}

func TestConfigLogNeverShowsSecrets(t *testing.T) {
	c, err := LoadConfig(mapEnv(map[string]string{
		"SEATFLOW_DB":             "mysql://sf:dbpass-12345@tcp(127.0.0.1:3306)/seatflow",
		"SEATFLOW_REDIS":          "redis://:redispass-123@127.0.0.1:6379/0",
		"SEATFLOW_API_TOKEN":      testToken,
		"SEATFLOW_PAYMENT_SECRET": testSecret,
	}))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	NewLogger(&buf, slog.LevelInfo).Info("starting", "config", c, "token", c.APIToken)
	fmt.Fprintf(&buf, "%v %+v %s", c, c, c.PaymentSecret)
	for _, secret := range []string{"dbpass-12345", "redispass-123", testToken, testSecret} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("output shows %q:\n%s", secret, buf.String())
		}
	}
	if !strings.Contains(buf.String(), "sf:***@tcp(127.0.0.1:3306)") {
		t.Errorf("redacted DB URL missing:\n%s", buf.String())
	}
}

// TestRetentionConfig: defaults are safe, days parse, a bad value is a
// one-line error naming the variable.
func TestRetentionConfig(t *testing.T) {
	for _, tc := range []struct {
		env        map[string]string
		wantEvents time.Duration
		wantErr    string
	}{
		{nil, 90 * 24 * time.Hour, ""},
		{map[string]string{"SEATFLOW_RETENTION_ORDER_EVENTS": "30d"}, 30 * 24 * time.Hour, ""},
		{map[string]string{"SEATFLOW_RETENTION_ORDER_EVENTS": "2160h"}, 90 * 24 * time.Hour, ""},
		{map[string]string{"SEATFLOW_RETENTION_ORDER_EVENTS": "xd"}, 0, "SEATFLOW_RETENTION_ORDER_EVENTS"},
		{map[string]string{"SEATFLOW_RETENTION_ORDER_EVENTS": "1h"}, 0, "at least 24h"},
		{map[string]string{"SEATFLOW_RETENTION_BATCH": "20000"}, 0, "1 to 10000"},
		{map[string]string{"SEATFLOW_RETENTION_SHOW_GRACE": "0"}, 0, "SEATFLOW_RETENTION_SHOW_GRACE"},
	} {
		c, err := LoadConfig(func(k string) string { return tc.env[k] })
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v: error %v, want one line with %q", tc.env, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c.Retention.OrderEvents != tc.wantEvents {
			t.Errorf("%v: order events %v, %v; want %v", tc.env, c.Retention.OrderEvents, err, tc.wantEvents)
		}
	}
}

// TestConfigAdmissionKeys: the waiting room's key comes from the variable
// or its file, or is generated; previous keys still verify; every mistake
// is one line naming the setting and never showing a key.
func TestConfigAdmissionKeys(t *testing.T) {
	cur, old, other := admission.NewKey(), admission.NewKey(), admission.NewKey()
	file := filepath.Join(t.TempDir(), "admission.key")
	if err := os.WriteFile(file, []byte(cur+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	grant := admission.Grant{Show: 1, User: 2, Seq: 3, Until: time.Now().Add(time.Hour)}
	signedBy := func(k string) string {
		b, _ := admission.ParseKey(k)
		keys, err := admission.NewKeys(b)
		if err != nil {
			t.Fatal(err)
		}
		return keys.SignAdmission(grant)
	}
	for _, tc := range []struct {
		name       string
		env        map[string]string
		generated  bool
		verifies   []string // keys whose admissions the ring accepts
		refuses    []string // and those it refuses
		wantErr    string   // in the error besides the setting
		errSetting string
	}{
		{"unset: generated", nil, true, nil, []string{cur}, "", ""},
		{"the key", map[string]string{"SEATFLOW_ADMISSION_KEY": cur}, false, []string{cur}, []string{old}, "", ""},
		{"its file", map[string]string{"SEATFLOW_ADMISSION_KEY_FILE": file}, false, []string{cur}, []string{old}, "", ""},
		{"rotating", map[string]string{"SEATFLOW_ADMISSION_KEY": cur, "SEATFLOW_ADMISSION_KEYS_PREVIOUS": old + ", " + other},
			false, []string{cur, old, other}, nil, "", ""},
		{"both the key and its file", map[string]string{"SEATFLOW_ADMISSION_KEY": cur, "SEATFLOW_ADMISSION_KEY_FILE": file},
			false, nil, nil, "not both", "SEATFLOW_ADMISSION_KEY_FILE"},
		{"a bad previous key", map[string]string{"SEATFLOW_ADMISSION_KEY": cur, "SEATFLOW_ADMISSION_KEYS_PREVIOUS": old + ",c2hvcnQ="},
			false, nil, nil, "key 2: the key is 5 bytes", "SEATFLOW_ADMISSION_KEYS_PREVIOUS"},
		{"a short key", map[string]string{"SEATFLOW_ADMISSION_KEY": cur[:20]}, false, nil, nil, "want at least 32", "SEATFLOW_ADMISSION_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(mapEnv(tc.env))
			if tc.wantErr != "" {
				if err == nil {
					t.Fatal("no error")
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, tc.errSetting+"=") || !strings.Contains(msg, tc.wantErr) || strings.Contains(msg, "\n") {
					t.Errorf("error %q, want one line naming %s with %q", msg, tc.errSetting, tc.wantErr)
				}
				for _, k := range []string{cur, old, cur[:20]} {
					if strings.Contains(msg, k) {
						t.Errorf("error %q shows a key", msg)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.AdmissionKeyGenerated != tc.generated {
				t.Errorf("generated = %v, want %v", c.AdmissionKeyGenerated, tc.generated)
			}
			keys, err := c.AdmissionKeys()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tc.verifies {
				if _, err := keys.VerifyAdmission(signedBy(k), 1, 2, time.Now()); err != nil {
					t.Errorf("an admission signed with %s… refused: %v", k[:6], err)
				}
			}
			for _, k := range tc.refuses {
				if _, err := keys.VerifyAdmission(signedBy(k), 1, 2, time.Now()); !errors.Is(err, admission.ErrBadToken) {
					t.Errorf("an admission signed with %s… accepted (%v)", k[:6], err)
				}
			}
			var buf bytes.Buffer
			fmt.Fprintf(&buf, "%v %+v", c, c)
			if strings.Contains(buf.String(), base64.StdEncoding.EncodeToString(c.AdmissionKey)) {
				t.Error("the config prints its admission key")
			}
		})
	}
	a, _ := LoadConfig(mapEnv(nil))
	b, _ := LoadConfig(mapEnv(nil))
	if bytes.Equal(a.AdmissionKey, b.AdmissionKey) || len(a.AdmissionKey) < admission.KeySize {
		t.Error("generated admission keys are short or repeat across starts")
	}
}

// TestConfigWebhook: the storefront's webhook is off unless its URL is
// set; the URL must be absolute http or https with a host and needs a
// secret, from the variable or its file. Every mistake is one line naming
// the setting and the cause, and never shows the secret.
func TestConfigWebhook(t *testing.T) {
	const secret = "webhook-secret-0123456789"
	file := filepath.Join(t.TempDir(), "webhook.secret")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), "short.secret")
	if err := os.WriteFile(short, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const url = "https://shop.example/hooks/seatflow"
	for _, tc := range []struct {
		name       string
		env        map[string]string
		wantURL    string
		errSetting string // "" = no error
		wantErr    string
	}{
		{"unset: off", nil, "", "", ""},
		{"URL and secret", map[string]string{"SEATFLOW_WEBHOOK_URL": url, "SEATFLOW_WEBHOOK_SECRET": secret}, url, "", ""},
		{"URL and the secret's file", map[string]string{"SEATFLOW_WEBHOOK_URL": " http://10.0.0.5:8081/in ",
			"SEATFLOW_WEBHOOK_SECRET_FILE": file}, "http://10.0.0.5:8081/in", "", ""},
		{"ftp", map[string]string{"SEATFLOW_WEBHOOK_URL": "ftp://x", "SEATFLOW_WEBHOOK_SECRET": secret}, "",
			"SEATFLOW_WEBHOOK_URL", `"ftp://x": want an absolute http:// or https:// URL (scheme "ftp")`},
		{"not a URL", map[string]string{"SEATFLOW_WEBHOOK_URL": "not a url", "SEATFLOW_WEBHOOK_SECRET": secret}, "",
			"SEATFLOW_WEBHOOK_URL", `"not a url": want an absolute http:// or https:// URL`},
		{"no host", map[string]string{"SEATFLOW_WEBHOOK_URL": "http://", "SEATFLOW_WEBHOOK_SECRET": secret}, "",
			"SEATFLOW_WEBHOOK_URL", `"http://": the URL has no host`},
		{"a relative path", map[string]string{"SEATFLOW_WEBHOOK_URL": "/hooks/seatflow", "SEATFLOW_WEBHOOK_SECRET": secret}, "",
			"SEATFLOW_WEBHOOK_URL", `"/hooks/seatflow": want an absolute http:// or https:// URL`},
		{"a bad escape", map[string]string{"SEATFLOW_WEBHOOK_URL": "https://shop.example/%zz", "SEATFLOW_WEBHOOK_SECRET": secret}, "",
			"SEATFLOW_WEBHOOK_URL", "not a URL: invalid URL escape"},
		{"no secret", map[string]string{"SEATFLOW_WEBHOOK_URL": url}, "",
			"SEATFLOW_WEBHOOK_SECRET", "required with SEATFLOW_WEBHOOK_URL"},
		{"a short secret", map[string]string{"SEATFLOW_WEBHOOK_URL": url, "SEATFLOW_WEBHOOK_SECRET": "short"}, "",
			"SEATFLOW_WEBHOOK_SECRET", "at least 16"},
		{"a short secret in its file", map[string]string{"SEATFLOW_WEBHOOK_URL": url, "SEATFLOW_WEBHOOK_SECRET_FILE": short}, "",
			"SEATFLOW_WEBHOOK_SECRET_FILE", "at least 16"},
		{"no such file", map[string]string{"SEATFLOW_WEBHOOK_URL": url, "SEATFLOW_WEBHOOK_SECRET_FILE": "/nonexistent/webhook.secret"}, "",
			"SEATFLOW_WEBHOOK_SECRET_FILE", "no such file"},
		{"both the secret and its file", map[string]string{"SEATFLOW_WEBHOOK_URL": url, "SEATFLOW_WEBHOOK_SECRET": secret,
			"SEATFLOW_WEBHOOK_SECRET_FILE": file}, "", "SEATFLOW_WEBHOOK_SECRET_FILE", "not both"},
		{"a secret but no URL", map[string]string{"SEATFLOW_WEBHOOK_SECRET": secret}, "",
			"SEATFLOW_WEBHOOK_URL", "no URL to send to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(mapEnv(tc.env))
			if tc.errSetting != "" {
				if err == nil {
					t.Fatal("no error")
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, tc.errSetting+"=") || !strings.Contains(msg, tc.wantErr) || strings.Contains(msg, "\n") {
					t.Errorf("error %q, want one line naming %s with %q", msg, tc.errSetting, tc.wantErr)
				}
				if strings.Contains(msg, secret) {
					t.Errorf("error %q shows the secret", msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Webhook.URL != tc.wantURL || c.Engine.Webhooks != (tc.wantURL != "") {
				t.Errorf("URL %q, engine writes events %v; want %q", c.Webhook.URL, c.Engine.Webhooks, tc.wantURL)
			}
			if tc.wantURL != "" && c.Webhook.Secret.Reveal() != secret {
				t.Errorf("secret not read")
			}
		})
	}
}
