package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/store"
	"seatflow/core/testenv"
)

const (
	testToken  = "test-token-0123456789abcdef"
	testSecret = "test-payment-secret-0123456789"
)

// mapEnv is a getenv over a map.
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// testApp is the real embedded stack (SQLite file, in-process seat store, DB
// delay queue) behind the HTTP handler, with one 3×4 show: row A costs
// 1500, row B 1250, row C 1000 cents a seat.
type testApp struct {
	t    testing.TB
	app  *App
	show core.Show
}

// noAbuseLimits turns the API's abuse limits off: the tests send many
// requests from one key and one address on purpose. abuse_test.go turns
// them on.
var noAbuseLimits = map[string]string{"SEATFLOW_RATE_PER_KEY": "0", "SEATFLOW_RATE_PER_CLIENT": "0",
	"SEATFLOW_MAX_HOLDS_PER_CLIENT": "0"}

// override holds name, value pairs of extra environment settings.
func newTestApp(t testing.TB, override ...string) *testApp {
	t.Helper()
	env := map[string]string{
		"SEATFLOW_DB":                  "sqlite://" + filepath.Join(t.TempDir(), "seatflow.db"),
		"SEATFLOW_API_TOKEN":           testToken,
		"SEATFLOW_PAYMENT_SECRET":      testSecret,
		"SEATFLOW_PURCHASE_LIMIT":      "4",
		"SEATFLOW_MAX_SEATS_PER_ORDER": "3",
	}
	maps.Copy(env, noAbuseLimits)
	for i := 0; i+1 < len(override); i += 2 {
		env[override[i]] = override[i+1]
	}
	cfg, err := LoadConfig(mapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApp(t.Context(), cfg, NewLogger(io.Discard, slog.LevelInfo))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := app.Close(); err != nil {
			t.Errorf("close app: %v", err)
		}
	})
	show, err := app.DB.CreateShow(t.Context(), core.Show{Name: "Test Show", Venue: "Hall",
		StartsAt: time.Now().Add(24 * time.Hour)}, store.DemoSeats(3, 4, 1000))
	if err != nil {
		t.Fatal(err)
	}
	return &testApp{t: t, app: app, show: show}
}

// goneSeatStore starts an in-process Redis-protocol server for a test whose
// seat store must go away (the embedded one lives in the app's process) and
// returns it with the settings that point an app at it.
func goneSeatStore(t testing.TB) (*testenv.EmbeddedRedis, map[string]string) {
	t.Helper()
	emb, err := testenv.StartEmbeddedRedis()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	// It never evicts, and has no CONFIG for the start to ask.
	return emb, map[string]string{"SEATFLOW_REDIS": emb.URL(), "SEATFLOW_REDIS_ALLOW_EVICTION": "true"}
}

// do sends a request through the handler. Without an explicit
// Authorization header it adds the valid bearer token. Every /api/v1
// exchange is checked against openapi.json (checkContract).
func (a *testApp) do(method, path, body string, header ...string) *httptest.ResponseRecorder {
	a.t.Helper()
	req := httptest.NewRequestWithContext(a.t.Context(), method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	a.app.Handler.ServeHTTP(rec, req)
	if strings.HasPrefix(req.URL.Path, "/api/v1/") {
		checkContract(a.t, req, body, rec.Code, rec.Header(), rec.Body.Bytes())
	}
	return rec
}

// pay sends a correctly signed payment callback.
func (a *testApp) pay(body string) *httptest.ResponseRecorder {
	a.t.Helper()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	return a.do("POST", "/api/v1/payments/callback", body,
		"X-SeatFlow-Timestamp", ts, "X-SeatFlow-Signature", sign(testSecret, ts, body))
}

// place places an order and returns its JSON; it fails the test unless 201.
func (a *testApp) place(userID int64, seats ...string) map[string]any {
	a.t.Helper()
	body, _ := json.Marshal(map[string]any{"user_id": userID, "show_id": a.show.ID, "seat_ids": seats})
	rec := a.do("POST", "/api/v1/orders", string(body))
	if rec.Code != http.StatusCreated {
		a.t.Fatalf("place %v: status %d, body %s", seats, rec.Code, rec.Body)
	}
	return decode(a.t, rec)
}

// count returns the number of rows in table.
func (a *testApp) count(table string) int {
	a.t.Helper()
	var n int
	if err := a.app.DB.X().Get(&n, "SELECT COUNT(*) FROM "+table); err != nil {
		a.t.Fatal(err)
	}
	return n
}

// writtenTables are the tables a request could write to.
var writtenTables = []string{"order_info", "order_seat", "order_event", "payment", "discrepancy", "delay_task"}

func (a *testApp) counts() map[string]int {
	m := map[string]int{}
	for _, t := range writtenTables {
		m[t] = a.count(t)
	}
	return m
}

// seatStates returns seat id → state from the API.
func (a *testApp) seatStates() map[string]string {
	a.t.Helper()
	rec := a.do("GET", "/api/v1/shows/"+strconv.FormatInt(a.show.ID, 10)+"/seats", "")
	if rec.Code != http.StatusOK {
		a.t.Fatalf("seats: status %d, body %s", rec.Code, rec.Body)
	}
	var out struct {
		Seats []struct {
			SeatID string `json:"seat_id"`
			State  string `json:"state"`
		} `json:"seats"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		a.t.Fatal(err)
	}
	m := map[string]string{}
	for _, s := range out.Seats {
		m[s.SeatID] = s.State
	}
	return m
}

// sign is written independently of verifySignature, from the documented
// contract, so a mistake in either shows up.
func sign(secret, ts, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	io.WriteString(mac, ts+"."+body)
	return hex.EncodeToString(mac.Sum(nil))
}

func decode(t testing.TB, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("response is not a JSON object: %v: %q", err, rec.Body)
	}
	return m
}

// errorCode returns error.code of an error response, failing the test if
// the body does not have the documented error shape.
func errorCode(t testing.TB, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	if err := dec.Decode(&body); err != nil || body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("status %d: body is not {\"error\":{\"code\",\"message\"}}: %q", rec.Code, rec.Body)
	}
	return body.Error.Code
}
