package server

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
	"seatflow/web"
)

// TestConsoleDashboardByRole: each role's dashboard has its own figures,
// right, and not the others': box office and manager the holds expiring
// within 5 minutes and the seats left per show on sale; ops and admin the
// stores' readiness, the clock offset against its limit, expiry lag and
// the most holds overdue at once per minute (23 holds overdue for 30 s
// show as 23 in their minute, which a sample every 5 minutes missed), open
// discrepancies by age and amount, dead letters. Every card links to its
// list. On both stacks.
func TestConsoleDashboardByRole(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ctx := t.Context()
		now := env.clock.Now()
		env.cn.ClockOffset = func() (time.Duration, bool) { return 1500 * time.Millisecond, true }
		env.cn.ClockLimit = 2 * time.Second
		// What the store watcher found: the seat store does not answer.
		env.e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error { c.Set(ContextKeyStoreDown, storeSeats); return next(c) }
		})

		// A hold expiring in 3 minutes, and one in 15 (not soon).
		soonClock := stacktest.NewClock(now.Add(-12 * time.Minute))
		soon, err := st.Engine(t, core.Config{}, soonClock).Place(ctx, core.PlaceRequest{UserID: 80, ShowID: env.show.ID, SeatIDs: []string{"A-1"}})
		if err != nil {
			t.Fatal(err)
		}
		later := env.place(81, "A-2")

		// The outage: 23 holds of another show expire 10 s into a minute
		// 20 minutes ago and are timed out 30 s late, within that minute.
		big := st.NewShow(t, 5, 6)
		expire := now.Add(-20 * time.Minute).Truncate(time.Minute).Add(10 * time.Second)
		outClock := stacktest.NewClock(expire.Add(-15 * time.Minute))
		outEngine := st.Engine(t, core.Config{}, outClock)
		var outage []core.Order
		for i := range 23 {
			o, err := outEngine.Place(ctx, core.PlaceRequest{UserID: int64(100 + i), ShowID: big.ID,
				SeatIDs: []string{fmt.Sprintf("%c-%d", 'A'+i/6, i%6+1)}})
			if err != nil {
				t.Fatal(err)
			}
			outage = append(outage, o)
		}
		outClock.Advance(15*time.Minute + 30*time.Second)
		for _, o := range outage {
			if err := outEngine.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}); err != nil {
				t.Fatal(err)
			}
		}

		// Open discrepancies 10 minutes, 2 and 3 hours and 3 days old; one
		// resolved (not counted).
		for i, d := range []struct {
			age    time.Duration
			amount int64
			status string
		}{{10 * time.Minute, 1000, "open"}, {2 * time.Hour, 500, "open"}, {3 * time.Hour, 2500, "open"},
			{72 * time.Hour, 7000, "open"}, {time.Minute, 9900, "resolved"}} {
			if _, err := env.db.X().ExecContext(ctx, `INSERT INTO discrepancy (order_no, txn_id, kind, amount_cents, created_at, status, note)
 VALUES (?, ?, 'paid_after_cancel', ?, ?, ?, '')`, fmt.Sprintf("SFD%d", i), fmt.Sprintf("TD%d", i), d.amount,
				now.Add(-d.age).UnixMilli(), d.status); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := env.db.AddDeadLetter(ctx, core.NewDeadLetter(core.DeadLetterDBQueue, core.TimeoutMsg{OrderNo: "SFDEAD", Hop: 3}, 5, "boom", now)); err != nil {
			t.Fatal(err)
		}

		overdueMinute := expire.Truncate(time.Minute).UTC().Format("15:04")
		boxOffice := []string{
			`<a class="card stat" href="/console/holds?due=soon">`, `id="stat-expiring">1<`,
			`id="expiring-` + soon.OrderNo + `"`, `href="/console/orders/` + soon.OrderNo + `"`,
			`<h2><a href="/console/shows">`, fmt.Sprintf(`<tr id="left-%d"><td><a href="/console/shows/%d">`, env.show.ID, env.show.ID),
			fmt.Sprintf(`id="left-%d"`, big.ID),
		}
		ops := []string{
			`<li class="level-ok" data-store="health.database">`, `<li class="level-bad" data-store="health.seats">Seat store (Redis): not answering`,
			`<li class="level-ok" data-store="health.queue">`, `<a class="card stat" href="/readyz" id="health">`,
			`class="value small level-warn" id="stat-clock">+1.5 s<`, "limit ±2.0 s",
			`<a class="card stat" href="/console/holds?due=overdue">`, `id="stat-overdue-max">23<`, overdueMinute + `: 23</title>`,
			`<a class="card block" href="/console/holds?due=overdue" id="overdue-card">`,
			`<a class="card stat" href="/console/reconcile"><span class="label">Holds ended 5 s or more late`, `id="stat-lag">23<`,
			`<a class="card block" href="/console/reconcile" id="lag-card">`,
			`<a class="card stat" href="/console/discrepancies" id="discrepancy-ages">`, `id="stat-discrepancies">4`,
			`data-band="dashboard.age_hour">under 1 h: 1 · 10.00<`, `data-band="dashboard.age_day">1 h to 1 day: 2 · 30.00<`,
			`data-band="dashboard.age_older">over 1 day: 1 · 70.00<`,
			`<a class="card stat" href="/console/dead-letters">`, `id="stat-dead-letters">1<`,
			`<a class="card stat" href="/console/reconcile" id="last-run">`,
		}
		common := []string{`<a class="card stat" href="/console/holds"><span class="label">Pending holds now`, `id="stat-pending">2<`,
			`id="dashboard-live" data-live="*"`, `data-live-every="15000"`, `<a class="card block" href="/console/orders" id="last-hour">`}
		for _, tc := range []struct {
			role      access.Role
			want, not []string
		}{
			{access.RoleBoxOffice, boxOffice, ops},
			{access.RoleManager, boxOffice, ops},
			{access.RoleOps, ops, boxOffice},
			{access.RoleAdmin, ops, boxOffice},
		} {
			page := env.login(tc.role).do("GET", "/console/", nil, nil).Body.String()
			for _, want := range append(tc.want, common...) {
				if !strings.Contains(page, want) {
					t.Errorf("%s: dashboard lacks %q", tc.role, want)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(page, not) {
					t.Errorf("%s: dashboard has %q", tc.role, not)
				}
			}
			if strings.Contains(page, `id="expiring-`+later.OrderNo+`"`) {
				t.Errorf("%s: a hold expiring in 15 minutes is listed as expiring soon", tc.role)
			}
			if tc.role == access.RoleOps {
				// The minute is the peak; every other minute of the chart is
				// 0, and the chart has a point per minute.
				chart := regexp.MustCompile(`(?s)<svg class="chart" id="overdue-chart".*?</svg>`).FindString(page)
				if n := strings.Count(chart, ": 23</title>"); n != 1 {
					t.Errorf("overdue chart has 23 in %d minutes, want 1", n)
				}
				if n := strings.Count(chart, ": 0</title>"); n < 59 || n > 60 {
					t.Errorf("overdue chart has %d minutes at 0, want the rest of the hour", n)
				}
			}
		}

	})
}

