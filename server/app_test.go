package server

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
	"seatflow/core/store"
	"seatflow/core/testenv"
)

// rocketMQLeftovers are the rocketmq-client-go goroutines that outlive
// Shutdown (apache/rocketmq-client-go#1147, #672), each ending on its own
// later, none of them holding SeatFlow state. Found by running the test
// below without them; every other goroutine still counts as a leak.
var rocketMQLeftovers = func() []goleak.Option {
	const c = "github.com/apache/rocketmq-client-go/v2/"
	var opts []goleak.Option
	for _, f := range []string{
		// Statistics printers sleep until the next minute, hour and month
		// before they first look at their stop channel.
		c + "consumer.(*statsItemSet).init.func4",
		c + "consumer.(*statsItemSet).init.func5",
		c + "consumer.(*statsItemSet).init.func6",
		// The client's schedulers (name server refresh, heartbeat, offset
		// persist) and the expired-message cleaner sleep 10 s and
		// ConsumeTimeout (15 min) before their first look.
		c + "internal.(*rmqClient).Start.func1.1",
		c + "internal.(*rmqClient).Start.func1.3",
		c + "internal.(*rmqClient).Start.func1.4",
		c + "consumer.(*pushConsumer).Start.func1.2",
		// Long-polling pulls in flight at Shutdown wait out their timeout
		// (Shutdown does not wait for them), and the connections they
		// reopen are read until the broker drops them.
		c + "consumer.(*pushConsumer).pullMessage",
		c + "internal/remote.(*remotingClient).receiveResponse",
		// A rebalance started when the consumer joined (short-lived Apps).
		c + "internal.(*rmqClient).RebalanceImmediately",
		c + "internal/remote.(*remotingClient).processCMD.func2",
		c + "consumer.(*defaultConsumer).doBalance",
	} {
		opts = append(opts, goleak.IgnoreAnyFunction(f))
	}
	return opts
}()

// startApp builds an App from env (plus the test token and secret), serves
// it on a free port and returns it with its base URL and a stop function
// that shuts it down the way SIGTERM does (cancel Serve's context, then
// Close) and reports Serve's and Close's errors.
func startApp(t *testing.T, env map[string]string, logger *slog.Logger) (app *App, base string, stop func() error) {
	t.Helper()
	env["SEATFLOW_API_TOKEN"], env["SEATFLOW_PAYMENT_SECRET"] = testToken, testSecret
	for k, v := range noAbuseLimits {
		if _, ok := env[k]; !ok {
			env[k] = v
		}
	}
	if _, ok := env["SEATFLOW_DB"]; !ok {
		env["SEATFLOW_DB"] = "sqlite://" + filepath.Join(t.TempDir(), "seatflow.db")
	}
	cfg, err := LoadConfig(mapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	if logger == nil {
		logger = NewLogger(io.Discard, slog.LevelInfo)
	}
	app, err = NewApp(t.Context(), cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		app.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- app.serveOn(ctx, ln, nil, nil) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return errorsJoin(<-served, app.Close())
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop app: %v", err)
		}
	})
	return app, "http://" + ln.Addr().String(), stop
}

func errorsJoin(a, b error) error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return fmt.Errorf("%w; %w", a, b)
}

