package access

import "time"

// Console sessions end 12 hours after the login (the absolute limit the
// console sets) or after DefaultSessionIdle without use, whichever is first.
const (
	// DefaultSessionIdle is SEATFLOW_SESSION_IDLE's default.
	DefaultSessionIdle = 30 * time.Minute
	// MinSessionIdle is the shortest idle time accepted: last use is
	// recorded at most every SessionTouchEvery, so a shorter one would end
	// sessions that are in use.
	MinSessionIdle = 5 * time.Minute
	// SessionTouchEvery bounds how often a session's last use is written:
	// one UPDATE a minute per busy session instead of one per request. A
	// session may so end up to this much before idle has passed since its
	// very last request, never after.
	SessionTouchEvery = time.Minute
)

// Audit actions of ending sessions.
const (
	AuditSessionsEndOthers = "sessions_end_others" // one's own other sessions
	AuditSessionsEndAll    = "sessions_end_all"    // all one's own sessions, this one too
	AuditStaffSessionsEnd  = "staff_sessions_end"  // an admin ended another account's sessions
	AuditSessionEnd        = "session_end"         // one of one's own other sessions
)

// Live reports whether s can still be used at now: before its absolute
// expiry and used less than idle ago.
func (s Session) Live(now time.Time, idle time.Duration) bool {
	return now.Before(s.ExpiresAt) && now.Sub(s.LastSeenAt) < idle
}

// TouchDue reports whether a use at now should be written down.
func (s Session) TouchDue(now time.Time) bool {
	return now.Sub(s.LastSeenAt) >= SessionTouchEvery
}