// TestConsoleDashboardLastRun: the dashboard's last reconcile run is the
// newest worth reading, whatever number of empty sweeps came after it, and
// the newest sweep shows beside it.
func TestConsoleDashboardLastRun(t *testing.T) {
	start := time.Now().Add(-2 * time.Hour)
	for _, tc := range []struct {
		name      string
		runs      []web.ReconcileRun // oldest first
		want, not []string
	}{
		{"none", nil, []string{"No runs yet."}, []string{`id="last-sweep"`}},
		{"full run behind an hour of sweeps",
			append([]web.ReconcileRun{testRun("schedule", 4, "ok")}, testRuns("sweep", 0, 120)...),
			[]string{"schedule: found 4, fixed 4, errors 0", `id="last-sweep"`}, []string{"No runs yet."}},
		{"a sweep that found something, then empty ones",
			append(append([]web.ReconcileRun{testRun("schedule", 4, "ok")}, testRun("sweep", 2, "ok")), testRuns("sweep", 0, 5)...),
			[]string{"expiry sweep: found 2, fixed 2, errors 0", `id="last-sweep"`}, []string{"found 4"}},
		{"a failed run on top", append(testRuns("sweep", 0, 3), testRun("manual", 0, "errors")),
			[]string{"manual: found 0"}, []string{`id="last-sweep"`}},
		{"sweeps only", testRuns("sweep", 0, 30), []string{`id="last-sweep"`}, []string{"No runs yet.", "found 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newConsoleEnv(t)
			for i, r := range tc.runs {
				r.ID, r.StartedAt = int64(i+1), start.Add(time.Duration(i)*30*time.Second)
				r.FinishedAt = r.StartedAt
				env.runner.runs = append(env.runner.runs, r)
			}
			page := env.login(access.RoleOps).do("GET", "/console/", nil, nil).Body.String()
			card := regexp.MustCompile(`(?s)<a class="card stat" href="/console/reconcile" id="last-run">.*?</a>`).FindString(page)
			for _, want := range tc.want {
				if !strings.Contains(card, want) {
					t.Errorf("last run card lacks %q:\n%s", want, card)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(card, not) {
					t.Errorf("last run card has %q:\n%s", not, card)
				}
			}
		})
	}
}

func testRun(trigger string, found int, status string) web.ReconcileRun {
	return web.ReconcileRun{Trigger: trigger, Status: status,
		Checks: []web.ReconcileCheck{{Name: "expired_pending", Found: found, Fixed: found}}}
}

func testRuns(trigger string, found, n int) []web.ReconcileRun {
	out := make([]web.ReconcileRun, n)
	for i := range out {
		out[i] = testRun(trigger, found, "ok")
	}
	return out
}

// TestConsoleDashboardOverdueSlack: a hold counts as overdue on the
// dashboard (the chart, its peak, the holds it links to) only past its
// expiry plus the delay slack and a second, as the Prometheus gauge counts
// it: holds timed out a few milliseconds late are the levels working, not
// an alarm. Each hold expires in a minute of its own. On both stacks.
func TestConsoleDashboardOverdueSlack(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ctx := t.Context()
		now := env.clock.Now()
		show := st.NewShow(t, 2, 6)
		slack := env.engine.Config().Delay.Slack
		seat := 0
		for i, tc := range []struct {
			late []time.Duration // holds expiring together, timed out this late
			want int             // the most overdue at once in their minute
		}{
			{[]time.Duration{2 * time.Millisecond, 4 * time.Millisecond, 6 * time.Millisecond}, 0},
			{[]time.Duration{slack + 900*time.Millisecond}, 0},
			{[]time.Duration{slack + 1500*time.Millisecond}, 1},
			{[]time.Duration{30 * time.Second}, 1},
		} {
			expire := now.Add(-time.Duration(40-5*i) * time.Minute).Truncate(time.Minute).Add(10 * time.Second)
			clock := stacktest.NewClock(expire.Add(-15 * time.Minute))
			eng := st.Engine(t, core.Config{}, clock)
			var orders []core.Order
			for range tc.late {
				seat++
				o, err := eng.Place(ctx, core.PlaceRequest{UserID: int64(200 + seat), ShowID: show.ID,
					SeatIDs: []string{fmt.Sprintf("%c-%d", 'A'+(seat-1)/6, (seat-1)%6+1)}})
				if err != nil {
					t.Fatal(err)
				}
				orders = append(orders, o)
			}
			clock.Advance(15 * time.Minute)
			for j, o := range orders {
				clock.Advance(tc.late[j] - clock.Now().Sub(expire))
				if err := eng.HandleTimeout(ctx, core.TimeoutMsg{OrderNo: o.OrderNo, Hop: 1}); err != nil {
					t.Fatal(err)
				}
			}
			page := env.login(access.RoleOps).do("GET", "/console/", nil, nil).Body.String()
			if want := fmt.Sprintf("%s: %d</title>", expire.UTC().Format("15:04"), tc.want); !strings.Contains(page, want) {
				t.Errorf("timed out %v late: the chart lacks %q", tc.late, want)
			}
		}
		// A hold pending 1 s past its expiry is within the slack; one pending
		// a minute past it is overdue, in the peak and the holds list.
		var pending []string
		for i, past := range []time.Duration{time.Second, time.Minute} {
			o, err := st.Engine(t, core.Config{}, stacktest.NewClock(now.Add(-15*time.Minute-past))).Place(ctx,
				core.PlaceRequest{UserID: int64(300 + i), ShowID: show.ID, SeatIDs: []string{fmt.Sprintf("B-%d", 5+i)}})
			if err != nil {
				t.Fatal(err)
			}
			pending = append(pending, `id="hold-`+o.OrderNo+`"`)
		}
		ops := env.login(access.RoleOps)
		page := ops.do("GET", "/console/", nil, nil).Body.String()
		for _, want := range []string{`id="stat-overdue-max">1<`, "per minute; now: 1."} {
			if !strings.Contains(page, want) {
				t.Errorf("dashboard lacks %q", want)
			}
		}
		holds := ops.do("GET", "/console/holds?due="+web.DueOverdue, nil, nil).Body.String()
		if strings.Contains(holds, pending[0]) || !strings.Contains(holds, pending[1]) {
			t.Errorf("holds?due=overdue: 1 s past listed %v, a minute past listed %v; want false, true",
				strings.Contains(holds, pending[0]), strings.Contains(holds, pending[1]))
		}
	})
}
