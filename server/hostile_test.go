package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"golang.org/x/crypto/bcrypt"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/store"
)

// hostileApp is the embedded stack served on a real port, with one 3×4 show
// and one pending order, for attacks that need a socket (body limits, slow
// clients) as well as plain bad input.
type hostileApp struct {
	t     *testing.T
	app   *App
	base  string
	show  core.Show
	order string // a pending order of user 1 (seat C-4)
}

func newHostileApp(t *testing.T, logger *slog.Logger) *hostileApp {
	t.Helper()
	app, base, _ := startApp(t, map[string]string{}, logger)
	show, err := app.DB.CreateShow(t.Context(), core.Show{Name: "Hostile", StartsAt: time.Now().Add(time.Hour)},
		store.DemoSeats(3, 4, 1000))
	if err != nil {
		t.Fatal(err)
	}
	h := &hostileApp{t: t, app: app, base: base, show: show}
	resp, body := h.send("POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":1,"show_id":%d,"seat_ids":["C-4"]}`, show.ID), nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("place: %d %s", resp.StatusCode, body)
	}
	var o struct {
		OrderNo string `json:"order_no"`
	}
	if err := json.Unmarshal(body, &o); err != nil {
		t.Fatal(err)
	}
	h.order = o.OrderNo
	return h
}

// send makes one request with the API token (unless header sets its own
// Authorization) and returns the response and its body.
func (h *hostileApp) send(method, path, body string, header map[string]string) (*http.Response, []byte) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.base+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(req.URL.Path, "/api/v1/") {
		checkContract(h.t, req, body, resp.StatusCode, resp.Header, b)
	}
	return resp, b
}

// signed returns the callback headers for body, signed now.
func signed(body string) map[string]string {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	return map[string]string{"X-SeatFlow-Timestamp": ts, "X-SeatFlow-Signature": sign(testSecret, ts, body)}
}

func (h *hostileApp) counts() map[string]int {
	h.t.Helper()
	m := map[string]int{}
	for _, table := range writtenTables {
		var n int
		if err := h.app.DB.X().Get(&n, "SELECT COUNT(*) FROM "+table); err != nil {
			h.t.Fatal(err)
		}
		m[table] = n
	}
	return m
}

// injections are put into every string field.
var injections = []struct{ name, value string }{
	{"sql quote", `A-1' OR '1'='1`},
	{"sql stacked", `A-1; DROP TABLE order_info; --`},
	{"sql comment", `SF1" /*`},
	{"sql union", `x' UNION SELECT order_no FROM order_info --`},
	{"script", `<script>alert(1)</script>`},
	{"attribute", `" onmouseover="alert(1)`},
	{"fullwidth digit", "A-\uff11"},
	{"emoji", "\U0001F39F"},
	{"right-to-left override", "A-1\u202e"},
	{"nul byte", "A-1\x00"},
	{"invalid utf-8", "A-\xff\xfe"},
	{"very long", strings.Repeat("A", 10_000)},
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Every hostile input is a 4xx with the API's error shape, and writes
// nothing: not a row in any table, not a timeout task.
func TestHostileInput(t *testing.T) {
	h := newHostileApp(t, nil)
	show := h.show.ID
	type tc struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
	}
	var cases []tc
	for _, in := range injections {
		j := jsonString(in.value)
		esc := url.PathEscape(in.value)
		cases = append(cases,
			tc{"place seat id: " + in.name, "POST", "/api/v1/orders",
				fmt.Sprintf(`{"user_id":2,"show_id":%d,"seat_ids":[%s]}`, show, j), nil, 400},
			tc{"place seat id beside a good one: " + in.name, "POST", "/api/v1/orders",
				fmt.Sprintf(`{"user_id":2,"show_id":%d,"seat_ids":["A-1",%s]}`, show, j), nil, 400},
			tc{"place user id as string: " + in.name, "POST", "/api/v1/orders",
				fmt.Sprintf(`{"user_id":%s,"show_id":%d,"seat_ids":["A-1"]}`, j, show), nil, 400},
			tc{"place field name: " + in.name, "POST", "/api/v1/orders",
				fmt.Sprintf(`{"user_id":2,"show_id":%d,"seat_ids":["A-1"],%s:1}`, show, j), nil, 400},
			tc{"get order: " + in.name, "GET", "/api/v1/orders/" + esc, "", nil, 404},
			tc{"cancel order: " + in.name, "POST", "/api/v1/orders/" + esc + "/cancel", `{"user_id":1}`, nil, 404},
			tc{"seats of show: " + in.name, "GET", "/api/v1/shows/" + esc + "/seats", "", nil, 400},
			tc{"pay unknown order: " + in.name, "POST", "/api/v1/payments/callback",
				fmt.Sprintf(`{"order_no":%s,"txn_id":"T-hostile","amount_cents":1000}`, j),
				signed(fmt.Sprintf(`{"order_no":%s,"txn_id":"T-hostile","amount_cents":1000}`, j)), 0},

			tc{"pay paid_at: " + in.name, "POST", "/api/v1/payments/callback",
				fmt.Sprintf(`{"order_no":%q,"txn_id":"T-h2","amount_cents":1000,"paid_at":%s}`, h.order, j),
				signed(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-h2","amount_cents":1000,"paid_at":%s}`, h.order, j)), 400},
		)
		// A txn id is the provider's text and money for an unknown order is
		// recorded (TestInjectionIsStoredAsData): only one with control
		// characters is refused (JSON decoding turns invalid UTF-8 into U+FFFD).
		if strings.ContainsFunc(in.value, unicode.IsControl) {
			cases = append(cases, tc{"pay txn id, unknown order: " + in.name, "POST", "/api/v1/payments/callback",
				fmt.Sprintf(`{"order_no":"SF1","txn_id":%s,"amount_cents":1000}`, j),
				signed(fmt.Sprintf(`{"order_no":"SF1","txn_id":%s,"amount_cents":1000}`, j)), 400})
		}
		if !strings.ContainsAny(in.value, "\x00\r\n") { // not sendable as a header value
			cases = append(cases, tc{"pay signature: " + in.name, "POST", "/api/v1/payments/callback",
				fmt.Sprintf(`{"order_no":%q,"txn_id":"T-h3","amount_cents":1000}`, h.order),
				map[string]string{"X-SeatFlow-Timestamp": strconv.FormatInt(time.Now().Unix(), 10),
					"X-SeatFlow-Signature": in.value}, 401})
		}
	}
	for _, n := range []string{"1e400", "9223372036854775808", "-9223372036854775809", "1.5", "-1", "0",
		"18446744073709551616", "0x10", "NaN", "Infinity", `"1"`, "[]", "{}", "null", "true"} {
		cases = append(cases,
			tc{"user id " + n, "POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":%s,"show_id":%d,"seat_ids":["A-1"]}`, n, show), nil, 400},
			tc{"show id " + n, "POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":2,"show_id":%s,"seat_ids":["A-1"]}`, n), nil, 0},
			tc{"cancel user id " + n, "POST", "/api/v1/orders/" + h.order + "/cancel", fmt.Sprintf(`{"user_id":%s}`, n), nil, 400},
			tc{"extend user id " + n, "POST", "/api/v1/orders/" + h.order + "/extend", fmt.Sprintf(`{"user_id":%s,"minutes":5}`, n), nil, 400},
			tc{"amount " + n, "POST", "/api/v1/payments/callback",
				fmt.Sprintf(`{"order_no":%q,"txn_id":"T-n","amount_cents":%s}`, h.order, n),
				signed(fmt.Sprintf(`{"order_no":%q,"txn_id":"T-n","amount_cents":%s}`, h.order, n)), 0},
		)
	}
	many := `"A-1"` + strings.Repeat(`,"A-1"`, 5000)
	cases = append(cases,
		tc{"seat list of 5001", "POST", "/api/v1/orders", fmt.Sprintf(`{"user_id":2,"show_id":%d,"seat_ids":[%s]}`, show, many), nil, 400},
		tc{"deep nesting", "POST", "/api/v1/orders", strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000), nil, 400},
		tc{"show id path overflow", "GET", "/api/v1/shows/99999999999999999999999/seats", "", nil, 400},
		tc{"timestamp a year old", "POST", "/api/v1/payments/callback", `{}`,
			map[string]string{"X-SeatFlow-Timestamp": strconv.FormatInt(time.Now().Add(-365*24*time.Hour).Unix(), 10),
				"X-SeatFlow-Signature": sign(testSecret, strconv.FormatInt(time.Now().Add(-365*24*time.Hour).Unix(), 10), `{}`)}, 401},
		tc{"timestamp overflow", "POST", "/api/v1/payments/callback", `{}`,
			map[string]string{"X-SeatFlow-Timestamp": "99999999999999999999", "X-SeatFlow-Signature": "00"}, 401},
		tc{"token with injection", "GET", "/api/v1/shows", "", map[string]string{"Authorization": "Bearer ' OR 1=1 --"}, 401},
		tc{"API key with injection", "GET", "/api/v1/shows", "", map[string]string{"Authorization": "Bearer sfk_' OR key_hash <> '"}, 401},
		tc{"API key of 4 KB", "GET", "/api/v1/shows", "", map[string]string{"Authorization": "Bearer sfk_" + strings.Repeat("A", 4<<10)}, 401},
		tc{"extend without user_id", "POST", "/api/v1/orders/" + h.order + "/extend", `{"minutes":5}`, nil, 400},
		tc{"extend another user's order", "POST", "/api/v1/orders/" + h.order + "/extend", `{"user_id":2,"minutes":5}`, nil, 404},
		tc{"callback with a bad bearer but no signature", "POST", "/api/v1/payments/callback", `{}`,
			map[string]string{"Authorization": "Bearer nope"}, 401},
	)
	// Strict JSON on every route that takes a body: a key given twice or
	// in another case is 400, a body not sent as JSON is 415.
	payDup := fmt.Sprintf(`{"order_no":%q,"txn_id":"T-dup","amount_cents":1,"amount_cents":1000}`, h.order)
	payCase := fmt.Sprintf(`{"order_no":%q,"TXN_ID":"T-case","amount_cents":1000}`, h.order)
	payGood := fmt.Sprintf(`{"order_no":%q,"txn_id":"T-ct","amount_cents":1000}`, h.order)
	formType := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	cases = append(cases,
		tc{"pay duplicate key", "POST", "/api/v1/payments/callback", payDup, signed(payDup), 400},
		tc{"pay key in another case", "POST", "/api/v1/payments/callback", payCase, signed(payCase), 400},
		tc{"pay as a form", "POST", "/api/v1/payments/callback", payGood,
			map[string]string{"Content-Type": "text/plain", "X-SeatFlow-Timestamp": signed(payGood)["X-SeatFlow-Timestamp"],
				"X-SeatFlow-Signature": signed(payGood)["X-SeatFlow-Signature"]}, 415},
	)
	for _, r := range []struct{ name, path, good, dup, folded string }{
		{"place", "/api/v1/orders", fmt.Sprintf(`{"user_id":2,"show_id":%d,"seat_ids":["A-1"]}`, show),
			fmt.Sprintf(`{"user_id":2,"show_id":%d,"show_id":%d,"seat_ids":["A-1"]}`, show, show),
			fmt.Sprintf(`{"user_id":2,"Show_ID":%d,"seat_ids":["A-1"]}`, show)},
		{"cancel", "/api/v1/orders/" + h.order + "/cancel", `{"user_id":1}`, `{"user_id":1,"user_id":1}`, `{"USER_ID":1}`},
		{"extend", "/api/v1/orders/" + h.order + "/extend", `{"minutes":5}`, `{"minutes":5,"minutes":6}`, `{"Minutes":5}`},
		{"refund", "/api/v1/orders/" + h.order + "/refund", `{"reason":"x"}`, `{"reason":"x","reason":"y"}`, `{"Reason":"x"}`},
		{"create show", "/api/v1/shows", `{"name":"S","starts_at":"2030-01-01T00:00:00Z","grid":{"rows":1,"seats_per_row":1}}`,
			`{"name":"S","name":"T","starts_at":"2030-01-01T00:00:00Z","grid":{"rows":1,"seats_per_row":1}}`,
			`{"name":"S","starts_at":"2030-01-01T00:00:00Z","grid":{"Rows":1,"seats_per_row":1}}`},
		{"block seats", fmt.Sprintf("/api/v1/shows/%d/blocks", show), `{"seat_ids":["A-2"]}`,
			`{"seat_ids":["A-2"],"seat_ids":["A-3"]}`, `{"Seat_IDs":["A-2"]}`},
	} {
		cases = append(cases,
			tc{r.name + " duplicate key", "POST", r.path, r.dup, nil, 400},
			tc{r.name + " key in another case", "POST", r.path, r.folded, nil, 400},
			tc{r.name + " as a form", "POST", r.path, r.good, formType, 415},
			tc{r.name + " without a content type", "POST", r.path, r.good, map[string]string{"Content-Type": ""}, 415},
		)
	}

	before := h.counts()
	for _, c := range cases {
		resp, body := h.send(c.method, c.path, c.body, c.header)
		bad := resp.StatusCode < 400 || resp.StatusCode >= 500 || (c.status != 0 && resp.StatusCode != c.status)
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" {
			bad = true
		}
		if bad {
			t.Errorf("%s: %d %.300s, want %s", c.name, resp.StatusCode, body, wantStatus(c.status))
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q: a reflected value could be read as HTML", c.name, ct)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: X-Content-Type-Options %q, Cache-Control %q", c.name,
				resp.Header.Get("X-Content-Type-Options"), resp.Header.Get("Cache-Control"))
		}
	}
	if after := h.counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("hostile input wrote rows: before %v, after %v", before, after)
	}
	var tables int
	if err := h.app.DB.X().Get(&tables, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('order_info','payment')`); err != nil || tables != 2 {
		t.Errorf("tables after the injections: %d (%v)", tables, err)
	}
}

func wantStatus(s int) string {
	if s == 0 {
		return "a 4xx"
	}
	return strconv.Itoa(s)
}

// A value that looks like SQL is data: stored and returned verbatim.
func TestInjectionIsStoredAsData(t *testing.T) {
	h := newHostileApp(t, nil)
	txn := `T'); DELETE FROM payment; --`
	body := fmt.Sprintf(`{"order_no":%q,"txn_id":%s,"amount_cents":1000}`, h.order, jsonString(txn))
	if resp, b := h.send("POST", "/api/v1/payments/callback", body, signed(body)); resp.StatusCode != http.StatusOK {
		t.Fatalf("pay: %d %s", resp.StatusCode, b)
	}
	var got string
	if err := h.app.DB.X().Get(&got, `SELECT paid_txn_id FROM order_info WHERE order_no = ?`, h.order); err != nil || got != txn {
		t.Errorf("paid_txn_id %q (%v), want %q", got, err, txn)
	}
	if n := h.counts()["payment"]; n != 1 {
		t.Errorf("%d payment rows, want 1", n)
	}
}

