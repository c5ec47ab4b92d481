package server

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"seatflow/core"
	"seatflow/core/access"
)

// TestConsoleBestRules: managers see a show's best-available rules with
// the heat map; Preview draws the map of the form's rules and stores
// nothing; Save refuses what the API refuses and stores the rest, audited.
func TestConsoleBestRules(t *testing.T) {
	env := newConsoleEnv(t)
	ctx := context.Background()
	path := "/console/shows/" + strconv.FormatInt(env.show.ID, 10) + "/best-available"
	if rec := env.login(access.RoleBoxOffice).do("GET", path, nil, nil); rec.Code != http.StatusForbidden {
		t.Errorf("box office: %d, want 403", rec.Code)
	}
	mgr := env.login(access.RoleAdmin)
	if rec := mgr.do("GET", path, nil, nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), `id="best-heat"`) ||
		!strings.Contains(rec.Body.String(), "A-2 · rank 1") || !strings.Contains(rec.Body.String(), "Ranking by the rules in force") {
		t.Fatalf("rules page: %d: %.300s", rec.Code, rec.Body)
	}
	cases := []struct {
		name   string
		form   url.Values
		status int
		want   string
	}{
		{"preview a point at the back right", url.Values{"do": {"preview"}, "focal": {"point"}, "x": {"4"}, "y": {"3"}}, 200, "C-4 · rank 1"},
		{"save a point off the plan", url.Values{"do": {"save"}, "focal": {"point"}, "x": {"-1"}, "y": {"3"}}, 422, "focal: x and y must be from 0 to"},
		{"preview a point off the plan", url.Values{"do": {"preview"}, "focal": {"point"}, "x": {"-1"}, "y": {"3"}}, 422, "Ranking by the rules in force"},
		{"save a point not a number", url.Values{"do": {"save"}, "focal": {"point"}, "x": {"a"}, "y": {"3"}}, 422, "whole numbers"},
	}
	for _, tc := range cases {
		rec := mgr.post(path, tc.form)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %d, want %d with %q: %.300s", tc.name, rec.Code, tc.status, tc.want, rec.Body)
		}
	}
	if show, _ := env.db.Show(ctx, env.show.ID); show.Best != (core.BestRules{}) || env.auditCount(core.AuditBestRules) != 0 {
		t.Fatalf("previews and refusals stored %+v", show.Best)
	}
	rec := mgr.post(path, url.Values{"do": {"save"}, "focal": {"point"}, "x": {"4"}, "y": {"3"}, "allow_singles": {"1"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("save: %d: %.300s", rec.Code, rec.Body)
	}
	if show, _ := env.db.Show(ctx, env.show.ID); show.Best != (core.BestRules{FocalSet: true, FocalX: 4, FocalY: 3, AllowSingles: true}) ||
		env.auditCount(core.AuditBestRules) != 1 {
		t.Fatalf("saved %+v, %d audited", show.Best, env.auditCount(core.AuditBestRules))
	}
	if body := mgr.do("GET", rec.Header().Get("Location"), nil, nil).Body.String(); !strings.Contains(body, "C-4 · rank 1") ||
		!strings.Contains(body, `id="allow-singles" checked`) || !strings.Contains(body, "Best-available rules saved") {
		t.Errorf("after the save: %.300s", body)
	}
}
