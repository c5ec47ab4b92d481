package server

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
	"seatflow/web"
)

// waitRow is an entry's row of the waiting-list page, its tags stripped.
func waitRow(t *testing.T, page, token string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr id="waitlist-` + token + `"[^>]*>(.*?)</tr>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no row of %s on the page: %.4000s", token, mainOf(page))
	}
	return html.UnescapeString(strings.Join(strings.Fields(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[1], " ")), " "))
}

// waitTokens are the page's entries, in the order it lists them.
func waitTokens(page string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<tr id="waitlist-(wl_[0-9a-f]+)"`).FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestConsoleWaitlist: a manager opens the list from the page (audited);
// a clerk adds a walk-in, a user joins through the engine; the page lists
// them in order with their states. An order cancelled through the engine
// hands its seats to the first entry, which the page shows offered with
// the order linked, its seats, its expiry and no time between holders; an
// expired hold's hand-off shows how long after the expiry it came. The
// clerk withdraws the offered entry in two steps (its offer's seats go on
// to the next entry, audited), and a paid offer counts as a conversion.
func TestConsoleWaitlist(t *testing.T) {
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		ctx := context.Background()
		manager, clerk := env.login(access.RoleManager), env.login(access.RoleBoxOffice)
		show := env.show.ID
		page := fmt.Sprintf("/console/shows/%d/waitlist", show)
		if body := clerk.do("GET", fmt.Sprintf("/console/shows/%d", show), nil, nil).Body.String(); !strings.Contains(body,
			`href="`+page+`" id="waitlist-link"`) {
			t.Errorf("the seat map does not link to the waiting-list page")
		}
		if body := clerk.do("GET", page, nil, nil).Body.String(); figure(t, body, "waitlist-join-when") != "only while sold out" ||
			!strings.Contains(body, `<span class="level-warn">closed</span>`) || !strings.Contains(body, `id="waitlist-none"`) {
			t.Errorf("a show never given a list: %.2000s", mainOf(body))
		}

		rec := manager.post(page, url.Values{"enabled": {"1"}, "join_when": {"always"}, "offer_minutes": {"30"}})
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != page+"?msg=waitlist_saved" {
			t.Fatalf("save: %d %q %.500s", rec.Code, rec.Header().Get("Location"), rec.Body)
		}
		if s, err := env.engine.Waitlist(ctx, show); err != nil || !s.Enabled || s.JoinWhen != core.JoinWhenAlways || s.OfferTTL != 30*time.Minute {
			t.Fatalf("the list after the save: %+v %v", s, err)
		}
		var detail string
		if err := env.db.X().Get(&detail, `SELECT detail FROM audit_log WHERE action = ? AND target = ?`,
			core.AuditWaitlistSettings, fmt.Sprintf("show:%d", show)); err != nil || !strings.Contains(detail, `"offer_ttl_seconds":1800`) {
			t.Errorf("settings audit: %s %v", detail, err)
		}

		rec = clerk.post(page+"/entries", url.Values{"name": {"Ann Walker"}, "phone": {"+44 20 7946 0000"}, "count": {"2"}, "together": {"1"}})
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != page+"?msg=waitlist_added" {
			t.Fatalf("add a walk-in: %d %.1000s", rec.Code, mainOf(rec.Body.String()))
		}
		user, _, err := env.engine.JoinWaitlist(ctx, core.WaitJoin{ShowID: show, UserID: 9, Count: 1, AddedBy: "api:test"})
		if err != nil {
			t.Fatal(err)
		}
		body := clerk.do("GET", page, nil, nil).Body.String()
		tokens := waitTokens(body)
		if len(tokens) != 2 || tokens[1] != user.Entry.Token {
			t.Fatalf("entries listed %v, want the walk-in then %s", tokens, user.Entry.Token)
		}
		walkIn := tokens[0]
		if got := waitRow(t, body, walkIn); !strings.HasPrefix(got, "1 Ann Walker · +44") || !strings.Contains(got, " 2 any yes waiting ") {
			t.Errorf("the walk-in's row: %q", got)
		}
		if got := waitRow(t, body, user.Entry.Token); !strings.HasPrefix(got, "2 user 9 1 any no waiting ") {
			t.Errorf("the user's row: %q", got)
		}
		var added string
		if err := env.db.X().Get(&added, `SELECT added_by FROM waitlist_entry WHERE token = ?`, walkIn); err != nil ||
			added != "staff:"+env.staff[access.RoleBoxOffice].Username {
			t.Errorf("the walk-in was added by %q (%v)", added, err)
		}

		// A hold cancelled: its two seats go to the walk-in.
		from := env.place(5, "A-1", "A-2")
		if _, err := env.engine.CancelAndRelease(ctx, core.CancelRequest{OrderNo: from.OrderNo, Reason: core.ReasonCustomer,
			Actor: "user:5"}); err != nil {
			t.Fatal(err)
		}
		v, err := env.engine.WaitEntry(ctx, walkIn)
		if err != nil || v.State != core.WaitOffered || v.Offer == nil {
			t.Fatalf("the walk-in after the cancel: %+v %v", v, err)
		}
		offer := v.Offer
		body = clerk.do("GET", page, nil, nil).Body.String()
		want := fmt.Sprintf("offered %s %s A-1 A-2 held until %s 0 s: handed over as %s ended Withdraw",
			web.Page{Lang: web.LangEN, Loc: time.Local}.Time(v.Entry.Created), offer.OrderNo,
			web.Page{Lang: web.LangEN, Loc: time.Local}.Time(offer.ExpireAt), from.OrderNo)
		if got := waitRow(t, body, walkIn); !strings.HasPrefix(got, "Ann Walker") || !strings.HasSuffix(got, want) {
			t.Errorf("the offered row: %q, want it to end %q", got, want)
		}
		if !strings.Contains(body, `href="/console/orders/`+offer.OrderNo+`"`) {
			t.Errorf("the offer is not linked to its order page")
		}
		if got := waitRow(t, body, user.Entry.Token); !strings.HasPrefix(got, "1 user 9") {
			t.Errorf("the user is not first in line after the offer: %q", got)
		}
		for id, want := range map[string]string{"waitlist-waiting": "1", "waitlist-offered": "1", "waitlist-accepted": "0",
			"waitlist-conversion": "0 %"} {
			if got := figure(t, body, id); got != want {
				t.Errorf("%s: %q, want %q", id, got, want)
			}
		}
		live := clerk.do("GET", page+"/live", nil, nil)
		if lb := live.Body.String(); live.Code != http.StatusOK || strings.Contains(lb, "<html") || !strings.Contains(lb, `hx-trigger="every 5s"`) ||
			figure(t, lb, "waitlist-offered") != "1" {
			t.Errorf("live part: %d %.300s", live.Code, lb)
		}

		// The clerk withdraws the walk-in: a confirmation first, then the
		// offer is cancelled and its seats go on to the user.
		withdraw := page + "/entries/" + walkIn + "/withdraw"
		rec = clerk.post(withdraw, nil)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `id="waitlist-confirm-form"`) ||
			!strings.Contains(rec.Body.String(), offer.OrderNo+" is cancelled") {
			t.Fatalf("withdraw, first step: %d %.2000s", rec.Code, mainOf(rec.Body.String()))
		}
		if v, _ := env.engine.WaitEntry(ctx, walkIn); v.State != core.WaitOffered {
			t.Fatalf("the first step withdrew: %s", v.State)
		}
		if rec = clerk.post(withdraw, url.Values{"confirm": {"1"}}); rec.Code != http.StatusSeeOther ||
			rec.Header().Get("Location") != page+"?msg=waitlist_withdrawn" {
			t.Fatalf("withdraw: %d %.1000s", rec.Code, mainOf(rec.Body.String()))
		}
		next, err := env.engine.WaitEntry(ctx, user.Entry.Token)
		if err != nil || next.State != core.WaitOffered || next.Offer == nil {
			t.Fatalf("the user after the withdrawal: %+v %v", next, err)
		}
		if o, _ := env.db.Order(ctx, offer.OrderNo); o.Status != core.StatusCancelled {
			t.Errorf("the withdrawn entry's offer is %v", o.Status)
		}
		env.pay(*next.Offer)
		body = clerk.do("GET", page, nil, nil).Body.String()
		if got := waitRow(t, body, walkIn); !strings.Contains(got, " withdrawn ") || strings.Contains(got, "Withdraw") {
			t.Errorf("the withdrawn row: %q", got)
		}
		if got := waitRow(t, body, user.Entry.Token); !strings.Contains(got, " accepted ") ||
			!strings.HasSuffix(got, "0 s: handed over as "+offer.OrderNo+" ended") {
			t.Errorf("the accepted row: %q", got)
		}
		for id, want := range map[string]string{"waitlist-waiting": "0", "waitlist-offered": "0", "waitlist-accepted": "1",
			"waitlist-withdrawn": "1", "waitlist-conversion": "50 %"} {
			if got := figure(t, body, id); got != want {
				t.Errorf("%s: %q, want %q", id, got, want)
			}
		}
		for action, want := range map[string]int{core.AuditWaitlistSettings: 1, core.AuditWaitlistAdd: 1, core.AuditWaitlistWithdraw: 1} {
			if n := env.auditCount(action); n != want {
				t.Errorf("audit entries %s: %d, want %d", action, n, want)
			}
		}

		// A hold that expired 90 s before its timeout ended it: its seat
		// spent that long between holders.
		late, _, err := env.engine.JoinWaitlist(ctx, core.WaitJoin{ShowID: show, UserID: 10, Count: 1, AddedBy: "api:test"})
		if err != nil {
			t.Fatal(err)
		}
		expired := env.place(6, "C-1")
		if _, err := env.db.X().ExecContext(ctx, `UPDATE order_info SET expire_at = ? WHERE order_no = ?`,
			time.Now().Add(-90*time.Second).UnixMilli(), expired.OrderNo); err != nil {
			t.Fatal(err)
		}
		if res, err := env.engine.CancelAndRelease(ctx, core.CancelRequest{OrderNo: expired.OrderNo, Reason: core.ReasonTimeout,
			Actor: core.ActorSystem}); err != nil || !res.Won {
			t.Fatalf("timeout: %+v %v", res, err)
		}
		body = clerk.do("GET", page, nil, nil).Body.String()
		if got := waitRow(t, body, late.Entry.Token); !regexp.MustCompile(`1 min 3[01] s after ` + expired.OrderNo + `'s hold expired`).MatchString(got) {
			t.Errorf("the expired hold's hand-off: %q", got)
		}
		// Nothing left pending: the stack's database is shared by the cases.
		if v, err := env.engine.WithdrawWaitEntry(ctx, late.Entry.Token, "api:test"); err != nil || v.State != core.WaitWithdrawn {
			t.Errorf("withdraw the last offer: %+v %v", v, err)
		}
	})
}