// SIGTERM's path (Serve's context ends, then Close) lets a request in
// flight finish, refuses new connections meanwhile, and leaves no
// goroutine behind: HTTP, the timeout consumer, the reconcile scheduler,
// the health watcher, the stores.
func TestGracefulShutdown(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	app, base, stop := startApp(t, map[string]string{}, nil)
	show, err := app.DB.CreateShow(t.Context(), core.Show{Name: "Shutdown", StartsAt: time.Now().Add(time.Hour)},
		store.DemoSeats(1, 2, 1000))
	if err != nil {
		t.Fatal(err)
	}

	// A client in the middle of sending an order: headers and half the body.
	body := fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["A-1"]}`, show.ID)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/orders HTTP/1.1\r\nHost: seatflow\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", testToken, len(body), body[:10])
	time.Sleep(200 * time.Millisecond) // the handler is now reading the body

	result := make(chan error, 1)
	go func() { result <- stop() }()
	// New connections are refused as soon as the shutdown starts...
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections 5s into the shutdown")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-result:
		t.Fatalf("shutdown finished (%v) while a request was in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	// ...while the request in flight completes.
	if _, err := io.WriteString(conn, body[10:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("in-flight request cut by the shutdown: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("in-flight order: status %d, want 201", resp.StatusCode)
	}
	select {
	case err := <-result:
		if err != nil {
			t.Errorf("shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown did not finish after the last request")
	}
}

// The same on the real stack: the RocketMQ client's process-wide
// goroutines are the only ones allowed to stay (rocketMQLeftovers).
func TestGracefulShutdownRealStack(t *testing.T) {
	mysqlURL, redisURL, mqURL := testenv.MySQL(t), testenv.Redis(t), testenv.RocketMQ(t)
	dsn := stacktest.FreshMySQL(t, mysqlURL) // its cleanup must run after the check below
	defer goleak.VerifyNone(t, append(rocketMQLeftovers, goleak.IgnoreCurrent())...)
	suffix := rand.Text()[:8]
	app, base, stop := startApp(t, map[string]string{
		"SEATFLOW_DB":             dsn,
		"SEATFLOW_REDIS":          redisURL,
		"SEATFLOW_MQ":             mqURL,
		"SEATFLOW_ROCKETMQ_TOPIC": "SF_SHUTDOWN_" + suffix,
		"SEATFLOW_ROCKETMQ_GROUP": "sf-shutdown-" + suffix,
		"SEATFLOW_DB_MAX_OPEN":    "7",
		"SEATFLOW_REDIS_POOL":     "9",
	}, nil)
	// The pool sizes reach the drivers.
	if n := app.DB.X().Stats().MaxOpenConnections; n != 7 {
		t.Errorf("SEATFLOW_DB_MAX_OPEN=7: MariaDB pool of %d", n)
	}
	if c, ok := app.redis.(*redis.Client); !ok || c.Options().PoolSize != 9 {
		t.Errorf("SEATFLOW_REDIS_POOL=9: Redis client %T", app.redis)
	}
	if app.relay == nil {
		t.Error("no seat relay on a shared Redis")
	}
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz %d", resp.StatusCode)
	}
	// Let the consumer's first rebalance finish: the client reads a field
	// its Shutdown writes without synchronisation, and a shutdown racing
	// that rebalance is a data race inside the library (not ours), which
	// -race reports. A real instance lives longer than this anyway.
	time.Sleep(2 * time.Second)
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// A live seat map outlives the server's WriteTimeout: the stream lifts the
// deadline for itself (console_sse.go), while every other response keeps it.
func TestSeatStreamOutlivesWriteTimeout(t *testing.T) {
	h := newHostileApp(t, nil)
	const writeTimeout = time.Second
	srv := newHTTPServer("", h.app.Handler, slog.New(slog.DiscardHandler))
	srv.WriteTimeout = writeTimeout
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.app.DB.CreateStaff(t.Context(), access.Staff{Username: "watcher", Role: access.RoleBoxOffice,
		CreatedAt: time.Now()}, string(hash)); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(base + "/console/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatal("login form without a token")
	}
	resp, err = browser.PostForm(base+"/console/login", url.Values{"_csrf": {string(m[1])}, "username": {"watcher"}, "password": {testPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/console/shows/%d/events", base, h.show.ID), nil)
	resp, err = (&http.Client{Jar: jar}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	time.Sleep(writeTimeout + 1500*time.Millisecond) // past the deadline the stream started with
	h.send("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":3,"show_id":%d,"seat_ids":["B-2"]}`, h.show.ID), nil)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the seat stream was cut (write deadline?) before the change arrived")
			}
			if strings.Contains(l, `id="seat-B-2" class="locked"`) {
				return
			}
		case <-ctx.Done():
			t.Fatal("no seat change on the stream")
		}
	}
}
