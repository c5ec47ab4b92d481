package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/reconcile"
	"seatflow/core/stacktest"
	"seatflow/web"
)

// DryRun and Run make fakeRunner a whole ReconcileRunner; the dry run
// itself is tested against the real reconciler (TestConsoleDryRun).
func (f *fakeRunner) DryRun(ctx context.Context) (web.ReconcileRun, error) {
	r, err := f.RunNow(ctx)
	if err != nil {
		return r, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs[len(f.runs)-1].DryRun = true
	return f.runs[len(f.runs)-1], nil
}

func (f *fakeRunner) Run(_ context.Context, id int64) (web.ReconcileRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.runs {
		if r.ID == id {
			return r, nil
		}
	}
	return web.ReconcileRun{}, reconcile.ErrRunNotFound
}

func TestConsoleExtend(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleBoxOffice)
	o := env.place(30, "A-1")
	path := "/console/orders/" + o.OrderNo + "/extend"

	for _, c := range []struct {
		name string
		form url.Values
		want string
	}{
		{"no minutes", url.Values{"reason": {"x"}}, "Give a whole number of minutes"},
		{"zero", url.Values{"minutes": {"0"}, "reason": {"x"}}, "Give a whole number of minutes"},
		{"too many", url.Values{"minutes": {"121"}, "reason": {"x"}}, "Give a whole number of minutes"},
		{"no reason", url.Values{"minutes": {"5"}, "reason": {"  "}}, "Give a reason for the extension."},
	} {
		rec := b.post(path, c.form)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("%s: %d, want 422 with %q", c.name, rec.Code, c.want)
		}
	}
	rec := b.post(path, url.Values{"minutes": {"20"}, "reason": {"card declined, trying another"}})
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !strings.HasSuffix(loc, "?outcome=extended") {
		t.Fatalf("extend: %d %q", rec.Code, loc)
	}
	got, _, _ := env.engine.Order(t.Context(), o.OrderNo)
	if want := o.ExpireAt.Truncate(time.Millisecond).Add(20 * time.Minute); !got.ExpireAt.Equal(want) {
		t.Errorf("expiry %v, want %v", got.ExpireAt, want)
	}
	page := b.do("GET", "/console/orders/"+o.OrderNo+"?outcome=extended", nil, nil).Body.String()
	for _, want := range []string{"Hold extended: it now expires at", "Hold extended</strong>", "card declined, trying another",
		"staff:box_office-user", `id="extend-form"`} {
		if !strings.Contains(page, want) {
			t.Errorf("order page lacks %q", want)
		}
	}
	// 35 of 120 minutes: 86 more is past the maximum.
	rec = b.post(path, url.Values{"minutes": {"86"}, "reason": {"long show"}})
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "longer than allowed") {
		t.Errorf("past the maximum: %d", rec.Code)
	}
	// 85 more is exactly the maximum: the page then says so instead of
	// offering a form that can only fail.
	if rec = b.post(path, url.Values{"minutes": {"85"}, "reason": {"long show"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("extend to the maximum: %d", rec.Code)
	}
	page = b.do("GET", "/console/orders/"+o.OrderNo, nil, nil).Body.String()
	if strings.Contains(page, `id="extend-form"`) || !strings.Contains(page, "This hold is at its limit of 2 h") {
		t.Error("a hold at its limit offers the extend form, or does not say it is at its limit")
	}
	env.pay(o)
	page = b.do("GET", "/console/orders/"+o.OrderNo, nil, nil).Body.String()
	for _, closed := range []string{"Hold expires", "Next timeout due"} {
		if strings.Contains(page, closed) {
			t.Errorf("the paid order's page still shows %q", closed)
		}
	}
	rec = b.post(path, url.Values{"minutes": {"5"}, "reason": {"late"}})
	if loc := rec.Header().Get("Location"); !strings.HasSuffix(loc, "?outcome=already_paid") {
		t.Errorf("extend a paid order: %d %q, want the order page saying already paid", rec.Code, loc)
	}
	var outcomes []string
	if err := env.db.X().Select(&outcomes, `SELECT detail FROM audit_log WHERE action = ? ORDER BY id`, core.AuditExtendHold); err != nil {
		t.Fatal(err)
	}
	if len(outcomes) != 4 || !strings.Contains(outcomes[0], `"outcome":"extended"`) || !strings.Contains(outcomes[1], `"outcome":"hold_limit"`) ||
		!strings.Contains(outcomes[2], `"outcome":"extended"`) || !strings.Contains(outcomes[3], `"outcome":"order_not_pending"`) {
		t.Errorf("audit of extensions %v: want extended, hold_limit, extended, order_not_pending", outcomes)
	}
	if page := b.do("GET", "/console/orders/"+o.OrderNo, nil, nil).Body.String(); strings.Contains(page, `id="extend-form"`) {
		t.Error("a paid order offers the extend form")
	}
}

// TestConsoleCases works a case through the pages: queue, take, refused
// and allowed moves, notes, history, filters; box office may do none of it.
func TestConsoleCases(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := t.Context()
	var ids []int64
	for i, seat := range []string{"C-1", "C-2"} {
		o := env.place(int64(40+i), seat)
		if _, err := env.engine.Cancel(ctx, o.OrderNo, o.UserID); err != nil {
			t.Fatal(err)
		}
		env.pay(o)
		var id int64
		if err := env.db.X().Get(&id, `SELECT id FROM discrepancy WHERE order_no = ?`, o.OrderNo); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	first, second := fmt.Sprint(ids[0]), fmt.Sprint(ids[1])
	box := env.login(access.RoleBoxOffice)
	for _, r := range []struct{ method, path string }{{"GET", "/console/discrepancies"}, {"GET", "/console/discrepancies/" + first},
		{"POST", "/console/discrepancies/" + first + "/take"}, {"POST", "/console/discrepancies/" + first + "/move"},
		{"POST", "/console/discrepancies/" + first + "/note"}} {
		var rec interface{ Result() *http.Response }
		if r.method == "GET" {
			rec = box.do(r.method, r.path, nil, nil)
		} else {
			rec = box.post(r.path, url.Values{"to": {"written_off"}, "note": {"x"}})
		}
		if code := rec.Result().StatusCode; code != http.StatusForbidden {
			t.Errorf("box office %s %s: %d, want 403", r.method, r.path, code)
		}
	}

	ops := env.login(access.RoleOps)
	queue := ops.do("GET", "/console/discrepancies", nil, nil).Body.String()
	if i, j := strings.Index(queue, `id="disc-`+first+`"`), strings.Index(queue, `id="disc-`+second+`"`); i < 0 || j < i {
		t.Fatalf("queue lacks the cases oldest first (%d, %d)", i, j)
	}
	if !strings.Contains(queue, "to do <small>2</small>") {
		t.Errorf("the to-do tab does not count 2 cases")
	}
	casePath := "/console/discrepancies/" + first
	if rec := ops.post(casePath+"/take", nil); rec.Header().Get("Location") != casePath+"?msg=case_taken" {
		t.Fatalf("take: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	steps := []struct {
		to, note string
		status   int
		want     string
	}{
		{"refunded", "done", 409, "cannot move to that state"},
		{"refund_requested", "", 422, "Give a note on what was done."},
		{"refund_requested", "refund asked at the bank, ref 77", 303, ""},
		{"refund_failed", "card closed", 303, ""},
		{"refund_requested", "retry by transfer", 303, ""},
		{"refunded", "transfer done", 303, ""},
		{"written_off", "too late", 409, "cannot move to that state"},
	}
	for _, s := range steps {
		rec := ops.post(casePath+"/move", url.Values{"to": {s.to}, "note": {s.note}})
		if rec.Code != s.status || !strings.Contains(rec.Body.String(), s.want) {
			t.Fatalf("move to %s: %d, want %d with %q", s.to, rec.Code, s.status, s.want)
		}
	}
	if rec := ops.post(casePath+"/move", url.Values{"to": {"lost"}, "note": {"x"}}); rec.Code != http.StatusBadRequest {
		t.Errorf("unknown state: %d", rec.Code)
	}
	if rec := ops.post(casePath+"/note", url.Values{"note": {"after the end"}}); rec.Code != http.StatusConflict {
		t.Errorf("note on a closed case: %d", rec.Code)
	}
	page := ops.do("GET", casePath, nil, nil).Body.String()
	history := regexp.MustCompile(`(?s)<table class="grid" id="case-history">.*?</table>`).FindString(page)
	for _, want := range []string{"took the case", "refund asked at the bank, ref 77", "refund requested → <strong>refund failed</strong>",
		"transfer done", "ops-user"} {
		if !strings.Contains(history, want) {
			t.Errorf("history lacks %q", want)
		}
	}
	if strings.Contains(page, `id="move-form"`) || strings.Contains(page, `id="take-form"`) {
		t.Error("a closed case still offers its forms")
	}
	admin := env.login(access.RoleAdmin)
	if rec := admin.post("/console/discrepancies/"+second+"/note", url.Values{"note": {"customer called"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("note: %d", rec.Code)
	}
	for _, c := range []struct {
		query string
		want  []string
		not   []string
	}{
		{"", []string{second}, []string{first}},
		{"?state=refunded", []string{first}, []string{second}},
		{"?state=all", []string{first, second}, nil},
		{"?state=all&owner=ops-user", []string{first}, []string{second}},
		{"?state=all&unowned=1", []string{second}, []string{first}},
		{"?state=all&kind=second_payment", nil, []string{first, second}},
	} {
		body := ops.do("GET", "/console/discrepancies"+c.query, nil, nil).Body.String()
		for _, id := range c.want {
			if !strings.Contains(body, `id="disc-`+id+`"`) {
				t.Errorf("%s: lacks case %s", c.query, id)
			}
		}
		for _, id := range c.not {
			if strings.Contains(body, `id="disc-`+id+`"`) {
				t.Errorf("%s: shows case %s", c.query, id)
			}
		}
	}
	for _, q := range []string{"?state=lost", "?kind=lost", "?owner=a&unowned=1"} {
		if rec := ops.do("GET", "/console/discrepancies"+q, nil, nil); rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", q, rec.Code)
		}
	}
	for action, want := range map[string]int{core.AuditCaseTake: 1, core.AuditCaseMove: 4, core.AuditCaseNote: 1} {
		if got := env.auditCount(action); got != want {
			t.Errorf("audit %s: %d, want %d", action, got, want)
		}
	}
}

// TestConsoleRaceView fires the payment, the timeout and the customer
// cancel at one expired order at once, round after round: the order page
// lists the three attempts, exactly one of them the winner.
func TestConsoleRaceView(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := t.Context()
	clock := stacktest.NewClock(time.Now().Add(-time.Hour))
	eng := env.stack.Engine(t, core.Config{HoldTTL: time.Minute, PurchaseLimit: 100}, clock)
	b := env.login(access.RoleBoxOffice)
	winners := map[string]int{}
	for i := range 12 {
		seat := fmt.Sprintf("%c-%d", 'A'+i%3, 1+i/3)
		o, err := eng.Place(ctx, core.PlaceRequest{UserID: 60, ShowID: env.show.ID, SeatIDs: []string{seat}})
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(2 * time.Minute)
		start := make(chan struct{})
		done := make(chan struct{}, 3)
		for _, attempt := range []func(){
			func() {
				_, _ = eng.HandlePayment(ctx, core.Payment{OrderNo: o.OrderNo, TxnID: "race-" + o.OrderNo, AmountCents: o.AmountCents})
			},
			func() { _ = eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}) },
			func() { _, _ = eng.Cancel(ctx, o.OrderNo, 60) },
		} {
			go func() {
				defer func() { done <- struct{}{} }()
				<-start
				attempt()
			}()
		}
		close(start)
		for range 3 {
			<-done
		}
		page := b.do("GET", "/console/orders/"+o.OrderNo, nil, nil).Body.String()
		race := regexp.MustCompile(`(?s)<div class="race" id="race">.*?</table>`).FindString(page)
		rows := strings.Count(race, "<tr class=")
		won := strings.Count(race, `class="race-winner"`)
		lost := strings.Count(race, `class="race-loser"`)
		if rows != 3 || won != 1 || lost != 2 {
			t.Fatalf("round %d: race view has %d attempts, %d winners, %d losers; want 3, 1, 2:\n%s", i, rows, won, lost, race)
		}
		for _, path := range []string{"payment", "timeout", "customer cancel"} {
			if !strings.Contains(race, "<td>"+path+"</td>") {
				t.Errorf("round %d: no %s attempt:\n%s", i, path, race)
			}
		}
		w := regexp.MustCompile(`(?s)class="race-winner"><td><time>[^<]*</time></td><td>([^<]*)</td>`).FindStringSubmatch(race)
		if w != nil {
			winners[w[1]]++
		}
		// Free the seat for a later round.
		if _, err := env.db.X().ExecContext(ctx, `DELETE FROM order_seat WHERE order_no = ?`, o.OrderNo); err != nil {
			t.Fatal(err)
		}
		if err := eng.RebuildSeats(ctx, env.show.ID); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("winners: %v", winners)
	// An order nobody raced for shows no race view.
	calm := env.place(61, "C-4")
	if page := b.do("GET", "/console/orders/"+calm.OrderNo, nil, nil).Body.String(); strings.Contains(page, `id="race"`) {
		t.Error("an order with one actor shows a race")
	}
}

// TestConsoleDashboardCharts draws the expiry charts from orders whose
// lag and overdue spans are known.
func TestConsoleDashboardCharts(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := t.Context()
	// Half a minute past a minute, so each span below stays in one minute.
	now := env.clock.Now()
	env.clock.Advance(now.Truncate(time.Minute).Add(90 * time.Second).Sub(now))
	now = env.clock.Now()
	clock := stacktest.NewClock(now.Add(-50 * time.Minute))
	eng := env.stack.Engine(t, core.Config{HoldTTL: 10 * time.Minute}, clock)
	place := func(seat string) core.Order {
		o, err := eng.Place(ctx, core.PlaceRequest{UserID: 70, ShowID: env.show.ID, SeatIDs: []string{seat}})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	// Expired at -40m, timed out 1.2 s late.
	a := place("A-1")
	clock.Advance(10*time.Minute + 1200*time.Millisecond)
	if err := eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: a.OrderNo, Hop: 1}); err != nil {
		t.Fatal(err)
	}
	// Placed at -40m, expired at -30m, swept 20 s late.
	b := place("A-2")
	clock.Advance(10*time.Minute + 20*time.Second)
	if _, err := eng.CancelAndRelease(ctx, core.CancelRequest{OrderNo: b.OrderNo, Reason: core.ReasonReconcile, Actor: core.ActorSweep}); err != nil {
		t.Fatal(err)
	}
	// Placed at -30m, expired at -20m, still pending.
	place("A-3")

	page := env.login(access.RoleOps).do("GET", "/console/", nil, nil).Body.String()
	lag := regexp.MustCompile(`(?s)<svg class="chart" id="lag-chart".*?</ul>`).FindString(page)
	for _, want := range []string{`class="bar path-timeout"`, `class="bar path-sweep"`, "timeout &lt;1.5s: 1", "sweep &lt;30s: 1",
		"</span>timeout <small>1</small>", "</span>expiry sweep <small>1</small>", "</span>reconcile <small>0</small>"} {
		if !strings.Contains(lag, want) {
			t.Errorf("lag chart lacks %q:\n%s", want, lag)
		}
	}
	// The minutes of the hour, the current one too; at 1: the minute of
	// the swept hold's 20 s and the 21 minutes since A-3 expired, its own
	// and the current one included. The timed-out hold's 1.2 s is within
	// the delay slack and its second (core.DelayPolicy.OverdueAfter).
	overdue := regexp.MustCompile(`(?s)<svg class="chart" id="overdue-chart".*?</svg>`).FindString(page)
	if n := strings.Count(overdue, "<circle"); n != 61 {
		t.Errorf("overdue chart has %d points, want 61: one per minute of the hour and the current one", n)
	}
	if n := len(regexp.MustCompile(`: 1</title>`).FindAllString(overdue, -1)); n != 22 {
		t.Errorf("overdue chart shows 1 in %d minutes, want 22:\n%s", n, overdue)
	}
	if !strings.Contains(page, "per minute; now: 1.") {
		t.Error("dashboard does not say 1 hold is overdue now")
	}
}

// faultySeats is a seat store whose after-commit writes fail on demand:
// how the seeding engine leaves the anomalies reconcile repairs.
type faultySeats struct {
	core.SeatStore
	failSell, failRelease bool
}

func (s *faultySeats) MarkSold(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) error {
	if s.failSell {
		return errors.New("injected: mark sold failed")
	}
	return s.SeatStore.MarkSold(ctx, showID, userID, orderNo, seatIDs)
}

func (s *faultySeats) Release(ctx context.Context, showID, userID int64, orderNo string, seatIDs []string) (int, error) {
	if s.failRelease {
		return 0, errors.New("injected: release failed")
	}
	return s.SeatStore.Release(ctx, showID, userID, orderNo, seatIDs)
}

// world is everything reconcile may change in the show, entry by entry
// and seat by seat: the orders, the order_seat rows (DB), the seat locks
// and purchase counters (seat store).
func world(t *testing.T, st *stacktest.Stack, showID int64) map[string]string {
	t.Helper()
	ctx := t.Context()
	w := make(map[string]string)
	var orders []struct {
		No     string `db:"order_no"`
		Status int    `db:"status"`
		Closed int64  `db:"closed_at"`
		Reason string `db:"cancel_reason"`
	}
	if err := st.DB.X().SelectContext(ctx, &orders, st.DB.X().Rebind(`SELECT order_no, status, closed_at, cancel_reason
 FROM order_info WHERE show_id = ?`), showID); err != nil {
		t.Fatal(err)
	}
	for _, o := range orders {
		w["order "+o.No] = fmt.Sprint(o.Status, o.Closed, o.Reason)
	}
	var rows []struct {
		Seat  string `db:"seat_id"`
		Order string `db:"order_no"`
		User  int64  `db:"user_id"`
	}
	if err := st.DB.X().SelectContext(ctx, &rows, st.DB.X().Rebind(`SELECT seat_id, order_no, user_id
 FROM order_seat WHERE show_id = ?`), showID); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		w["order_seat "+r.Seat] = fmt.Sprint(r.Order, r.User)
	}
	holds, err := st.Seats.Holds(ctx, showID)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range holds {
		w["seat store "+h.SeatID] = fmt.Sprint(h.State, h.OrderNo, h.UserID, h.LockedAt.UnixMilli())
	}
	limits, err := st.Seats.Limits(ctx, showID)
	if err != nil {
		t.Fatal(err)
	}
	for u, n := range limits {
		if n != 0 {
			w[fmt.Sprintf("counter of user %d", u)] = fmt.Sprint(n)
		}
	}
	return w
}

// worldDiff lists the entries that differ between two worlds, sorted.
func worldDiff(before, after map[string]string) []string {
	var out []string
	for k, v := range before {
		if w, ok := after[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// dryRunFixture is the console on the real reconciler, with a show holding
// one anomaly per repairing check — left by an engine half an hour ago whose
// seat-store writes failed after commit — and two healthy orders.
type dryRunFixture struct {
	env  *consoleEnv
	rec  *reconcile.Reconciler
	show int64
	// Two orders expired: applying one item must leave the other of its check.
	expired, expiredToo, unsold, stale, fresh, paid core.Order
	// want is what a dry run lists, as shortKeys reduces it.
	want []string
}

func newDryRunFixture(t *testing.T, st *stacktest.Stack) *dryRunFixture {
	t.Helper()
	ctx := t.Context()
	hub := NewSeatHub(nil, nil)
	t.Cleanup(hub.Close)
	policy := core.Config{HoldTTL: 15 * time.Minute, PurchaseLimit: 6, Delay: core.DefaultDelayPolicy()}
	engine, err := core.NewEngine(policy, core.Deps{Store: st.DB, Seats: st.Seats, Queue: st.Queue, Notifier: hub})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := reconcile.New(reconcile.Deps{Engine: engine, DB: st.DB, Seats: st.Seats}, reconcile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	env := &consoleEnv{t: t, stack: st, db: st.DB, engine: engine, hub: hub, clock: stacktest.NewClock(time.Now()),
		staff: map[access.Role]access.Staff{}, show: st.NewShow(t, 3, 6), e: echo.New()}
	env.e.HTTPErrorHandler = handleError
	RegisterConsole(env.e, ConsoleDeps{Engine: engine, DB: st.DB, Hub: hub, Reconcile: consoleReconcile{rec},
		Logger: slog.New(slog.DiscardHandler), Clock: env.clock})
	env.staff[access.RoleOps] = env.addStaff("ops-"+stacktest.RandHex(3), access.RoleOps)
	f := &dryRunFixture{env: env, rec: rec, show: env.show.ID}

	seatStore := &faultySeats{SeatStore: st.Seats}
	past := stacktest.NewClock(time.Now().Add(-30 * time.Minute))
	seeder, err := core.NewEngine(policy, core.Deps{Store: st.DB, Seats: seatStore, Queue: st.Queue, Clock: past})
	if err != nil {
		t.Fatal(err)
	}
	placeWith := func(e *core.Engine, user int64, seat string) core.Order {
		o, err := e.Place(ctx, core.PlaceRequest{UserID: user, ShowID: f.show, SeatIDs: []string{seat}})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	f.expired = placeWith(seeder, 1, "A-1") // pending 15 min past its expiry
	f.expiredToo = placeWith(seeder, 5, "A-5")
	f.unsold = placeWith(seeder, 2, "A-2")
	seatStore.failSell = true
	if res, err := seeder.HandlePayment(ctx, core.Payment{OrderNo: f.unsold.OrderNo, TxnID: "T-" + f.unsold.OrderNo,
		AmountCents: f.unsold.AmountCents}); err != nil || res != core.PaymentApplied {
		t.Fatalf("pay: %v %v", res, err)
	}
	f.stale = placeWith(seeder, 3, "A-3")
	seatStore.failRelease = true
	if _, err := seeder.Cancel(ctx, f.stale.OrderNo, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB.X().ExecContext(ctx, st.DB.X().Rebind(`INSERT INTO order_seat (show_id, seat_id, order_no, user_id, created_at, ticket_code)
 VALUES (?, 'B-5', 'SFGONE', 8, ?, ?)`), f.show, past.Now().UnixMilli(), core.NewSeatCode()); err != nil {
		t.Fatal(err)
	}
	if err := st.Seats.SetLimit(ctx, f.show, 9, 4); err != nil {
		t.Fatal(err)
	}
	f.fresh = placeWith(engine, 10, "C-1")
	f.paid = placeWith(engine, 11, "C-2")
	if _, err := engine.HandlePayment(ctx, core.Payment{OrderNo: f.paid.OrderNo, TxnID: "T-" + f.paid.OrderNo,
		AmountCents: f.paid.AmountCents}); err != nil {
		t.Fatal(err)
	}
	f.want = []string{
		reconcile.CheckExpiredPending + "|cancel|" + f.expired.OrderNo,
		reconcile.CheckExpiredPending + "|cancel|" + f.expiredToo.OrderNo,
		reconcile.CheckPaidNotSold + "|mark_sold|" + f.unsold.OrderNo,
		reconcile.CheckOrphanOrderSeat + "|delete_row|SFGONE",
		reconcile.CheckStaleRedisLock + "|release|" + f.stale.OrderNo,
		reconcile.CheckLimitDrift + "|set_limit|",
	}
	slices.Sort(f.want)
	return f
}

// dryRun takes a dry run from the console as b and returns its page's path.
func (f *dryRunFixture) dryRun(t *testing.T, b *browser) string {
	t.Helper()
	resp := b.post("/console/reconcile/dry-run", nil)
	path := resp.Header().Get("Location")
	if resp.Code != http.StatusSeeOther || !strings.HasPrefix(path, "/console/reconcile/runs/") {
		t.Fatalf("dry run: %d %q", resp.Code, path)
	}
	return path
}

// TestConsoleDryRun runs the real reconciler from the console on a show
// with one anomaly per repairing check: the dry run changes nothing in the
// DB or the seat store and lists each anomaly; applying it repairs exactly
// those, and the healthy orders are left as they were.
func TestConsoleDryRun(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		ctx := t.Context()
		f := newDryRunFixture(t, st)
		env, want := f.env, f.want

		b := env.login(access.RoleOps)
		before := world(t, st, f.show)
		dryPath := f.dryRun(t, b)
		if diff := worldDiff(before, world(t, st, f.show)); len(diff) != 0 {
			t.Fatalf("the dry run changed %q", diff)
		}
		page := b.do("GET", dryPath, nil, nil).Body.String()
		if got := itemKeys(page); !slices.Equal(got, want) {
			t.Fatalf("dry run lists %q, want %q", got, want)
		}
		if n := strings.Count(page, "result-would"); n != len(want) || !strings.Contains(page, `id="apply-all"`) {
			t.Errorf("%d items marked would-repair (want %d), apply button present: %t", n, len(want), strings.Contains(page, `id="apply-all"`))
		}

		resp := b.post(dryPath+"/apply", nil)
		applied := resp.Header().Get("Location")
		if resp.Code != http.StatusSeeOther || !strings.Contains(applied, "?applied=") {
			t.Fatalf("apply: %d %q", resp.Code, applied)
		}
		page = b.do("GET", applied, nil, nil).Body.String()
		section := regexp.MustCompile(`(?s)<section class="card" id="applied">.*?</section>`).FindString(page)
		if got := itemKeys(section); !slices.Equal(got, want) {
			t.Errorf("applied items %q, want %q", got, want)
		}
		if n := strings.Count(section, "result-fixed"); n != len(want) || strings.Contains(section, "notice warn") {
			t.Errorf("%d of %d listed items repaired (extra items: %t):\n%s", n, len(want), strings.Contains(section, "notice warn"), section)
		}
		if err := reconcile.CheckInvariants(ctx, st.DB, st.Seats, time.Now()); err != nil {
			t.Errorf("after applying: %v", err)
		}
		// Exactly those: the healthy orders are as they were, and a new dry
		// run finds nothing left to repair.
		for _, o := range []core.Order{f.fresh, f.paid} {
			got, _, err := env.engine.Order(ctx, o.OrderNo)
			if err != nil || (o.OrderNo == f.fresh.OrderNo && got.Status != core.StatusPending) || (o.OrderNo == f.paid.OrderNo && got.Status != core.StatusPaid) {
				t.Errorf("healthy order %s is now %v (%v)", o.OrderNo, got.Status, err)
			}
			if evs, _ := st.DB.Events(ctx, o.OrderNo); slices.ContainsFunc(evs, func(e core.Event) bool { return e.Kind == core.EventRepaired }) {
				t.Errorf("healthy order %s was repaired", o.OrderNo)
			}
		}
		again, err := f.rec.RunOnce(ctx, reconcile.TriggerManual, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range again.Checks {
			if c.Found != 0 && c.Name != reconcile.CheckOpenDiscrepancy {
				t.Errorf("after applying, %s still finds %+v", c.Name, c.Items)
			}
		}
		if got := env.auditCount(core.AuditReconcileDryRun) + env.auditCount(core.AuditReconcileApply); got != 2 {
			t.Errorf("audit entries for the dry run and its apply: %d, want 2", got)
		}
	})
}

// TestConsoleApplyItem applies one item of a dry run from its button: that
// item alone is repaired — the DB and the seat store change seat by seat
// exactly where it said — the run and the audit log say so, a following
// dry run lists the others still, and an item the dry run did not list is
// refused.
func TestConsoleApplyItem(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		f := newDryRunFixture(t, st)
		b := f.env.login(access.RoleOps)
		dryPath := f.dryRun(t, b)
		page := b.do("GET", dryPath, nil, nil).Body.String()
		forms := regexp.MustCompile(`<form method="post" action="`+regexp.QuoteMeta(dryPath)+`/apply" class="inline apply-item">`+
			`<input type="hidden" name="_csrf" value="[^"]+">\s*<input type="hidden" name="check" value="([^"]*)">\s*`+
			`<input type="hidden" name="key" value="([^"]*)">`).FindAllStringSubmatch(page, -1)
		var buttons []string
		for _, m := range forms {
			buttons = append(buttons, m[1]+"|"+m[2])
		}
		if got := shortKeys(buttons); !slices.Equal(got, f.want) {
			t.Fatalf("per-item buttons for %q, want one per listed item %q", got, f.want)
		}

		check, key := reconcile.CheckExpiredPending, "cancel|"+f.expired.OrderNo+"|"+strconv.FormatInt(f.show, 10)+"|1|"
		if !slices.Contains(buttons, check+"|"+key) {
			t.Fatalf("no button posts %s %s: %q", check, key, buttons)
		}
		for _, bad := range []url.Values{
			{"check": {check}, "key": {"cancel|SFNOPE|1|1|"}},
			{"check": {reconcile.CheckPaidNotSold}, "key": {key}},
			{"key": {key}},
		} {
			if resp := b.post(dryPath+"/apply", bad); resp.Code != http.StatusBadRequest {
				t.Errorf("apply %v: %d, want 400 (not an item of the dry run)", bad, resp.Code)
			}
		}
		before := world(t, st, f.show)
		resp := b.post(dryPath+"/apply", url.Values{"check": {check}, "key": {key}})
		runPath := resp.Header().Get("Location")
		if resp.Code != http.StatusSeeOther || !strings.HasSuffix(runPath, "?msg=reconcile_done") || strings.HasPrefix(runPath, dryPath+"?") {
			t.Fatalf("apply one item: %d %q, want the new run's page", resp.Code, runPath)
		}
		seat := "A-1"
		wantDiff := []string{"counter of user 1", "order " + f.expired.OrderNo, "order_seat " + seat, "seat store " + seat}
		if diff := worldDiff(before, world(t, st, f.show)); !slices.Equal(diff, wantDiff) {
			t.Errorf("applying %s changed %q, want %q", key, diff, wantDiff)
		}
		page = b.do("GET", runPath, nil, nil).Body.String()
		if got := itemKeys(page); len(got) != 1 || got[0] != reconcile.CheckExpiredPending+"|cancel|"+f.expired.OrderNo ||
			strings.Count(page, "result-fixed") != 1 || strings.Contains(page, "apply-item") {
			t.Errorf("the applying run's page lists %q (repaired: %d, per-item buttons: %t), want the one item repaired",
				got, strings.Count(page, "result-fixed"), strings.Contains(page, "apply-item"))
		}

		again := b.do("GET", f.dryRun(t, b), nil, nil).Body.String()
		rest := slices.DeleteFunc(slices.Clone(f.want), func(k string) bool { return strings.HasSuffix(k, f.expired.OrderNo) })
		if got := itemKeys(again); !slices.Equal(got, rest) {
			t.Errorf("the next dry run lists %q, want the %d others %q", got, len(rest), rest)
		}
		var details []string
		if err := f.env.db.X().Select(&details, `SELECT detail FROM audit_log WHERE action = ?`, core.AuditReconcileApply); err != nil {
			t.Fatal(err)
		}
		if len(details) != 1 || !strings.Contains(details[0], `"key":"`+key+`"`) || !strings.Contains(details[0], `"fixed":1`) {
			t.Errorf("audit of the per-item apply: %q, want one entry naming the key, fixed 1", details)
		}
	})
}

// itemKeys reduces the keys of the items a page lists (data-key:
// check|action|order|show|user|seats) as shortKeys does.
func itemKeys(page string) []string {
	var keys []string
	for _, m := range regexp.MustCompile(`data-key="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		keys = append(keys, m[1])
	}
	return shortKeys(keys)
}

// shortKeys reduces item keys (check|action|order|show|user|seats) to
// check|action|order, sorted: the part the test knows in advance.
func shortKeys(keys []string) []string {
	var out []string
	for _, k := range keys {
		parts := strings.SplitN(k, "|", 4)
		out = append(out, strings.Join(parts[:3], "|"))
	}
	slices.Sort(out)
	return out
}

// TestWebRunKeepsItemKeys: the console posts web.ReconcileItem.Key and the
// reconciler matches reconcile.Item.Key, so the two must agree.
func TestWebRunKeepsItemKeys(t *testing.T) {
	items := []reconcile.Item{
		{Action: reconcile.ActionCancel, OrderNo: "SF1", ShowID: 7, UserID: 3},
		{Action: reconcile.ActionMarkSold, OrderNo: "SF2", ShowID: 7, UserID: 3, SeatIDs: []string{"A-1", "A-2"}, Fixed: true},
		{Action: reconcile.ActionSetLimit, ShowID: 7, UserID: 9, Detail: "counter 4", Error: "boom"},
	}
	w := webRun(reconcile.Run{Checks: []reconcile.CheckResult{{Name: reconcile.CheckPaidNotSold, Items: items}}})
	for i, it := range items {
		if got, want := w.Checks[0].Items[i].Key(), it.Key(); got != want {
			t.Errorf("item %d: web key %q, reconcile key %q", i, got, want)
		}
	}
}

// A form answered with a validation error leaves its POST URL in the
// address bar; reopening that URL leads to the form's page.
func TestConsoleReopenActionURL(t *testing.T) {
	env := newConsoleEnv(t)
	admin := env.login(access.RoleAdmin)
	o := env.place(31, "A-2")
	for _, c := range []struct{ action, page string }{
		{"/orders/" + o.OrderNo + "/extend", "/console/orders/" + o.OrderNo},
		{"/orders/" + o.OrderNo + "/cancel", "/console/orders/" + o.OrderNo},
		{"/shows/7/block", "/console/shows/7"},
		{"/discrepancies/3/move", "/console/discrepancies/3"},
		{"/reconcile/dry-run", "/console/reconcile"},
		{"/reconcile/runs/5/apply", "/console/reconcile/runs/5"},
		{"/staff/2/disable", "/console/staff"},
	} {
		rec := admin.do("GET", "/console"+c.action, nil, nil)
		if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || loc != c.page {
			t.Errorf("GET %s: %d %q, want 303 to %s", c.action, rec.Code, loc, c.page)
		}
	}
	if rec := env.browser().do("GET", "/console/orders/"+o.OrderNo+"/extend", nil, nil); rec.Code == http.StatusSeeOther &&
		rec.Header().Get("Location") == "/console/orders/"+o.OrderNo {
		t.Error("an anonymous visitor is redirected to the order page instead of the login")
	}
}