// Bodies far over the limit are refused without being read into memory.
func TestHugeBodies(t *testing.T) {
	h := newHostileApp(t, nil)
	huge := `{"user_id":1,"show_id":1,"seat_ids":["` + strings.Repeat("A", 10<<20) + `"]}`
	before := h.counts()
	for _, path := range []string{"/api/v1/orders", "/api/v1/orders/" + h.order + "/cancel", "/api/v1/payments/callback"} {
		resp, body := h.send("POST", path, huge, signed(huge))
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(body, []byte(`"body_too_large"`)) {
			t.Errorf("POST %s with 10 MB: %d %.200s, want 413 body_too_large", path, resp.StatusCode, body)
		}
	}
	// Content-Length lies are cut at the limit too.
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nTransfer-Encoding: chunked\r\n\r\n", testToken)
	chunk := strings.Repeat("A", 32<<10)
	go func() {
		for range 8 { // 256 KB in chunks, no Content-Length to check up front
			if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
				return
			}
		}
		io.WriteString(conn, "0\r\n\r\n")
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("chunked body over the limit: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked body over the limit: %d, want 413", resp.StatusCode)
	}
	if after := h.counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("huge bodies wrote rows: before %v, after %v", before, after)
	}
}

// A client that sends its headers a byte at a time (slowloris) is cut off
// at ReadHeaderTimeout, and the server keeps answering others meanwhile.
func TestSlowClientIsCut(t *testing.T) {
	h := newHostileApp(t, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		_, _ = io.Copy(io.Discard, conn) // returns when the server closes
		closed <- time.Since(start)
	}()
	header := "POST /api/v1/orders HTTP/1.1\r\nHost: seatflow\r\nX-Padding: " + strings.Repeat("a", 100)
	limit := newHTTPServer("", nil, slog.New(slog.DiscardHandler)).ReadHeaderTimeout
	for i := 0; i < len(header); i++ {
		if _, err := conn.Write([]byte{header[i]}); err != nil {
			break // cut off
		}
		select {
		case d := <-closed:
			if d < limit || d > limit+3*time.Second {
				t.Errorf("slow client cut after %v, want about ReadHeaderTimeout (%v)", d, limit)
			}
			// Others are served throughout.
			if resp, _ := h.send("GET", "/healthz", "", nil); resp.StatusCode != http.StatusOK {
				t.Errorf("healthz: %d", resp.StatusCode)
			}
			return
		case <-time.After(500 * time.Millisecond):
		}
		if time.Since(start) > limit+5*time.Second {
			t.Fatalf("slow client still connected after %v", time.Since(start))
		}
	}
	t.Fatal("sent every header byte without being cut off")
}

