package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/admission"
	"seatflow/core/delay/rocketmq"
	"seatflow/core/seats"
)

// Embedded is the value of SEATFLOW_REDIS and SEATFLOW_MQ that selects the
// in-process implementation.
const Embedded = "embedded"

// defaultTimeoutWorkers is the timeout handlers in flight per instance:
// the cancel writers' full round (4 writers × 64 per batch, core/endbatch.go),
// as many endings as one round of the group commit takes. Measured with
// `bench waitlist` (BENCHMARKS.md): at 1,000 expiries a second, 64 in
// flight left holds ending late by up to 0.9 s (p99) on the real stack and
// offers at 2.6 s, 256 at 0.19 s and 0.21 s; on the backlog drain 64 had
// drained 2.5 times as fast as 8. maxTimeoutWorkers keeps a typo from
// starting thousands.
const (
	defaultTimeoutWorkers = 256
	maxTimeoutWorkers     = 1024
)

// maxTimeoutAttempts bounds SEATFLOW_TIMEOUT_MAX_ATTEMPTS: past it a poison
// message is retried for days before anyone hears of it.
const maxTimeoutAttempts = 1000

// minSecretLen keeps a typo like SEATFLOW_API_TOKEN=x from becoming a
// guessable credential.
const minSecretLen = 16

