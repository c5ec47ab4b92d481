package server

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"seatflow/core/access"
	"seatflow/core/admission"
	"seatflow/web"
)

// queueConsole is the console of a queue test app (newQueueApp: the
// admission loop moves only when the test steps it, one buyer a second),
// with an account per role.
func queueConsole(a *testApp) *consoleEnv {
	a.t.Helper()
	env := &consoleEnv{t: a.t, db: a.app.DB, e: a.app.Handler.echo, staff: map[access.Role]access.Staff{}}
	for _, r := range access.AllRoles() {
		env.staff[r] = env.addStaff("queue-"+string(r), r)
	}
	return env
}

// figure is the number a queue page shows under id.
func figure(t *testing.T, page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`id="` + id + `">([^<]*)<`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no %s on the page: %.3000s", id, mainOf(page))
	}
	return m[1]
}

// mainOf is a page from its main element: what a failure should show.
func mainOf(page string) string { return page[max(strings.Index(page, "<main"), 0):] }

// TestConsoleQueuePage: the page shows what the Room holds and its
// controller read (on the embedded stack, stepped by the test); a
// manager's settings reach the API's GET and the audit log; pause stops
// admissions and resume restarts them; the estimate follows the rate.
func TestConsoleQueuePage(t *testing.T) {
	a := newQueueApp(t)
	env := queueConsole(a)
	manager := env.login(access.RoleManager)
	show := a.show.ID
	page := fmt.Sprintf("/console/shows/%d/queue", show)

	if body := manager.do("GET", fmt.Sprintf("/console/shows/%d", show), nil, nil).Body.String(); !strings.Contains(body,
		`href="`+page+`" id="queue-link"`) {
		t.Errorf("the seat map does not link to the queue page")
	}
	if body := manager.do("GET", page, nil, nil).Body.String(); !strings.Contains(body, `<span class="level-warn">off</span>`) {
		t.Errorf("a show never given a queue: not shown as off: %.1500s", mainOf(body))
	}

	rec := manager.post(page, url.Values{"enabled": {"1"}, "mode": {"always"}, "opens_at": {""}, "window_seconds": {"300"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != page+"?msg=queue_saved" {
		t.Fatalf("save: %d %q %.500s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	api := func() map[string]any { return readQueue(t, a, show) }
	if q := api(); q["enabled"] != true || q["mode"] != "always" || q["window_seconds"] != float64(300) || q["paused"] != false {
		t.Errorf("the API after the console's save: %v", q)
	}
	if n := env.auditCount(admission.AuditQueueSettings); n != 1 {
		t.Errorf("audit entries %s: %d, want 1", admission.AuditQueueSettings, n)
	}
	var target, detail string
	if err := env.db.X().QueryRow(`SELECT target, detail FROM audit_log WHERE action = ?`, admission.AuditQueueSettings).Scan(&target, &detail); err != nil ||
		target != fmt.Sprintf("show:%d", show) || !strings.Contains(detail, `"window_seconds":300`) {
		t.Errorf("audit entry: target %q detail %s, %v", target, detail, err)
	}

	// Enabled and not stepped yet: no controller reading, not a rate of 0.
	if got := figure(t, manager.do("GET", page, nil, nil).Body.String(), "queue-rate"); got != "—" {
		t.Errorf("rate before any step: %q", got)
	}
	for u := range int64(10) {
		a.join(show, 100+u)
	}
	t0 := time.Now()
	a.step(t0)
	a.step(t0.Add(4 * time.Second)) // one a second: 4 admitted
	snap, ok := a.app.Room().Snapshot(show)
	if !ok || snap.Status.Admitted != 4 {
		t.Fatalf("the room after 4 s: %+v %v", snap, ok)
	}
	body := manager.do("GET", page+"?position=8", nil, nil).Body.String()
	for id, want := range map[string]string{"queue-waiting": "6", "queue-admitted": "4", "queue-placed": "0",
		"queue-joined": "10", "queue-rate": "1.0/s", "queue-reason": admission.ReasonWithinObjective,
		"queue-p99": "0 s", "queue-backlog": "0", "queue-window": "5 min", "queue-mode": "always: every buyer queues",
		// (8 − 4 admitted) at one a second.
		"queue-estimate-result": "At position 8: about 4 s at the current rate."} {
		if got := figure(t, body, id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	if !strings.Contains(body, `hx-trigger="every 2s"`) || !strings.Contains(body, `id="queue-settings"`) {
		t.Errorf("no polling part or no settings form for a manager")
	}
	live := manager.do("GET", page+"/live", nil, nil)
	if lb := live.Body.String(); live.Code != 200 || strings.Contains(lb, "<html") || figure(t, lb, "queue-admitted") != "4" {
		t.Errorf("live part: %d %.300s", live.Code, lb)
	}

	if rec := manager.post(page+"/pause", nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("pause: %d %.300s", rec.Code, rec.Body)
	}
	// Saving the settings while paused keeps the pause.
	if rec := manager.post(page, url.Values{"enabled": {"1"}, "mode": {"always"}, "window_seconds": {"300"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("save while paused: %d", rec.Code)
	}
	a.step(t0.Add(8 * time.Second))
	a.step(t0.Add(9 * time.Second))
	body = manager.do("GET", page+"?position=8", nil, nil).Body.String()
	if q := api(); q["paused"] != true || q["admitted"] != float64(4) {
		t.Errorf("paused 5 s: the API says %v, want paused with 4 admitted", q)
	}
	if figure(t, body, "queue-admitted") != "4" || !strings.Contains(body, `id="queue-resume"`) ||
		figure(t, body, "queue-estimate-result") != web.Translate(web.LangEN, "queue.no_estimate") {
		t.Errorf("paused page: %.3000s", mainOf(body))
	}
	if rec := manager.post(page+"/resume", nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("resume: %d", rec.Code)
	}
	a.step(t0.Add(11 * time.Second))
	if q := api(); q["paused"] != false || q["admitted"].(float64) <= 4 {
		t.Errorf("resumed: the API says %v, want more than 4 admitted", q)
	}
	for action, want := range map[string]int{admission.AuditQueuePause: 1, admission.AuditQueueResume: 1, admission.AuditQueueSettings: 2} {
		if n := env.auditCount(action); n != want {
			t.Errorf("audit entries %s: %d, want %d", action, n, want)
		}
	}

	// A queue with opens_at publishes the seed's hash at once and the
	// seed once the pre-queue is drawn.
	other := a.newShow()
	otherPage := fmt.Sprintf("/console/shows/%d/queue", other)
	opens := time.Now().Add(time.Hour).Truncate(time.Minute)
	if rec := manager.post(otherPage, url.Values{"enabled": {"1"}, "mode": {"always"},
		"opens_at": {opens.In(time.Local).Format(web.DateTimeLocalLayout)}, "window_seconds": {"600"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("save with opens_at: %d %.500s", rec.Code, rec.Body)
	}
	q := readQueue(t, a, other)
	if q["opens_at"] == nil || q["seed_hash"] == nil {
		t.Fatalf("the API after opens_at was set: %v", q)
	}
	body = manager.do("GET", otherPage, nil, nil).Body.String()
	if figure(t, body, "queue-seed-hash") != q["seed_hash"] || figure(t, body, "queue-seed") != web.Translate(web.LangEN, "queue.seed_later") {
		t.Errorf("before opening: %.3000s", mainOf(body))
	}
	a.join(other, 1)
	a.step(opens.Add(time.Second))
	q = readQueue(t, a, other)
	if body = manager.do("GET", otherPage, nil, nil).Body.String(); q["seed"] == nil || figure(t, body, "queue-seed") != q["seed"] {
		t.Errorf("after the draw: API %v; page %.3000s", q, mainOf(body))
	}
}

// readQueue is the API's GET of a show's queue.
func readQueue(t *testing.T, a *testApp, show int64) map[string]any {
	t.Helper()
	return decode(t, a.do("GET", a.queuePath(show), ""))
}

// TestConsoleQueueRefusals: a clerk may look but not change (403, and no
// form on the page); a manager's bad input comes back as a message on the
// page, with what was typed, and changes nothing. Never a 500.
func TestConsoleQueueRefusals(t *testing.T) {
	a := newQueueApp(t)
	env := queueConsole(a)
	manager, clerk := env.login(access.RoleManager), env.login(access.RoleBoxOffice)
	show := a.show.ID
	page := fmt.Sprintf("/console/shows/%d/queue", show)
	good := url.Values{"enabled": {"1"}, "mode": {"always"}, "opens_at": {""}, "window_seconds": {"300"}}
	if rec := manager.post(page, good); rec.Code != http.StatusSeeOther {
		t.Fatalf("save: %d", rec.Code)
	}
	with := func(k, v string) url.Values {
		f := url.Values{}
		for key, vals := range good {
			f[key] = vals
		}
		f.Set(k, v)
		return f
	}

	body := clerk.do("GET", page, nil, nil).Body.String()
	if !strings.Contains(body, `id="queue-managers-only"`) || strings.Contains(body, `id="queue-settings"`) ||
		strings.Contains(body, `id="queue-pause"`) || figure(t, body, "queue-window") != "5 min" {
		t.Errorf("a clerk's page: %.3000s", mainOf(body))
	}
	for _, tc := range []struct {
		name   string
		b      *browser
		path   string
		form   url.Values
		status int
		text   string // on the page
		value  string // the typed value the form keeps
	}{
		{"clerk saves", clerk, page, with("window_seconds", "60"), http.StatusForbidden, "<h1>Not allowed</h1>", ""},
		{"clerk pauses", clerk, page + "/pause", nil, http.StatusForbidden, "<h1>Not allowed</h1>", ""},
		{"clerk resumes", clerk, page + "/resume", nil, http.StatusForbidden, "<h1>Not allowed</h1>", ""},
		{"malformed opens_at", manager, page, with("opens_at", "next friday"), 422, "queue.error.opens_at", `value="next friday"`},
		{"opens_at with a zone", manager, page, with("opens_at", "2027-06-01T20:00Z"), 422, "queue.error.opens_at", ""},
		{"window 0", manager, page, with("window_seconds", "0"), 422, "queue.error.window", `value="0"`},
		{"window past a day", manager, page, with("window_seconds", "86401"), 422, "queue.error.window", ""},
		{"window not a number", manager, page, with("window_seconds", "10m"), 422, "queue.error.window", ""},
		{"window overflowing", manager, page, with("window_seconds", "99999999999999999999"), 422, "queue.error.window", ""},
		{"unknown mode", manager, page, with("mode", "sometimes"), 422, "queue.error.mode", ""},
		{"unknown show", manager, "/console/shows/999999/queue", good, 404, "", ""},
		{"show id not a number", manager, "/console/shows/x/queue", good, 404, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tc.b.post(tc.path, tc.form)
			text := tc.text
			if strings.HasPrefix(text, "queue.") {
				text = `id="queue-error">` + web.Translate(web.LangEN, text) + "<"
			}
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), text) || !strings.Contains(rec.Body.String(), tc.value) {
				t.Errorf("%d, want %d with %q and %q: %.3000s", rec.Code, tc.status, text, tc.value, mainOf(rec.Body.String()))
			}
		})
	}
	for _, tc := range []struct{ name, query, text string }{
		{"position 0", "?position=0", "queue.error.position"},
		{"position not a number", "?position=first", "queue.error.position"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := clerk.do("GET", page+tc.query, nil, nil)
			if rec.Code != 422 || figure(t, rec.Body.String(), "queue-error") != web.Translate(web.LangEN, tc.text) {
				t.Errorf("%d %.2000s", rec.Code, mainOf(rec.Body.String()))
			}
		})
	}
	if q := readQueue(t, a, show); q["window_seconds"] != float64(300) || q["mode"] != "always" || q["opens_at"] != nil || q["paused"] != false {
		t.Errorf("refused changes changed the queue: %v", q)
	}
	if n := env.auditCount(admission.AuditQueueSettings); n != 1 {
		t.Errorf("audit entries: %d, want the one save", n)
	}
}

// TestConsoleQueueDashboardCard: the dashboard lists the active queues,
// each linking to its page, for every role, and only while one is active.
func TestConsoleQueueDashboardCard(t *testing.T) {
	a := newQueueApp(t)
	env := queueConsole(a)
	manager := env.login(access.RoleManager)
	show := a.show.ID
	page := fmt.Sprintf("/console/shows/%d/queue", show)
	row := fmt.Sprintf(`<tr id="queue-row-%d"><td><a href="%s">%s</a></td><td class="num">3</td><td class="num">0</td>`,
		show, page, a.show.Name)
	for _, step := range []struct {
		name   string
		change func()
		active bool
	}{
		{"never enabled", func() {}, false},
		{"enabled, three waiting", func() {
			if rec := manager.post(page, url.Values{"enabled": {"1"}, "mode": {"always"}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("enable: %d", rec.Code)
			}
			for u := range int64(3) {
				a.join(show, u+1)
			}
			a.step(time.Now()) // the first step only starts the clock: none admitted
		}, true},
		{"disabled", func() {
			if rec := manager.post(page, url.Values{"mode": {"always"}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("disable: %d", rec.Code)
			}
		}, false},
	} {
		step.change()
		for _, role := range []access.Role{access.RoleBoxOffice, access.RoleManager, access.RoleOps} {
			body := env.login(role).do("GET", "/console/", nil, nil).Body.String()
			if got := strings.Contains(body, `id="queue-card"`); got != step.active || got && !strings.Contains(body, row) {
				t.Errorf("%s, %s: card shown %v, want %v, with the row: %.3000s", step.name, role, got, step.active, mainOf(body))
			}
		}
	}
}
