package server

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/admission"
	"seatflow/core/store"
)

// testAdmissionKey is the admission key of the queue tests' apps, so a
// test can sign what a server would (an expired grant) or restart with it.
var testAdmissionKey = admission.NewKey()

// queueApp is a test app whose admission loop never ticks on its own: the
// test drives it with step, and admits one buyer a second of step time.
func newQueueApp(t *testing.T, override ...string) *testApp {
	t.Helper()
	env := []string{"SEATFLOW_QUEUE_TICK", "1h", "SEATFLOW_QUEUE_MIN_RATE", "1", "SEATFLOW_QUEUE_MAX_RATE", "1",
		"SEATFLOW_QUEUE_INITIAL_RATE", "1", "SEATFLOW_ADMISSION_KEY", testAdmissionKey}
	return newTestApp(t, append(env, override...)...)
}

func (a *testApp) step(at time.Time) {
	a.t.Helper()
	if err := a.app.room.Step(a.t.Context(), at); err != nil {
		a.t.Fatal(err)
	}
}

func (a *testApp) queuePath(show int64) string {
	return "/api/v1/shows/" + strconv.FormatInt(show, 10) + "/queue"
}

func (a *testApp) configureQueue(show int64, body string) map[string]any {
	a.t.Helper()
	rec := a.do("PUT", a.queuePath(show), body)
	if rec.Code != http.StatusOK {
		a.t.Fatalf("PUT queue %s: status %d, body %s", body, rec.Code, rec.Body)
	}
	return decode(a.t, rec)
}

// join joins user to show's queue and returns the status and the view.
func (a *testApp) join(show, user int64) (int, map[string]any) {
	a.t.Helper()
	rec := a.do("POST", a.queuePath(show), fmt.Sprintf(`{"user_id":%d}`, user))
	if rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
		a.t.Fatalf("join %d: status %d, body %s", user, rec.Code, rec.Body)
	}
	return rec.Code, decode(a.t, rec)
}

func (a *testApp) poll(ticket string) map[string]any {
	a.t.Helper()
	rec := a.do("GET", "/api/v1/queue/"+ticket, "", "Authorization", "")
	if rec.Code != http.StatusOK {
		a.t.Fatalf("poll: status %d, body %s", rec.Code, rec.Body)
	}
	return decode(a.t, rec)
}

// placeWith sends an order with an admission ("" sends none).
func (a *testApp) placeWith(show, user int64, admission string, seats ...string) (int, string) {
	a.t.Helper()
	req := map[string]any{"user_id": user, "show_id": show, "seat_ids": seats}
	if admission != "" {
		req["admission"] = admission
	}
	body, _ := json.Marshal(req)
	rec := a.do("POST", "/api/v1/orders", string(body))
	if rec.Code >= 400 {
		return rec.Code, errorCode(a.t, rec)
	}
	return rec.Code, ""
}

// admit joins the users and steps the loop until every one is admitted;
// it returns their admissions.
func (a *testApp) admit(show int64, start time.Time, users ...int64) []string {
	a.t.Helper()
	tickets := make([]string, len(users))
	for i, u := range users {
		_, v := a.join(show, u)
		tickets[i] = v["ticket"].(string)
	}
	a.step(start)
	a.step(start.Add(time.Duration(len(users)) * time.Second))
	out := make([]string, len(users))
	for i, tk := range tickets {
		v := a.poll(tk)
		if v["state"] != "admitted" {
			a.t.Fatalf("user %d not admitted: %v", users[i], v)
		}
		out[i] = v["admission"].(string)
	}
	return out
}

func (a *testApp) newShow() int64 {
	a.t.Helper()
	s, err := a.app.DB.CreateShow(a.t.Context(), core.Show{Name: "Other", Venue: "Hall", StartsAt: time.Now().Add(24 * time.Hour)},
		store.DemoSeats(3, 4, 1000))
	if err != nil {
		a.t.Fatal(err)
	}
	return s.ID
}

