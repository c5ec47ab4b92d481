package core

import (
	"fmt"
	"strings"
	"sync"
	"time"

	// The zone database inside the binary: a zone a member of staff picked
	// keeps working on a host (or container image) without /usr/share/zoneinfo.
	_ "time/tzdata"
)

// A member of staff sees the console's times in a zone of their own
// (access.Staff.TimeZone): an IANA name such as "Europe/Berlin", or "" for the
// server's zone.

// AuditTimeZone is a member of staff changing their own time zone.
const AuditTimeZone = "time_zone"

// ErrBadTimeZone is a zone name the zone database does not know.
var ErrBadTimeZone = &Error{Kind: KindInvalid, Code: "bad_time_zone", Message: "time zone is not valid"}

// maxTimeZoneLen bounds a zone name; the longest IANA name has 32 bytes.
const maxTimeZoneLen = 64

// zones caches loaded zones by name: time.LoadLocation reads and parses
// the zone file on every call, and every console page needs its viewer's.
// Only names that loaded are kept, so the cache is bounded by the database.
var zones sync.Map // name → *time.Location

// TimeZone returns the zone an access.Staff.TimeZone names: nil, for the server's
// zone, when name is "", else the IANA zone, or ErrBadTimeZone. "Local"
// is refused: it would mean the server's zone under another name.
func TimeZone(name string) (*time.Location, error) {
	if name == "" {
		return nil, nil
	}
	if z, ok := zones.Load(name); ok {
		return z.(*time.Location), nil
	}
	bad := &Error{Kind: KindInvalid, Code: ErrBadTimeZone.Code, Field: "time_zone",
		Message: fmt.Sprintf("time zone %q is not a zone name such as Europe/Berlin or Asia/Shanghai", name)}
	if len(name) > maxTimeZoneLen || name == "Local" || strings.TrimSpace(name) != name {
		return nil, bad
	}
	z, err := time.LoadLocation(name)
	if err != nil {
		return nil, bad
	}
	zones.Store(name, z)
	return z, nil
}