// syncBuffer is a bytes.Buffer for a logger written from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// No secret reaches the log: the API token, the payment secret and
// signatures, staff passwords, session cookies and CSRF tokens, the
// database password, through a whole flow at debug level with failures of
// each kind along the way.
func TestNoSecretInLogs(t *testing.T) {
	var logs syncBuffer
	h := newHostileApp(t, NewLogger(&logs, slog.LevelDebug))
	const staffPassword = "staff-password-0123456789"
	hash, err := bcrypt.GenerateFromPassword([]byte(staffPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.app.DB.CreateStaff(t.Context(), access.Staff{Username: "ops", Role: access.RoleOps, CreatedAt: time.Now()}, string(hash)); err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{"API token": testToken, "payment secret": testSecret, "staff password": staffPassword}

	// API: good and bad calls, a signed payment and a forged one.
	h.send("GET", "/api/v1/orders/"+h.order, "", nil)
	h.send("GET", "/api/v1/shows", "", map[string]string{"Authorization": "Bearer " + testToken + "x"})
	body := fmt.Sprintf(`{"order_no":%q,"txn_id":"T-log","amount_cents":1000}`, h.order)
	sig := signed(body)
	secrets["payment signature"] = sig["X-SeatFlow-Signature"]
	h.send("POST", "/api/v1/payments/callback", body, map[string]string{"X-SeatFlow-Timestamp": sig["X-SeatFlow-Timestamp"],
		"X-SeatFlow-Signature": strings.Repeat("0", 64)})
	h.send("POST", "/api/v1/payments/callback", body, sig)

	// Console: a wrong password, then a login, a page and a logout.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := func(password string) *http.Response {
		resp, err := browser.Get(h.base + "/console/login")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindSubmatch(page)
		if m == nil {
			t.Fatalf("login form without a token")
		}
		secrets["login CSRF token"] = string(m[1])
		resp, err = browser.PostForm(h.base+"/console/login", url.Values{"_csrf": {string(m[1])}, "username": {"ops"}, "password": {password}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	login(staffPassword + "-wrong")
	if resp := login(staffPassword); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	u, _ := url.Parse(h.base + "/console/")
	for _, c := range jar.Cookies(u) {
		if c.Name == sessionCookie {
			secrets["session cookie"] = c.Value
		}
	}
	resp, err := browser.Get(h.base + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)"`).FindSubmatch(page); m != nil {
		secrets["session CSRF token"] = string(m[1])
		resp, err := browser.PostForm(h.base+"/console/logout", url.Values{"_csrf": {string(m[1])}})
		if err == nil {
			resp.Body.Close()
		}
	}
	if secrets["session cookie"] == "" || secrets["session CSRF token"] == "" {
		t.Fatalf("the flow did not log in: %v", secrets)
	}

	// The configuration as `seatflow serve` logs it at start.
	cfg, err := LoadConfig(mapEnv(map[string]string{"SEATFLOW_DB": "mysql://seatflow:db-password-0123@tcp(127.0.0.1:3306)/seatflow",
		"SEATFLOW_REDIS": "redis://:redis-password-0123@127.0.0.1:6379/0", "SEATFLOW_API_TOKEN": testToken, "SEATFLOW_PAYMENT_SECRET": testSecret}))
	if err != nil {
		t.Fatal(err)
	}
	secrets["database password"], secrets["redis password"] = "db-password-0123", "redis-password-0123"
	h.app.logger.InfoContext(context.Background(), "starting", "config", cfg)

	out := logs.String()
	if !strings.Contains(out, `"path":"/console/login"`) || !strings.Contains(out, `"path":"/api/v1/payments/callback"`) {
		t.Fatalf("the log does not show the flow:\n%.3000s", out)
	}
	for what, v := range secrets {
		if strings.Contains(out, v) {
			t.Errorf("the %s appears in the log", what)
		}
	}
}

// consoleLogin signs in to h's console as a new account of role with
// browser ua over a real connection, and returns the client and the
// session's CSRF token.
func (h *hostileApp) consoleLogin(username string, role access.Role, ua string) (*http.Client, string) {
	h.t.Helper()
	const password = "hostile-password-0123"
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.app.DB.CreateStaff(h.t.Context(), access.Staff{Username: username, Role: role, CreatedAt: time.Now()}, string(hash)); err != nil {
		h.t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path string, form url.Values) []byte {
		req, err := http.NewRequest(method, h.base+path, strings.NewReader(form.Encode()))
		if err != nil {
			h.t.Fatal(err)
		}
		req.Header.Set("User-Agent", ua)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := client.Do(req)
		if err != nil {
			h.t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	m := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindSubmatch(do("GET", "/console/login", nil))
	if m == nil {
		h.t.Fatal("login form without a token")
	}
	do("POST", "/console/login", url.Values{"_csrf": {string(m[1])}, "username": {username}, "password": {password}})
	m = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)"`).FindSubmatch(do("GET", "/console/", nil))
	if m == nil {
		h.t.Fatalf("%s did not log in", username)
	}
	return client, string(m[1])
}

// The console's session routes under hostile input: bad account ids and
// hostile fields are a 4xx page that reflects nothing raw and ends no
// session, and a hostile User-Agent is shown as text on the sessions page.
func TestHostileConsoleSessionRoutes(t *testing.T) {
	h := newHostileApp(t, nil)
	admin, csrf := h.consoleLogin("hostile-admin", access.RoleAdmin, "HostileTest/1.0")
	type tc struct {
		name, method, path string
		form               url.Values
		status             int
	}
	var cases []tc
	for _, in := range injections {
		esc := url.PathEscape(in.value)
		cases = append(cases,
			tc{"end an account's sessions, id: " + in.name, "POST", "/console/staff/" + esc + "/sessions/end",
				url.Values{"_csrf": {csrf}}, 404},
			tc{"end others, CSRF token: " + in.name, "POST", "/console/sessions/end-others",
				url.Values{"_csrf": {in.value}}, 403},
			tc{"end all, CSRF token: " + in.name, "POST", "/console/sessions/end-all",
				url.Values{"_csrf": {in.value}}, 403},
			tc{"end an account's sessions, CSRF token: " + in.name, "POST", "/console/staff/1/sessions/end",
				url.Values{"_csrf": {in.value}}, 403},
		)
	}
	for _, n := range []string{"0", "-1", "1.5", "1e3", "0x10", "99999999999999999999999", "9223372036854775808", " 1", "%00"} {
		cases = append(cases, tc{"end an account's sessions, id " + n, "POST", "/console/staff/" + n + "/sessions/end",
			url.Values{"_csrf": {csrf}}, 404})
	}
	cases = append(cases,
		tc{"end an account's sessions with GET", "GET", "/console/staff/1/sessions/end", nil, 0},
		tc{"end all with GET", "GET", "/console/sessions/end-all", nil, 0},
	)
	var sessions, audits int
	counts := func() (int, int) {
		t.Helper()
		var s, a int
		if err := h.app.DB.X().Get(&s, `SELECT COUNT(*) FROM staff_session`); err != nil {
			t.Fatal(err)
		}
		if err := h.app.DB.X().Get(&a, `SELECT COUNT(*) FROM audit_log WHERE action LIKE '%sessions%'`); err != nil {
			t.Fatal(err)
		}
		return s, a
	}
	sessions, audits = counts()
	for _, c := range cases {
		req, err := http.NewRequest(c.method, h.base+c.path, strings.NewReader(c.form.Encode()))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := admin.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 || (c.status != 0 && resp.StatusCode != c.status) {
			t.Errorf("%s: %d, want %s", c.name, resp.StatusCode, wantStatus(c.status))
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("%s: Content-Type %q", c.name, ct)
		}
		for _, in := range injections {
			if strings.ContainsAny(in.value, "<>\"") && bytes.Contains(body, []byte(in.value)) {
				t.Errorf("%s: the page reflects %q raw", c.name, in.value)
			}
		}
	}
	if s, a := counts(); s != sessions || a != audits {
		t.Errorf("hostile input changed sessions %d -> %d, session audit rows %d -> %d", sessions, s, audits, a)
	}

	// A User-Agent is the browser's text, shown escaped.
	for _, in := range injections {
		if strings.ContainsAny(in.value, "\x00\r\n") {
			continue // not sendable as a header value
		}
		name := fmt.Sprintf("ua-%d", len(in.name)) + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' {
				return r
			}
			return -1
		}, in.name)
		client, _ := h.consoleLogin(name, access.RoleBoxOffice, in.value)
		resp, err := client.Get(h.base + "/console/sessions")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("sessions page with User-Agent %s: %d", in.name, resp.StatusCode)
			continue
		}
		page := string(body)
		if strings.ContainsAny(in.value, "<>\"") && strings.Contains(page, in.value) {
			t.Errorf("User-Agent %s is on the page raw", in.name)
		}
		if want := html.EscapeString(strings.ToValidUTF8(truncate(in.value, 255), "\uFFFD")); !strings.Contains(page, want) {
			t.Errorf("User-Agent %s is not on the page as text (%.60q)", in.name, want)
		}
	}
}