// Config is everything the binary reads from its environment.
type Config struct {
	Addr      string // SEATFLOW_ADDR
	PprofAddr string // SEATFLOW_PPROF_ADDR: loopback host:port of the runtime profiles (pprof.go); empty: off
	OpsAddr   string // SEATFLOW_OPS_LISTEN: host:port of /healthz, /readyz and /metrics on a listener of their own (opslisten.go); empty: off
	DB        string // SEATFLOW_DB: sqlite://path or mysql://user:pass@tcp(host:port)/db
	Redis     string // SEATFLOW_REDIS: "embedded" or one of seats.URLForms
	MQ        string // SEATFLOW_MQ: "embedded" or rocketmq://[ak:sk@]ns1:9876[,ns2:9876...]

	// Pool sizes; 0 keeps the driver's default (store.Options, seats.DialOptions).
	DBMaxOpen int // SEATFLOW_DB_MAX_OPEN
	RedisPool int // SEATFLOW_REDIS_POOL

	// RedisAllowEviction accepts a Redis whose maxmemory-policy can evict
	// keys (SEATFLOW_REDIS_ALLOW_EVICTION); see seats.DialWith.
	RedisAllowEviction bool

	RocketMQTopic   string // SEATFLOW_ROCKETMQ_TOPIC
	RocketMQGroup   string // SEATFLOW_ROCKETMQ_GROUP
	RocketMQCluster string // SEATFLOW_ROCKETMQ_CLUSTER: whose masters get missing topics
	// RocketMQCreateTopics (SEATFLOW_ROCKETMQ_CREATE_TOPICS, default true):
	// false where operators create topics; a missing one is then a start error.
	RocketMQCreateTopics bool

	Engine core.Config // SEATFLOW_HOLD_TTL, SEATFLOW_PURCHASE_LIMIT, SEATFLOW_MAX_SEATS_PER_ORDER, SEATFLOW_DELAY_*

	APIToken      Secret // SEATFLOW_API_TOKEN
	PaymentSecret Secret // SEATFLOW_PAYMENT_SECRET
	MetricsToken  Secret // SEATFLOW_METRICS_TOKEN; empty: /metrics needs no token
	// PaymentSecretPrevious (SEATFLOW_PAYMENT_SECRET_PREVIOUS, optional) is
	// also accepted on callbacks while the gateway rotates to the new secret.
	PaymentSecretPrevious Secret
	// Generated reports which secrets were made up at start because their
	// variable was empty, so the caller can print them once.
	APITokenGenerated, PaymentSecretGenerated bool

	Reconcile ReconcileConfig
	Retention core.Retention // SEATFLOW_RETENTION_*: see config_retention.go
	Queue     QueueConfig    // SEATFLOW_QUEUE_*: see config_queue.go
	Webhook   WebhookConfig  // SEATFLOW_WEBHOOK_*: see config_webhook.go

	// RefundApprovalCents (SEATFLOW_REFUND_APPROVAL_CENTS, default 0): a
	// refund above it asked for by box office waits for ops' approval; 0
	// makes every refund one step.
	RefundApprovalCents int64

	// TillToleranceCents (SEATFLOW_TILL_TOLERANCE_CENTS, default 0): a
	// till shift whose counted cash misses the expected by more than this
	// (either way) opens a till_difference case for a manager.
	TillToleranceCents int64

	// RequireSecondFactor (SEATFLOW_REQUIRE_2FA: admin, all or empty): the
	// accounts that must set up a second factor before anything else.
	RequireSecondFactor access.SecondFactorPolicy

	// TOTPKey (SEATFLOW_TOTP_KEY, or the file SEATFLOW_TOTP_KEY_FILE
	// names; 32 bytes in base64) seals second-factor secrets in the
	// database; TOTPKeysPrevious (SEATFLOW_TOTP_KEYS_PREVIOUS, comma
	// separated) still open the ones sealed before a rotation. nil: the
	// embedded stack keeps a generated key beside its SQLite file
	// (app_totp.go).
	TOTPKey          []byte
	TOTPKeysPrevious [][]byte

	// AdmissionKey (SEATFLOW_ADMISSION_KEY, or the file
	// SEATFLOW_ADMISSION_KEY_FILE names; at least 32 bytes in base64)
	// signs the waiting room's tickets and admissions, which any instance
	// verifies with it alone, so every instance must have the same one.
	// AdmissionKeysPrevious (SEATFLOW_ADMISSION_KEYS_PREVIOUS, comma
	// separated) still verify those signed before a rotation. Unset: a
	// key is generated (AdmissionKeyGenerated), good for one instance.
	AdmissionKey          []byte
	AdmissionKeysPrevious [][]byte
	AdmissionKeyGenerated bool

	// RateLimits (SEATFLOW_RATE_PER_KEY, default 2000, and
	// SEATFLOW_RATE_PER_CLIENT, default 20, requests a second; 0 = none):
	// the API's abuse limits, per instance (abuse.go). The engine's
	// MaxHoldsPerClient is SEATFLOW_MAX_HOLDS_PER_CLIENT (default 8).
	// RateLimits.IPv6Prefix (SEATFLOW_IPV6_PREFIX, default 64): every
	// per-address count takes an IPv6 client by its network of this size.
	RateLimits RateLimits

	// MaxClockSkew (SEATFLOW_MAX_CLOCK_SKEW, default 500ms): how far this
	// host's clock may be from the database's; beyond it serve refuses to
	// start, and /readyz reports it while running.
	MaxClockSkew time.Duration
	// TimeoutMaxAttempts (SEATFLOW_TIMEOUT_MAX_ATTEMPTS, default 16): failed
	// deliveries of a timeout message before it becomes a dead letter.
	TimeoutMaxAttempts int
	// TimeoutWorkers (SEATFLOW_TIMEOUT_WORKERS, default 64): timeout
	// messages handled at once, by the DB queue and by the RocketMQ
	// consumer alike. Cancels of messages handled together share a
	// transaction (core/cancelbatch.go), so a backlog drains faster with
	// more of them in flight than the store has connections.
	TimeoutWorkers int
	// Clock is the instance's clock; nil is the system clock (tests give
	// one instance an offset through it).
	Clock core.Clock

	// SessionIdle (SEATFLOW_SESSION_IDLE, default 30m): a console session
	// unused this long is over, besides its absolute 12 hours.
	SessionIdle time.Duration

	// TrustedProxies (SEATFLOW_TRUSTED_PROXIES, default none): the
	// addresses whose X-Forwarded-For names the client.
	TrustedProxies []*net.IPNet

	// Overload protection (overload.go, connlimit.go). MaxInFlight
	// (SEATFLOW_MAX_INFLIGHT, default 0: derived from the database pool)
	// bounds the API work in flight; the adaptive limit moves under it to
	// keep its p99 latency within LatencyObjective
	// (SEATFLOW_LATENCY_OBJECTIVE, default 250ms). MaxConns
	// (SEATFLOW_MAX_CONNS, default 0: derived from RLIMIT_NOFILE) caps the
	// open client connections.
	MaxInFlight      int
	LatencyObjective time.Duration
	MaxConns         int
	// SeatMapMaxAge (SEATFLOW_SEAT_MAP_MAX_AGE, default 0: off) is how old
	// a seat map or availability served from the cache may be (show_cache.go).
	SeatMapMaxAge time.Duration

	LogLevel        slog.Level    // SEATFLOW_LOG_LEVEL
	RequestTimeout  time.Duration // SEATFLOW_REQUEST_TIMEOUT: bounds every API call's work
	ShutdownTimeout time.Duration // SEATFLOW_SHUTDOWN_TIMEOUT: grace for in-flight requests
}