// Joining is idempotent per user and show, positions follow the joins,
// and every refusal has its code.
func TestQueueJoin(t *testing.T) {
	a := newQueueApp(t)
	show := a.show.ID
	if rec := a.do("POST", a.queuePath(show), `{"user_id":1}`); rec.Code != http.StatusNotFound || errorCode(t, rec) != "queue_not_found" {
		t.Fatalf("join before the queue is enabled: %d %s", rec.Code, rec.Body)
	}
	q := a.configureQueue(show, `{"enabled":true}`)
	if q["mode"] != "always" || q["window_seconds"] != float64(600) || q["seed_hash"] != nil {
		t.Fatalf("defaults: %v", q)
	}
	// The change is audited with the key as its actor, as the console's are.
	var staff, target string
	if err := a.app.DB.X().QueryRow(`SELECT staff, target FROM audit_log WHERE action = ?`, admission.AuditQueueSettings).Scan(&staff, &target); err != nil ||
		!strings.HasPrefix(staff, core.ActorAPIPrefix) || target != fmt.Sprintf("show:%d", show) {
		t.Errorf("audit of the API's change: staff %q target %q, %v", staff, target, err)
	}
	tickets := map[int64]string{}
	for _, tc := range []struct {
		user     int64
		status   int
		position float64
	}{
		{7, http.StatusCreated, 1},
		{8, http.StatusCreated, 2},
		{7, http.StatusOK, 1}, // again: the same entry
		{9, http.StatusCreated, 3},
		{8, http.StatusOK, 2},
	} {
		status, v := a.join(show, tc.user)
		if status != tc.status || v["position"] != tc.position || v["state"] != "waiting" || v["admission"] != nil {
			t.Errorf("join %d: %d %v, want %d at %v waiting", tc.user, status, v, tc.status, tc.position)
		}
		tk := v["ticket"].(string)
		if old, ok := tickets[tc.user]; ok && old != tk {
			t.Errorf("user %d: a second join gave ticket %q, the first %q", tc.user, tk, old)
		}
		tickets[tc.user] = tk
		if p := a.poll(tk); p["position"] != tc.position || p["ticket"] != tk {
			t.Errorf("poll %d: %v", tc.user, p)
		}
	}
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"no user", "POST", a.queuePath(show), `{}`, 400, "invalid_request"},
		{"negative user", "POST", a.queuePath(show), `{"user_id":-1}`, 400, "invalid_request"},
		{"forged ticket", "GET", "/api/v1/queue/" + tickets[7] + "x", "", 404, "ticket_not_found"},
		{"garbage ticket", "GET", "/api/v1/queue/nothing", "", 404, "ticket_not_found"},
		{"bad mode", "PUT", a.queuePath(show), `{"enabled":true,"mode":"sometimes"}`, 400, "invalid_request"},
		{"bad window", "PUT", a.queuePath(show), `{"enabled":true,"window_seconds":86401}`, 400, "invalid_request"},
		{"bad opens_at", "PUT", a.queuePath(show), `{"enabled":true,"opens_at":"tomorrow"}`, 400, "invalid_request"},
		{"unknown show", "PUT", a.queuePath(999999), `{"enabled":true}`, 404, "show_not_found"},
		{"unknown show read", "GET", a.queuePath(999999), "", 404, "show_not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := a.do(tc.method, tc.path, tc.body, "Authorization", "Bearer "+testToken)
			if rec.Code != tc.status || errorCode(t, rec) != tc.code {
				t.Errorf("%d %s, want %d %s", rec.Code, rec.Body, tc.status, tc.code)
			}
		})
	}
	if got := a.do("GET", a.queuePath(show), ""); got.Code != 200 || decode(t, got)["joined"] != float64(3) {
		t.Errorf("GET queue: %d %s", got.Code, got.Body)
	}
}

// A buyer is admitted by the loop, places with the admission (through a
// 409), and the used admission is refused; every bad admission has its code.
func TestQueueAdmissionFlow(t *testing.T) {
	a := newQueueApp(t)
	show, other := a.show.ID, a.newShow()
	for _, s := range []int64{show, other} {
		a.configureQueue(s, `{"enabled":true}`)
	}
	// Before any step there is no controller reading to show (not a rate of
	// 0 taken at the year 1).
	if q := decode(t, a.do("GET", a.queuePath(show), "")); q["controller"] != nil {
		t.Errorf("controller before any step: %v", q["controller"])
	}
	t0 := time.Now()
	_, w := a.join(show, 3) // joins first: waits at position 1 until a step
	if w["state"] != "waiting" {
		t.Fatalf("before any step: %v", w)
	}
	adm := a.admit(show, t0, 3, 1, 2)
	otherAdm := a.admit(other, t0, 1)[0]
	keys, err := admission.NewKeys(mustKey(t, testAdmissionKey))
	if err != nil {
		t.Fatal(err)
	}
	expired := keys.SignAdmission(admission.Grant{Show: show, User: 1, Seq: 2, Until: time.Now().Add(-time.Second)})
	stranger, err := admission.NewKeys(mustKey(t, admission.NewKey()))
	if err != nil {
		t.Fatal(err)
	}
	forged := stranger.SignAdmission(admission.Grant{Show: show, User: 1, Seq: 2, Until: time.Now().Add(time.Hour)})

	steps := []struct {
		name      string
		user      int64
		admission string
		seat      string
		status    int
		code      string
	}{
		{"missing", 1, "", "A-1", 403, "admission_required"},
		{"garbage", 1, "not-a-token", "A-1", 403, "admission_invalid"},
		{"forged", 1, forged, "A-1", 403, "admission_invalid"},
		{"expired", 1, expired, "A-1", 403, "admission_invalid"},
		{"other user", 1, adm[2], "A-1", 403, "admission_invalid"},
		{"other show", 1, otherAdm, "A-1", 403, "admission_invalid"},
		{"user 2 places", 2, adm[2], "A-1", 201, ""},
		{"409 keeps the admission", 1, adm[1], "A-1", 409, "seat_unavailable"},
		{"retry places", 1, adm[1], "A-2", 201, ""},
		{"used", 1, adm[1], "A-3", 403, "admission_invalid"},
		{"used by user 2", 2, adm[2], "A-4", 403, "admission_invalid"},
	}
	for _, st := range steps {
		status, code := a.placeWith(show, st.user, st.admission, st.seat)
		if status != st.status || code != st.code {
			t.Errorf("%s: %d %s, want %d %s", st.name, status, code, st.status, st.code)
		}
	}
	q := decode(t, a.do("GET", a.queuePath(show), ""))
	if q["placed"] != float64(2) || q["admitted"] != float64(3) || q["controller"] == nil {
		t.Errorf("queue after the sales: %v", q)
	}
}