// TestConsoleWaitlistRefusals: a clerk may add and withdraw but not change
// the settings; bad settings, and each walk-in the engine or the form
// refuses, come back as a message on the page with what was typed, and
// change nothing. Never a 500.
func TestConsoleWaitlistRefusals(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	manager, clerk := env.login(access.RoleManager), env.login(access.RoleBoxOffice)
	show := env.show.ID
	page := fmt.Sprintf("/console/shows/%d/waitlist", show)
	other := env.stack.NewShow(t, 1, 2).ID
	settings := func(enabled, joinWhen, minutes string) url.Values {
		return url.Values{"enabled": {enabled}, "join_when": {joinWhen}, "offer_minutes": {minutes}}
	}
	walkIn := func(kv ...string) url.Values {
		f := url.Values{"name": {"Bo"}, "count": {"1"}}
		for i := 0; i < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return f
	}
	body := clerk.do("GET", page, nil, nil).Body.String()
	if !strings.Contains(body, `id="waitlist-managers-only"`) || strings.Contains(body, `id="waitlist-settings"`) ||
		!strings.Contains(body, `id="waitlist-add"`) {
		t.Errorf("a clerk's page: %.3000s", mainOf(body))
	}
	msg := func(key string, args ...any) string { return fmt.Sprintf(web.Translate(web.LangEN, key), args...) }
	for _, tc := range []struct {
		name   string
		b      *browser
		before url.Values // settings a manager saves first; nil keeps them
		path   string
		form   url.Values
		status int
		id     string // the message's element
		text   string
		value  string // the typed value the form keeps
	}{
		{"clerk saves settings", clerk, nil, page, settings("1", "always", "30"), http.StatusForbidden, "", "<h1>Not allowed</h1>", ""},
		{"unknown join_when", manager, nil, page, settings("1", "sometimes", "30"), 422, "waitlist-error", msg("waitlist.error.join_when"), `value="30"`},
		{"hold 0 minutes", manager, nil, page, settings("1", "always", "0"), 422, "waitlist-error", msg("waitlist.error.minutes", 1, 2880), `value="0"`},
		{"hold past two days", manager, nil, page, settings("1", "always", "2881"), 422, "waitlist-error", msg("waitlist.error.minutes", 1, 2880), ""},
		{"hold not a number", manager, nil, page, settings("1", "always", "half an hour"), 422, "waitlist-error", msg("waitlist.error.minutes", 1, 2880), `value="half an hour"`},
		{"list closed", clerk, nil, page + "/entries", walkIn(), 409, "waitlist-add-error", msg("waitlist.error.closed"), `value="Bo"`},
		{"not sold out", clerk, settings("1", "sold_out", "30"), page + "/entries", walkIn(), 409, "waitlist-add-error", msg("waitlist.error.not_sold"), ""},
		{"no name", clerk, settings("1", "always", "30"), page + "/entries", walkIn("name", " ", "count", "3"), 422, "waitlist-add-error", msg("waitlist.error.name"), `value="3"`},
		{"count 0", clerk, nil, page + "/entries", walkIn("count", "0"), 422, "waitlist-add-error", msg("waitlist.error.count", 6), ""},
		{"count over the order limit", clerk, nil, page + "/entries", walkIn("count", "7"), 422, "waitlist-add-error", msg("waitlist.error.count", 6), `value="7"`},
		{"count not a number", clerk, nil, page + "/entries", walkIn("count", "two"), 422, "waitlist-add-error", msg("waitlist.error.count", 6), ""},
		{"unknown category", clerk, nil, page + "/entries", walkIn("category", "ZZ"), 422, "waitlist-add-error", msg("waitlist.error.category"), ""},
		{"more together than a row", clerk, nil, page + "/entries", walkIn("count", "5", "together", "1"), 422, "waitlist-add-error",
			"best_available.count: 5 together, but the longest row of show " + fmt.Sprint(show) + " seats 4 together", ""},
		{"bad email", clerk, nil, page + "/entries", walkIn("email", "not an address"), 422, "waitlist-add-error", "", `value="not an address"`},
		{"door adds", env.login(access.RoleDoor), nil, page + "/entries", walkIn(), http.StatusForbidden, "", "<h1>Not allowed</h1>", ""},
		{"withdraw an unknown entry", clerk, nil, page + "/entries/wl_000/withdraw", url.Values{"confirm": {"1"}}, 404, "", "", ""},
		{"unknown show", manager, nil, "/console/shows/999999/waitlist", settings("1", "always", "30"), 404, "", "", ""},
		{"show id not a number", clerk, nil, "/console/shows/x/waitlist/entries", walkIn(), 404, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				if rec := manager.post(page, tc.before); rec.Code != http.StatusSeeOther {
					t.Fatalf("settings first: %d", rec.Code)
				}
			}
			rec := tc.b.post(tc.path, tc.form)
			got := rec.Body.String()
			if rec.Code != tc.status || !strings.Contains(got, tc.value) || !strings.Contains(got, tc.text) ||
				tc.id != "" && !strings.Contains(got, `id="`+tc.id+`">`) {
				t.Errorf("%d, want %d with %s %q and %q: %.3000s", rec.Code, tc.status, tc.id, tc.text, tc.value, mainOf(got))
			}
		})
	}
	// An entry of another show is not withdrawn through this one's page.
	if _, err := env.engine.SetWaitlist(ctx, core.WaitlistSettings{ShowID: other, Enabled: true, JoinWhen: core.JoinWhenAlways}); err != nil {
		t.Fatal(err)
	}
	elsewhere, _, err := env.engine.JoinWaitlist(ctx, core.WaitJoin{ShowID: other, UserID: 3, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rec := clerk.post(page+"/entries/"+elsewhere.Entry.Token+"/withdraw", url.Values{"confirm": {"1"}}); rec.Code != http.StatusNotFound {
		t.Errorf("withdraw through another show's page: %d", rec.Code)
	}
	if v, _ := env.engine.WaitEntry(ctx, elsewhere.Entry.Token); v.State != core.WaitWaiting {
		t.Errorf("the other show's entry is %s", v.State)
	}
	if entries, err := env.engine.WaitEntries(ctx, show, 10); err != nil || len(entries) != 0 {
		t.Errorf("refused walk-ins joined: %+v %v", entries, err)
	}
	if s, _ := env.engine.Waitlist(ctx, show); s.OfferTTL != 30*time.Minute || s.JoinWhen != core.JoinWhenAlways {
		t.Errorf("refused settings changed the list: %+v", s)
	}
	for action, want := range map[string]int{core.AuditWaitlistSettings: 2, core.AuditWaitlistAdd: 0, core.AuditWaitlistWithdraw: 0} {
		if n := env.auditCount(action); n != want {
			t.Errorf("audit entries %s: %d, want %d", action, n, want)
		}
	}
}