// ReconcileConfig schedules the repair jobs.
type ReconcileConfig struct {
	Every      time.Duration // SEATFLOW_RECONCILE_EVERY: all six checks
	SweepEvery time.Duration // SEATFLOW_RECONCILE_SWEEP_EVERY: expired holds only
	Grace      time.Duration // SEATFLOW_RECONCILE_GRACE: younger locks are never touched
}

// Secret is a string that never prints itself, so a Config can be logged.
type Secret string

func (Secret) String() string               { return "[redacted]" }
func (Secret) LogValue() slog.Value         { return slog.StringValue("[redacted]") }
func (Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// Reveal returns the secret itself, for the code that must compare or print it.
func (s Secret) Reveal() string { return string(s) }

// LogValue lists the settings with passwords removed from the URLs.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("db", redactURL(c.DB)),
		slog.String("redis", redactURL(c.Redis)),
		slog.String("mq", redactURL(c.MQ)),
		slog.String("delay_mode", string(c.Engine.Delay.Mode)),
		slog.Duration("delay_slack", c.Engine.Delay.Slack),
		slog.Duration("hold_ttl", c.Engine.HoldTTL),
		slog.Int("purchase_limit", c.Engine.PurchaseLimit),
		slog.Int("max_seats_per_order", c.Engine.MaxSeatsPerOrder),
		slog.String("log_level", c.LogLevel.String()),
	)
}

// String is LogValue's text, so printing a Config with fmt shows no secret.
func (c Config) String() string { return c.LogValue().String() }

// IsEmbeddedMQ reports whether timeouts go through the DB-backed queue.
func (c Config) IsEmbeddedMQ() bool { return c.MQ == Embedded }

// rocketMQName is what RocketMQ accepts for topic and group names.
var rocketMQName = regexp.MustCompile(`^[A-Za-z0-9_%|-]{1,127}$`)