func mustKey(t *testing.T, s string) []byte {
	t.Helper()
	k, err := admission.ParseKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A paused queue admits nobody; resumed, it goes on.
func TestQueuePauseResume(t *testing.T) {
	a := newQueueApp(t)
	show := a.show.ID
	a.configureQueue(show, `{"enabled":true,"paused":true}`)
	_, v := a.join(show, 1)
	t0 := time.Now()
	a.step(t0)
	a.step(t0.Add(10 * time.Second))
	if p := a.poll(v["ticket"].(string)); p["state"] != "waiting" {
		t.Fatalf("paused: %v", p)
	}
	a.configureQueue(show, `{"enabled":true,"paused":false}`)
	a.step(t0.Add(20 * time.Second))
	if p := a.poll(v["ticket"].(string)); p["state"] != "admitted" || p["admission"] == nil || p["admitted_until"] == nil {
		t.Fatalf("resumed: %v", p)
	}
}

// Mode overload: while the engine copes a join is admitted at once and an
// order needs no admission; while it sheds, the queue is engaged.
func TestQueueModeOverload(t *testing.T) {
	a := newQueueApp(t)
	show := a.show.ID
	var overloaded bool
	a.app.overloaded = func() bool { return overloaded }
	a.configureQueue(show, `{"enabled":true,"mode":"overload"}`)
	if _, v := a.join(show, 1); v["state"] != "admitted" || v["admission"] == nil {
		t.Fatalf("not overloaded: the join is not admitted at once: %v", v)
	}
	if status, code := a.placeWith(show, 2, "", "A-1"); status != 201 {
		t.Fatalf("not overloaded: an order without admission: %d %s", status, code)
	}
	overloaded = true
	if _, v := a.join(show, 3); v["state"] != "waiting" {
		t.Fatalf("overloaded: the join is admitted at once: %v", v)
	}
	if status, code := a.placeWith(show, 4, "", "A-2"); status != 403 || code != "admission_required" {
		t.Fatalf("overloaded: an order without admission: %d %s", status, code)
	}
	overloaded = false
	if status, code := a.placeWith(show, 4, "", "A-2"); status != 201 {
		t.Fatalf("overload over: %d %s", status, code)
	}
}

// An admission signed before a key rotation still places after it: the old
// key is kept as a previous one. Dropped, it is refused.
func TestQueueAdmissionKeyRotation(t *testing.T) {
	newKey := admission.NewKey()
	for _, tc := range []struct {
		name     string
		previous string
		status   int
	}{
		{"old key kept as previous", testAdmissionKey, 201},
		{"old key dropped", "", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newQueueApp(t)
			show := a.show.ID
			a.configureQueue(show, `{"enabled":true}`)
			adm := a.admit(show, time.Now(), 1)[0]
			// The instance that signed it is replaced by one with the new
			// key over the same queue (the seat store's, shared).
			b := newQueueApp(t, "SEATFLOW_ADMISSION_KEY", newKey, "SEATFLOW_ADMISSION_KEYS_PREVIOUS", tc.previous)
			keys, err := b.app.cfg.AdmissionKeys()
			if err != nil {
				t.Fatal(err)
			}
			room := admission.NewRoom(a.app.room.Store(), keys, admission.RoomConfig{Tick: time.Hour},
				admission.Signals{}, nil, nil)
			b.app.Handler.room = room
			if err := room.Step(t.Context(), time.Now()); err != nil {
				t.Fatal(err)
			}
			// b's database has the same show (the first of each); the
			// order is placed there.
			if status, code := b.placeWith(show, 1, adm, "A-1"); status != tc.status {
				t.Errorf("%d %s, want %d", status, code, tc.status)
			}
		})
	}
}

