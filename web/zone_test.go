package web

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
)

func TestZoneShown(t *testing.T) {
	at := time.Date(2026, 7, 1, 10, 30, 0, 0, time.UTC)
	load := func(name string) *time.Location {
		z, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	for _, c := range []struct {
		loc        *time.Location
		zone, time string
	}{
		{load("Asia/Tokyo"), "Asia/Tokyo (JST +09:00)", "2026-07-01 19:30:00"},
		{load("Europe/Berlin"), "Europe/Berlin (CEST +02:00)", "2026-07-01 12:30:00"},
		{load("America/New_York"), "America/New_York (EDT -04:00)", "2026-07-01 06:30:00"},
		{time.UTC, "UTC +00:00", "2026-07-01 10:30:00"},
		// The server's zone (time.Local) has no name to show: its abbreviation
		// and offset only.
		{time.FixedZone("Local", 3600), "Local +01:00", "2026-07-01 11:30:00"},
	} {
		p := Page{Now: at, Loc: c.loc}
		if got := p.Zone(); got != c.zone {
			t.Errorf("%v: Zone() = %q, want %q", c.loc, got, c.zone)
		}
		if got := p.Time(at); got != c.time {
			t.Errorf("%v: Time = %q, want %q", c.loc, got, c.time)
		}
	}
}

// TestZonePage: a refused name is on the form again with the reason, in
// the page's language; the audit log shows the server's zone as words.
func TestZonePage(t *testing.T) {
	for lang, want := range map[Lang]string{LangEN: `"Mars/Base" is not a time zone name`, LangZH: "“Mars/Base”不是有效的时区名称"} {
		p := Page{Lang: lang, Now: time.Now(), Staff: access.Staff{ID: 1, Username: "ann", Role: access.RoleBoxOffice}}
		var buf bytes.Buffer
		if err := ZonePage(p, ZoneData{Zone: "Mars/Base", Error: "zone.err_invalid"}).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		body := buf.String()
		if !strings.Contains(body, `role="alert" id="zone-error"`) || !strings.Contains(body, htmlText(want)) ||
			!strings.Contains(body, `value="Mars/Base"`) || !strings.Contains(body, "aria-invalid") {
			t.Errorf("%s: zone page lacks the error or the entered name: %s", lang, body)
		}
	}
	p := Page{Lang: LangZH}
	facts := EventFacts(p, core.Event{Detail: map[string]any{"previous_time_zone": "", "time_zone": "Asia/Tokyo"}}, "")
	if len(facts) != 2 || facts[0] != (Fact{"时区", "Asia/Tokyo"}) || facts[1] != (Fact{"原时区", "服务器时区"}) {
		t.Errorf("zone change facts %v", facts)
	}
}

// htmlText is s as templ escapes text.
func htmlText(s string) string { return strings.ReplaceAll(s, `"`, "&#34;") }