// LoadConfig reads the configuration through getenv. Every bad value is an
// error naming the variable and the value (passwords redacted).
//
// SEATFLOW_DELAY_MODE defaults to "timer" with the embedded queue (it waits
// exactly) and to "levels" with RocketMQ, because 4.x brokers only know the
// fixed levels; set "timer" for RocketMQ 5 timer messages.
func LoadConfig(getenv func(string) string) (Config, error) {
	p := envParser{getenv: getenv}
	c := Config{
		Addr:                 p.str("SEATFLOW_ADDR", "127.0.0.1:8080"),
		DB:                   p.str("SEATFLOW_DB", "sqlite://data/seatflow.db"),
		Redis:                p.str("SEATFLOW_REDIS", Embedded),
		MQ:                   p.str("SEATFLOW_MQ", Embedded),
		DBMaxOpen:            p.positiveInt("SEATFLOW_DB_MAX_OPEN", 0),
		RedisPool:            p.positiveInt("SEATFLOW_REDIS_POOL", 0),
		RocketMQTopic:        p.str("SEATFLOW_ROCKETMQ_TOPIC", rocketmq.DefaultTopic),
		RocketMQGroup:        p.str("SEATFLOW_ROCKETMQ_GROUP", rocketmq.DefaultGroup),
		RocketMQCluster:      p.str("SEATFLOW_ROCKETMQ_CLUSTER", rocketmq.DefaultCluster),
		RocketMQCreateTopics: p.boolean("SEATFLOW_ROCKETMQ_CREATE_TOPICS", true),
		Engine: core.Config{
			HoldTTL:          p.positiveDuration("SEATFLOW_HOLD_TTL", 15*time.Minute),
			PurchaseLimit:    p.positiveInt("SEATFLOW_PURCHASE_LIMIT", 6),
			MaxSeatsPerOrder: p.positiveInt("SEATFLOW_MAX_SEATS_PER_ORDER", 6),
			MaxHold:          p.positiveDuration("SEATFLOW_MAX_HOLD", core.DefaultMaxHold),
		},
		RequestTimeout:  p.positiveDuration("SEATFLOW_REQUEST_TIMEOUT", 10*time.Second),
		ShutdownTimeout: p.positiveDuration("SEATFLOW_SHUTDOWN_TIMEOUT", 15*time.Second),
		Reconcile: ReconcileConfig{
			Every:      p.positiveDuration("SEATFLOW_RECONCILE_EVERY", 5*time.Minute),
			SweepEvery: p.positiveDuration("SEATFLOW_RECONCILE_SWEEP_EVERY", 30*time.Second),
			Grace:      p.positiveDuration("SEATFLOW_RECONCILE_GRACE", 2*time.Minute),
		},
	}
	p.check("SEATFLOW_ADDR", c.Addr, validAddr)
	if c.PprofAddr = p.getenv("SEATFLOW_PPROF_ADDR"); c.PprofAddr != "" {
		p.check("SEATFLOW_PPROF_ADDR", c.PprofAddr, validLoopbackAddr)
	}
	if c.OpsAddr = p.str("SEATFLOW_OPS_LISTEN", ""); c.OpsAddr != "" {
		p.check("SEATFLOW_OPS_LISTEN", c.OpsAddr, func(v string) error { return validOpsAddr(v, c.Addr) })
	}
	p.check("SEATFLOW_DB", c.DB, validDB)
	p.check("SEATFLOW_REDIS", c.Redis, validRedis)
	p.check("SEATFLOW_MQ", c.MQ, validMQ)
	p.check("SEATFLOW_ROCKETMQ_TOPIC", c.RocketMQTopic, validRocketMQName)
	p.check("SEATFLOW_ROCKETMQ_GROUP", c.RocketMQGroup, validRocketMQName)
	p.check("SEATFLOW_ROCKETMQ_CLUSTER", c.RocketMQCluster, validRocketMQName)
	c.Engine.Delay = p.delayPolicy(c.IsEmbeddedMQ())
	c.LogLevel = p.logLevel("SEATFLOW_LOG_LEVEL")
	c.RedisAllowEviction = p.boolean("SEATFLOW_REDIS_ALLOW_EVICTION", false)
	c.RefundApprovalCents = p.cents("SEATFLOW_REFUND_APPROVAL_CENTS")
	c.TillToleranceCents = p.cents("SEATFLOW_TILL_TOLERANCE_CENTS")
	c.RateLimits.PerKey = p.nonNegativeInt("SEATFLOW_RATE_PER_KEY", 2000)
	c.RateLimits.PerClient = p.nonNegativeInt("SEATFLOW_RATE_PER_CLIENT", 20)
	c.Engine.MaxHoldsPerClient = p.nonNegativeInt("SEATFLOW_MAX_HOLDS_PER_CLIENT", 8)
	c.RateLimits.IPv6Prefix = p.positiveInt("SEATFLOW_IPV6_PREFIX", core.DefaultIPv6Prefix)
	if c.RateLimits.IPv6Prefix > 128 {
		p.fail("SEATFLOW_IPV6_PREFIX", p.getenv("SEATFLOW_IPV6_PREFIX"), "want a prefix length from 1 to 128")
	}
	if v := p.getenv("SEATFLOW_REQUIRE_2FA"); v != "" {
		var err error
		if c.RequireSecondFactor, err = access.ParseSecondFactorPolicy(v); err != nil {
			p.fail("SEATFLOW_REQUIRE_2FA", v, err.Error())
		}
	}
	c.TOTPKey, c.TOTPKeysPrevious = p.totpKeys()
	c.AdmissionKey, c.AdmissionKeysPrevious, c.AdmissionKeyGenerated = p.admissionKeys()
	c.Retention = p.retention()
	c.Queue = p.queue()
	c.Webhook = p.webhook()
	c.Engine.Webhooks = c.Webhook.URL != ""
	c.MaxClockSkew = p.positiveDuration("SEATFLOW_MAX_CLOCK_SKEW", 500*time.Millisecond)
	c.TimeoutMaxAttempts = p.positiveInt("SEATFLOW_TIMEOUT_MAX_ATTEMPTS", core.DefaultTimeoutMaxAttempts)
	if c.TimeoutMaxAttempts > maxTimeoutAttempts {
		p.fail("SEATFLOW_TIMEOUT_MAX_ATTEMPTS", p.getenv("SEATFLOW_TIMEOUT_MAX_ATTEMPTS"),
			fmt.Sprintf("want a whole number from 1 to %d", maxTimeoutAttempts))
	}
	c.TimeoutWorkers = p.positiveInt("SEATFLOW_TIMEOUT_WORKERS", defaultTimeoutWorkers)
	if c.TimeoutWorkers > maxTimeoutWorkers {
		p.fail("SEATFLOW_TIMEOUT_WORKERS", p.getenv("SEATFLOW_TIMEOUT_WORKERS"),
			fmt.Sprintf("want a whole number from 1 to %d", maxTimeoutWorkers))
	}
	c.MaxInFlight = p.derivedInt("SEATFLOW_MAX_INFLIGHT")
	c.LatencyObjective = p.positiveDuration("SEATFLOW_LATENCY_OBJECTIVE", admission.DefaultObjective)
	c.SeatMapMaxAge = p.nonNegativeDuration("SEATFLOW_SEAT_MAP_MAX_AGE", 0)
	c.MaxConns = p.derivedInt("SEATFLOW_MAX_CONNS")
	c.TrustedProxies = p.cidrs("SEATFLOW_TRUSTED_PROXIES")
	c.SessionIdle = p.positiveDuration("SEATFLOW_SESSION_IDLE", access.DefaultSessionIdle)
	if c.SessionIdle > 0 && c.SessionIdle < access.MinSessionIdle {
		p.fail("SEATFLOW_SESSION_IDLE", p.getenv("SEATFLOW_SESSION_IDLE"),
			fmt.Sprintf("want at least %v: a session's last use is recorded once a minute", access.MinSessionIdle))
	}
	c.APIToken, c.APITokenGenerated = p.secret("SEATFLOW_API_TOKEN")
	c.PaymentSecret, c.PaymentSecretGenerated = p.secret("SEATFLOW_PAYMENT_SECRET")
	if v := p.getenv("SEATFLOW_METRICS_TOKEN"); v != "" {
		c.MetricsToken, _ = p.secret("SEATFLOW_METRICS_TOKEN")
	}
	if p.getenv("SEATFLOW_PAYMENT_SECRET_PREVIOUS") != "" {
		c.PaymentSecretPrevious, _ = p.secret("SEATFLOW_PAYMENT_SECRET_PREVIOUS")
	}
	if p.err != nil {
		return Config{}, p.err
	}
	return c, nil
}