// tamperedStore changes one entry's user in what Entries reads, as a
// rewritten join in the store would.
type tamperedStore struct {
	admission.Store
	index int
	user  int64
}

func (s tamperedStore) Entries(ctx context.Context, show int64) ([]admission.Entry, []int64, error) {
	es, pos, err := s.Store.Entries(ctx, show)
	if err == nil {
		es[s.index].User = s.user
	}
	return es, pos, err
}

// Joins before opens_at form a pre-queue with no position; at opens_at it
// is drawn, the seed published, and `seatflow queue verify` reproduces the
// order; changing one join makes it fail.
func TestQueuePreQueueVerify(t *testing.T) {
	a := newQueueApp(t)
	show := a.show.ID
	opens := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	q := a.configureQueue(show, `{"enabled":true,"opens_at":"`+opens.Format(time.RFC3339)+`"}`)
	hash, _ := q["seed_hash"].(string)
	if len(hash) != 64 || q["seed"] != nil {
		t.Fatalf("enabled with opens_at: %v", q)
	}
	var tickets []string
	for u := int64(1); u <= 20; u++ {
		_, v := a.join(show, u)
		if v["position"] != float64(0) || v["opens_at"] == nil {
			t.Fatalf("pre-queue join %d: %v", u, v)
		}
		tickets = append(tickets, v["ticket"].(string))
	}
	verify := func(s admission.Store) (string, error) {
		var out bytes.Buffer
		err := QueueCommand(t.Context(), func() (admission.Store, io.Closer, error) { return s, io.NopCloser(nil), nil },
			[]string{"verify", "--show", strconv.FormatInt(show, 10)}, &out)
		return out.String(), err
	}
	a.step(opens.Add(-time.Second))
	if _, err := verify(a.app.room.Store()); err == nil || !strings.Contains(err.Error(), "not drawn") {
		t.Fatalf("verify before the draw: %v", err)
	}
	a.step(opens)
	q = decode(t, a.do("GET", a.queuePath(show), ""))
	seed, _ := q["seed"].(string)
	if q["shuffled"] != true || q["seed_hash"] != hash || seed == "" {
		t.Fatalf("after opens_at: %v", q)
	}
	seen := map[float64]bool{}
	for _, tk := range tickets {
		p := a.poll(tk)["position"].(float64)
		if p < 1 || p > 20 || seen[p] {
			t.Fatalf("drawn position %v", p)
		}
		seen[p] = true
	}
	out, err := verify(a.app.room.Store())
	if err != nil || !strings.HasPrefix(out, "OK") {
		t.Fatalf("verify: %q, %v", out, err)
	}
	// A user id whose draw moves the entry: the order then differs.
	entries, _, err := a.app.room.Store().Entries(t.Context(), show)
	if err != nil {
		t.Fatal(err)
	}
	seedBytes := mustHex(t, seed)
	want := admission.DrawOrder(seedBytes, entries)
	for u := int64(1000); ; u++ {
		changed := append([]admission.Entry(nil), entries...)
		changed[0].User = u
		if got := admission.DrawOrder(seedBytes, changed); got[0] == want[0] {
			continue
		}
		_, err = verify(tamperedStore{Store: a.app.room.Store(), index: 0, user: u})
		break
	}
	if !errors.Is(err, admission.ErrUnfair) {
		t.Fatalf("verify with one join changed: %v, want ErrUnfair", err)
	}

	// The same proof laid open through the API and checked from a file,
	// with no store: as an auditor (or the embedded stack) does.
	rec := a.do("GET", a.queuePath(show)+"/entries", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET entries: %d %s", rec.Code, rec.Body)
	}
	var proof queueProofJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &proof); err != nil || len(proof.Entries) != 20 || proof.Seed != seed {
		t.Fatalf("entries: %v, %s", err, rec.Body)
	}
	fromFile := func(p queueProofJSON) (string, error) {
		path := filepath.Join(t.TempDir(), "proof.json")
		b, _ := json.Marshal(p)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		noStore := func() (admission.Store, io.Closer, error) {
			t.Fatal("verify --file opened a store")
			return nil, nil, nil
		}
		err := QueueCommand(t.Context(), noStore, []string{"verify", "--file", path}, &out)
		return out.String(), err
	}
	if out, err := fromFile(proof); err != nil || !strings.HasPrefix(out, "OK: show") {
		t.Fatalf("verify --file: %q, %v", out, err)
	}
	swapped := proof
	swapped.Entries = append([]queueEntryJSON(nil), proof.Entries...)
	swapped.Entries[0].Position, swapped.Entries[1].Position = proof.Entries[1].Position, proof.Entries[0].Position
	if _, err := fromFile(swapped); !errors.Is(err, admission.ErrUnfair) {
		t.Fatalf("verify --file with two positions swapped: %v, want ErrUnfair", err)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
