// Package web holds the console's templ views: a layout, one component per
// page, the partials HTMX swaps in, and the text catalog in English and
// Chinese. It renders what it is given and never reads a database.
package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"seatflow/core/access"
)

// Page is what every console page needs besides its own data.
type Page struct {
	Lang   Lang
	Title  string       // catalog key of the page title
	Nav    string       // which navigation entry is current
	Staff  access.Staff // zero when nobody is logged in
	CSRF   string       // the session's CSRF token ("" when logged out)
	Now    time.Time
	Loc    *time.Location // times are shown in this zone
	Notice string         // catalog key of a message shown on top, or ""
	Path   string         // the request's path and query, for the language switch
	// StoreDown names the backing stores that do not answer right now
	// (e.g. "database, seat store"); "" when all do.
	StoreDown string
	// Subject follows the title in the browser tab (an order's code, what
	// the customer reads out); "" for none.
	Subject string
	// Inbox is how many requests wait for this viewer's approval (refunds,
	// write-offs they did not ask for); read only for those who approve.
	Inbox int
}

// DocTitle is the document's title: the page's, its subject, the product.
func (p Page) DocTitle() string {
	t := p.T(p.Title)
	if p.Subject != "" {
		t += " " + p.Subject
	}
	return t + " · SeatFlow"
}

// Prefix is where the console is mounted.
const Prefix = "/console"

// Navigation entries.
const (
	NavDashboard     = "dashboard"
	NavDoor          = "door"
	NavHolds         = "holds"
	NavOrders        = "orders"
	NavShows         = "shows"
	NavDiscrepancies = "discrepancies"
	NavReconcile     = "reconcile"
	NavAudit         = "audit"
	NavStaff         = "staff"
)

// T translates a catalog key into the page's language.
func (p Page) T(key string) string { return Translate(p.Lang, key) }

// Tf translates a catalog key holding fmt verbs and fills them in.
func (p Page) Tf(key string, args ...any) string { return fmt.Sprintf(p.T(key), args...) }

// Can reports whether the logged-in member of staff may do action.
func (p Page) Can(action string) bool { return p.Staff.Role.Can(action) }

// URL is a console path under Prefix.
func URL(path string) string { return Prefix + path }

// Time formats t in the console's zone; the zero time is a dash.
func (p Page) Time(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(p.loc()).Format("2006-01-02 15:04:05")
}

// Clock is Time without the date, for times within the hour.
func (p Page) Clock(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(p.loc()).Format("15:04:05")
}

func (p Page) loc() *time.Location {
	if p.Loc == nil {
		return time.UTC
	}
	return p.Loc
}

// Zone names the zone times are shown in: its IANA name when it has one,
// with the abbreviation and offset in force at Now ("Asia/Tokyo (JST
// +09:00)"); the server's zone (time.Local) by abbreviation and offset.
func (p Page) Zone() string {
	abbr := p.Now.In(p.loc()).Format("MST -07:00")
	if name := p.loc().String(); name != "Local" && name != "UTC" {
		return name + " (" + abbr + ")"
	}
	return abbr
}

// EpochMS is t as epoch milliseconds, the format of data-expire attributes.
func EpochMS(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// Duration shows d in the page's language, to the second (to the
// millisecond below one): "2 h", "21 min 18 s"; "2 小时", "21 分 18 秒".
// Zero units are left out.
func (p Page) Duration(d time.Duration) string {
	units := durationUnits[p.Lang == LangZH]
	if d <= 0 {
		return "0 " + units[2]
	}
	if d < time.Second {
		return fmt.Sprintf("%d %s", d.Round(time.Millisecond).Milliseconds(), units[3])
	}
	d = d.Round(time.Second)
	var parts []string
	for i, n := range []int64{int64(d / time.Hour), int64(d % time.Hour / time.Minute), int64(d % time.Minute / time.Second)} {
		if n != 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, units[i]))
		}
	}
	return strings.Join(parts, " ")
}

// CountdownText is the time left as console.js counts it down: m:ss, or
// h:mm:ss from an hour.
func CountdownText(d time.Duration) string {
	s := int64(max(d, 0) / time.Second)
	if h := s / 3600; h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, s%3600/60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// durationUnits are hours, minutes, seconds and milliseconds, in English
// (false) and Chinese (true).
var durationUnits = map[bool][4]string{
	false: {"h", "min", "s", "ms"},
	true:  {"小时", "分", "秒", "毫秒"},
}

// SignedDuration is d with its sign, in milliseconds below a second and
// in the page's language: "+3 ms", "-1.2 s"; "+3 毫秒", "-1.2 秒".
func (p Page) SignedDuration(d time.Duration) string {
	units := durationUnits[p.Lang == LangZH]
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	if d < time.Second {
		return fmt.Sprintf("%s%d %s", sign, d.Milliseconds(), units[3])
	}
	return fmt.Sprintf("%s%.1f %s", sign, d.Seconds(), units[2])
}