// envParser collects the first error so LoadConfig reads as a list of settings.
type envParser struct {
	getenv func(string) string
	err    error
}

func (p *envParser) fail(name, value, why string) {
	if p.err == nil {
		p.err = fmt.Errorf("%s=%q: %s", name, value, why)
	}
}

func (p *envParser) str(name, def string) string {
	if v := strings.TrimSpace(p.getenv(name)); v != "" {
		return v
	}
	return def
}

func (p *envParser) check(name, value string, valid func(string) error) {
	if err := valid(value); err != nil {
		p.fail(name, redactURL(value), err.Error())
	}
}

func (p *envParser) positiveInt(name string, def int) int {
	v := p.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		p.fail(name, v, "want a positive integer")
		return def
	}
	return n
}

// cents reads an amount in cents, 0 or more; unset is 0.
// nonNegativeInt reads a count where 0 turns the limit off.
func (p *envParser) nonNegativeInt(name string, def int) int {
	v := strings.TrimSpace(p.getenv(name))
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1_000_000 {
		p.fail(name, v, "want a whole number from 0 (no limit) to 1000000")
		return def
	}
	return n
}

// derivedInt reads a count where 0, the default, has the server derive it.
func (p *envParser) derivedInt(name string) int {
	v := strings.TrimSpace(p.getenv(name))
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1_000_000 {
		p.fail(name, v, "want a whole number from 0 (derived) to 1000000")
		return 0
	}
	return n
}

func (p *envParser) cents(name string) int64 {
	v := strings.TrimSpace(p.getenv(name))
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		p.fail(name, v, "want a whole number of cents, 0 or more")
		return 0
	}
	return n
}

func (p *envParser) boolean(name string, def bool) bool {
	v := strings.TrimSpace(p.getenv(name))
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(name, v, "want true or false")
		return def
	}
	return b
}

func (p *envParser) duration(name string, def time.Duration) (time.Duration, bool) {
	v := p.getenv(name)
	if v == "" {
		return def, true
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		p.fail(name, v, "want a duration such as 1s, 500ms or 15m")
		return def, false
	}
	return d, true
}

func (p *envParser) positiveDuration(name string, def time.Duration) time.Duration {
	d, ok := p.duration(name, def)
	if ok && d <= 0 {
		p.fail(name, p.getenv(name), "must be greater than zero")
	}
	return d
}