// The console's pages carry the security headers, and their HTML has no
// inline script, style or event handler the CSP would have to allow.
func TestConsoleSecurityHeaders(t *testing.T) {
	h := newHostileApp(t, nil)
	resp, body := h.send("GET", "/console/login", "", map[string]string{"Authorization": ""})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login page: %d", resp.StatusCode)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
		"frame-ancestors 'none'"} {
		if !strings.Contains(csp, d+";") && !strings.HasSuffix(csp, d) {
			t.Errorf("CSP %q lacks %q", csp, d)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP %q allows inline code", csp)
	}
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
		"X-Frame-Options": "DENY"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	page := string(body)
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1) {
		if !strings.Contains(tag, " src=") {
			t.Errorf("inline script: %s", tag)
		}
	}
	for _, re := range []string{`<style`, `\sstyle=`, `\son[a-z]+=`, `javascript:`} {
		if m := regexp.MustCompile(re).FindString(page); m != "" {
			t.Errorf("inline %q in the login page", m)
		}
	}
}

// The cancel body and the callback signature check, fuzzed: never a 5xx,
// never an accepted forgery.
func FuzzCancelOrder(f *testing.F) {
	a := newTestApp(f)
	no := a.place(1, "A-1")["order_no"].(string)
	for _, seed := range []string{`{"user_id":1}`, `{"user_id":2}`, `{}`, `null`, `{"user_id":1e99}`, `{"user_id":"1"}`, `[]`, ``} {
		f.Add(no, []byte(seed))
	}
	f.Add("SF' OR 1=1 --", []byte(`{"user_id":1}`))
	f.Fuzz(func(t *testing.T, orderNo string, body []byte) {
		req, err := http.NewRequestWithContext(t.Context(), "POST", "/api/v1/orders/"+url.PathEscape(orderNo)+"/cancel", bytes.NewReader(body))
		if err != nil {
			return
		}
		checkAPIResponse(t, serve(t, a, req))
	})
}