func (p *envParser) nonNegativeDuration(name string, def time.Duration) time.Duration {
	d, ok := p.duration(name, def)
	if ok && d < 0 {
		p.fail(name, p.getenv(name), "must not be negative")
	}
	return d
}

func (p *envParser) delayPolicy(embeddedMQ bool) core.DelayPolicy {
	mode := core.DelayLevels
	if embeddedMQ {
		mode = core.DelayTimer
	}
	if v := p.getenv("SEATFLOW_DELAY_MODE"); v != "" {
		mode = core.DelayMode(strings.ToLower(strings.TrimSpace(v)))
		if mode != core.DelayLevels && mode != core.DelayTimer {
			p.fail("SEATFLOW_DELAY_MODE", v, "want levels or timer")
		}
	}
	spec := p.str("SEATFLOW_DELAY_LEVELS", core.DefaultLevelSpec)
	levels, err := core.ParseLevels(spec)
	if err != nil {
		p.fail("SEATFLOW_DELAY_LEVELS", spec, err.Error())
	}
	slack, ok := p.duration("SEATFLOW_DELAY_SLACK", core.DefaultSlack)
	if ok && slack < 0 {
		p.fail("SEATFLOW_DELAY_SLACK", p.getenv("SEATFLOW_DELAY_SLACK"), "must not be negative")
	}
	return core.DelayPolicy{Mode: mode, Levels: levels, Slack: slack}
}

func (p *envParser) logLevel(name string) slog.Level {
	var l slog.Level
	if v := p.getenv(name); v != "" {
		if err := l.UnmarshalText([]byte(strings.TrimSpace(v))); err != nil {
			p.fail(name, v, "want debug, info, warn or error")
		}
	}
	return l
}

// secret returns the variable's value, or a random one (reported as
// generated) when it is empty. The value itself never appears in an error.
func (p *envParser) secret(name string) (Secret, bool) {
	if v := p.getenv(name); v != "" {
		if len(v) < minSecretLen {
			p.fail(name, "[redacted]", fmt.Sprintf("must be at least %d characters", minSecretLen))
		}
		return Secret(v), false
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		p.fail(name, "", "generating a random value: "+err.Error())
	}
	return Secret(hex.EncodeToString(b[:])), true
}

// totpKeys reads SEATFLOW_TOTP_KEY or SEATFLOW_TOTP_KEY_FILE (one of
// them) and SEATFLOW_TOTP_KEYS_PREVIOUS. A key never appears in an error.
func (p *envParser) totpKeys() ([]byte, [][]byte) {
	v, file := strings.TrimSpace(p.getenv("SEATFLOW_TOTP_KEY")), strings.TrimSpace(p.getenv("SEATFLOW_TOTP_KEY_FILE"))
	var key []byte
	var err error
	switch {
	case v != "" && file != "":
		p.fail("SEATFLOW_TOTP_KEY_FILE", file, "set SEATFLOW_TOTP_KEY or SEATFLOW_TOTP_KEY_FILE, not both")
	case v != "":
		if key, err = access.ParseTOTPKey(v); err != nil {
			p.fail("SEATFLOW_TOTP_KEY", "[redacted]", err.Error())
		}
	case file != "":
		b, rerr := os.ReadFile(file)
		if rerr != nil {
			p.fail("SEATFLOW_TOTP_KEY_FILE", file, rerr.Error())
		} else if key, err = access.ParseTOTPKey(string(b)); err != nil {
			p.fail("SEATFLOW_TOTP_KEY_FILE", file, err.Error())
		}
	}
	var prev [][]byte
	if v := strings.TrimSpace(p.getenv("SEATFLOW_TOTP_KEYS_PREVIOUS")); v != "" {
		if key == nil {
			p.fail("SEATFLOW_TOTP_KEYS_PREVIOUS", "[redacted]", "needs the current key in SEATFLOW_TOTP_KEY or SEATFLOW_TOTP_KEY_FILE")
		}
		for i, k := range strings.Split(v, ",") {
			b, err := access.ParseTOTPKey(k)
			if err != nil {
				p.fail("SEATFLOW_TOTP_KEYS_PREVIOUS", "[redacted]", fmt.Sprintf("key %d: %v", i+1, err))
			}
			prev = append(prev, b)
		}
	}
	return key, prev
}

// admissionKeys reads SEATFLOW_ADMISSION_KEY or SEATFLOW_ADMISSION_KEY_FILE
// (one of them; neither: a generated key) and
// SEATFLOW_ADMISSION_KEYS_PREVIOUS. A key never appears in an error.
func (p *envParser) admissionKeys() (key []byte, prev [][]byte, generated bool) {
	v, file := strings.TrimSpace(p.getenv("SEATFLOW_ADMISSION_KEY")), strings.TrimSpace(p.getenv("SEATFLOW_ADMISSION_KEY_FILE"))
	var err error
	switch {
	case v != "" && file != "":
		p.fail("SEATFLOW_ADMISSION_KEY_FILE", file, "set SEATFLOW_ADMISSION_KEY or SEATFLOW_ADMISSION_KEY_FILE, not both")
	case v != "":
		if key, err = admission.ParseKey(v); err != nil {
			p.fail("SEATFLOW_ADMISSION_KEY", "[redacted]", err.Error())
		}
	case file != "":
		b, rerr := os.ReadFile(file)
		if rerr != nil {
			p.fail("SEATFLOW_ADMISSION_KEY_FILE", file, rerr.Error())
		} else if key, err = admission.ParseKey(string(b)); err != nil {
			p.fail("SEATFLOW_ADMISSION_KEY_FILE", file, err.Error())
		}
	default:
		key, _ = admission.ParseKey(admission.NewKey())
		generated = true
	}
	if v := strings.TrimSpace(p.getenv("SEATFLOW_ADMISSION_KEYS_PREVIOUS")); v != "" {
		if generated {
			p.fail("SEATFLOW_ADMISSION_KEYS_PREVIOUS", "[redacted]", "needs the current key in SEATFLOW_ADMISSION_KEY or SEATFLOW_ADMISSION_KEY_FILE")
		}
		for i, k := range strings.Split(v, ",") {
			b, err := admission.ParseKey(k)
			if err != nil {
				p.fail("SEATFLOW_ADMISSION_KEYS_PREVIOUS", "[redacted]", fmt.Sprintf("key %d: %v", i+1, err))
			}
			prev = append(prev, b)
		}
	}
	if p.err == nil {
		if _, err := admission.NewKeys(key, prev...); err != nil {
			p.fail("SEATFLOW_ADMISSION_KEYS_PREVIOUS", "[redacted]", err.Error())
		}
	}
	return key, prev, generated
}

// AdmissionKeys is the key ring of the waiting room's tokens; LoadConfig
// has checked the keys, so it fails only on a Config built by hand.
func (c Config) AdmissionKeys() (*admission.Keys, error) {
	return admission.NewKeys(c.AdmissionKey, c.AdmissionKeysPrevious...)
}

func validAddr(v string) error {
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("want host:port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
}

func validDB(v string) error {
	scheme, rest, _ := strings.Cut(v, "://")
	if (scheme != "sqlite" && scheme != "mysql") || rest == "" {
		return fmt.Errorf("want sqlite://path/to/file.db or mysql://user:pass@tcp(host:port)/db")
	}
	if scheme == "mysql" {
		if _, err := mysql.ParseDSN(rest); err != nil {
			return fmt.Errorf("bad MySQL DSN (want mysql://user:pass@tcp(host:port)/db): %v", err)
		}
	}
	return nil
}

func validRedis(v string) error {
	if v == Embedded {
		return nil
	}
	if _, err := seats.ParseURL(v); err != nil {
		// ParseURL's cause never repeats the password.
		return fmt.Errorf("want %q, %s: %v", Embedded, seats.URLForms, errors.Unwrap(err))
	}
	return nil
}

func validMQ(v string) error {
	if v == Embedded {
		return nil
	}
	if _, err := rocketmq.ParseURL(v); err != nil {
		return fmt.Errorf("%v; want %q or rocketmq://[accessKey:secretKey@]host:port[,host:port...]", err, Embedded)
	}
	return nil
}

func validRocketMQName(v string) error {
	if !rocketMQName.MatchString(v) {
		return fmt.Errorf("want 1-127 characters of letters, digits, _, -, %%, |")
	}
	return nil
}

// redactURL hides the password of scheme://user:pass@host... (also the
// MySQL form user:pass@tcp(host:port)), so a config error or log line never
// carries one.
func redactURL(v string) string {
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok {
		return v
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return v
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return v
	}
	return scheme + "://" + user + ":***" + rest[at:]
}