func FuzzVerifySignature(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	f.Add(ts, sign(testSecret, ts, `{}`), []byte(`{}`))
	f.Add(ts, "", []byte(`{}`))
	f.Add("-1", "zz", []byte{})
	f.Add(ts+"0", sign(testSecret, ts+"0", `{}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, timestamp, signature string, body []byte) {
		err := verifySignature(Secret(testSecret), timestamp, signature, body, now)
		valid := signature == sign(testSecret, timestamp, string(body))
		if err != nil && core.ErrorKind(err) != core.KindUnauthorized {
			t.Fatalf("error %v is not unauthorized", err)
		}
		if err == nil && !valid {
			t.Fatalf("accepted a signature that is not the HMAC: ts %q sig %q", timestamp, signature)
		}
		if err == nil {
			n, _ := strconv.ParseInt(timestamp, 10, 64)
			if d := now.Sub(time.Unix(n, 0)); d > maxClockSkew || d < -maxClockSkew {
				t.Fatalf("accepted a timestamp %v away", d)
			}
		}
	})
}

// TestHostileConsoleAccountRoutes: the password, role, reset-link and
// two-step routes answer hostile ids, tokens, roles and codes with a 4xx
// page that reflects nothing raw, and change nothing.
func TestHostileConsoleAccountRoutes(t *testing.T) {
	h := newHostileApp(t, nil)
	admin, csrf := h.consoleLogin("hostile-admin", access.RoleAdmin, "HostileTest/1.0")
	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	type tc struct {
		name, method, path string
		form               url.Values
		client             *http.Client
		status             int // 0: any 4xx
	}
	var cases []tc
	for _, in := range injections {
		esc := url.PathEscape(in.value)
		resetForm := url.Values{"password": {in.value}, "confirm": {in.value}}
		resetStatus := http.StatusNotFound // an unknown link
		if len(resetForm.Encode()) > consoleSignInLimit {
			resetStatus = http.StatusRequestEntityTooLarge // refused before the link is looked up
		}
		cases = append(cases,
			tc{"role, id: " + in.name, "POST", "/console/staff/" + esc + "/role", url.Values{"_csrf": {csrf}, "role": {"admin"}}, admin, 404},
			tc{"role, role: " + in.name, "POST", "/console/staff/1/role", url.Values{"_csrf": {csrf}, "role": {in.value}}, admin, 0},
			tc{"reset link, id: " + in.name, "POST", "/console/staff/" + esc + "/reset-link", url.Values{"_csrf": {csrf}}, admin, 404},
			tc{"2fa reset, id: " + in.name, "POST", "/console/staff/" + esc + "/2fa-reset", url.Values{"_csrf": {csrf}}, admin, 404},
			tc{"reset page, token: " + in.name, "GET", "/console/reset/" + esc, nil, anon, 404},
			tc{"reset form, token: " + in.name, "POST", "/console/reset/" + esc, resetForm, anon, resetStatus},
			tc{"sign-in code, challenge: " + in.name, "POST", "/console/login/code", url.Values{"challenge": {in.value}, "code": {"123456"}}, anon, 0},
			tc{"own password, new: " + in.name, "POST", "/console/account/password",
				url.Values{"_csrf": {csrf}, "current": {in.value}, "password": {in.value}, "confirm": {in.value}}, admin, 0}, // 422, then 429 once the wrong ones add up
			tc{"2fa confirm, code: " + in.name, "POST", "/console/account/2fa", url.Values{"_csrf": {csrf}, "code": {in.value}}, admin, 0},
		)
	}
	// The 2fa confirm needs an offer to refuse a code against.
	if resp, err := admin.Get(h.base + "/console/account/2fa"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	var hashes string
	snapshot := func() string {
		t.Helper()
		var s string
		if err := h.app.DB.X().Get(&s, `SELECT COALESCE(GROUP_CONCAT(username || ':' || role || ':' || password_hash), '') FROM staff`); err != nil {
			t.Fatal(err)
		}
		return s
	}
	hashes = snapshot()
	for _, c := range cases {
		req, err := http.NewRequest(c.method, h.base+c.path, strings.NewReader(c.form.Encode()))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := c.client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 || (c.status != 0 && resp.StatusCode != c.status) {
			t.Errorf("%s: %d, want %s", c.name, resp.StatusCode, wantStatus(c.status))
		}
		for _, in := range injections {
			if strings.ContainsAny(in.value, "<>\"") && bytes.Contains(body, []byte(in.value)) {
				t.Errorf("%s: the page reflects %q raw", c.name, in.value)
			}
		}
	}
	if now := snapshot(); now != hashes {
		t.Errorf("hostile input changed an account:\n was %s\n now %s", hashes, now)
	}
}
