package access

import (
	"crypto/subtle"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"seatflow/core/fault"
)

// An optional second factor for console accounts: time-based one-time
// passwords (RFC 6238: 6 digits, 30 s steps, SHA-1, what every
// authenticator app reads from the QR code), by github.com/pquerna/otp.

// TOTP is an account's second factor. Until ConfirmedAt is set the secret
// is only offered: logins do not ask for it.
type TOTP struct {
	StaffID     int64
	Secret      string // base32
	CreatedAt   time.Time
	ConfirmedAt time.Time
	// LastStep is the newest 30 s step a code was accepted for: a code is
	// good once, so one overheard or phished cannot be replayed.
	LastStep int64
	// LockedUntil: after too many wrong codes no code is accepted before
	// it; Lockouts counts the locks since the last right code.
	LockedUntil time.Time
	Lockouts    int
}

// Confirmed reports whether logins ask for a code.
func (t TOTP) Confirmed() bool { return !t.ConfirmedAt.IsZero() }

// Locked reports whether the factor refuses every code at now.
func (t TOTP) Locked(now time.Time) bool { return now.Before(t.LockedUntil) }

var totpOpts = totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// NewTOTPSecret makes a secret for username.
func NewTOTPSecret(username string) (string, error) {
	k, err := totp.Generate(totp.GenerateOpts{Issuer: "SeatFlow", AccountName: username})
	if err != nil {
		return "", fmt.Errorf("totp: %w", err)
	}
	return k.Secret(), nil
}

// TOTPURL is the otpauth:// URL an authenticator app reads from a QR code.
func TOTPURL(secret, username string) string {
	q := url.Values{"secret": {secret}, "issuer": {"SeatFlow"}, "algorithm": {"SHA1"}, "digits": {"6"}, "period": {"30"}}
	return "otpauth://totp/" + url.PathEscape("SeatFlow:"+username) + "?" + q.Encode()
}

// TOTPStep returns the step code is valid for at now: the current one or
// one step either side (clocks of phones drift), and whether any matched.
func TOTPStep(secret, code string, now time.Time) (int64, bool) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(code) != 6 {
		return 0, false
	}
	step := now.Unix() / 30
	for _, s := range []int64{step - 1, step, step + 1} {
		want, err := totp.GenerateCodeCustom(secret, time.Unix(s*30, 0), totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}

// TOTPCode is the code for secret at t: for tests and the CLI's check.
func TOTPCode(secret string, t time.Time) (string, error) {
	return totp.GenerateCodeCustom(secret, t, totpOpts)
}

// SecondFactorPolicy is SEATFLOW_REQUIRE_2FA: which accounts must have a
// second factor before they may do anything but set one up.
type SecondFactorPolicy string

const (
	SecondFactorOptional SecondFactorPolicy = ""
	SecondFactorAdmins   SecondFactorPolicy = "admin"
	SecondFactorAll      SecondFactorPolicy = "all"
)

// ParseSecondFactorPolicy reads SEATFLOW_REQUIRE_2FA.
func ParseSecondFactorPolicy(s string) (SecondFactorPolicy, error) {
	switch p := SecondFactorPolicy(strings.TrimSpace(s)); p {
	case SecondFactorOptional, SecondFactorAdmins, SecondFactorAll:
		return p, nil
	}
	return "", fmt.Errorf("want admin, all or empty")
}

// Required reports whether an account of role must have a second factor.
func (p SecondFactorPolicy) Required(role Role) bool {
	return p == SecondFactorAll || (p == SecondFactorAdmins && role == RoleAdmin)
}

// Wrong codes are counted per account in the database, so every instance
// shares the count: TOTPMaxFailures of them within TOTPFailureWindow lock
// the second factor for TOTPLockout, twice as long for each lockout since
// the last right code, at most TOTPMaxLockout; an admin can lift it.
// Against 3 valid codes in a million, that leaves a guesser a few hundred
// guesses a day, not 14,400 per instance.
const (
	TOTPMaxFailures   = 5
	TOTPFailureWindow = 15 * time.Minute
	TOTPLockout       = 15 * time.Minute
	TOTPMaxLockout    = 24 * time.Hour
)

// TOTPLockFor is how long the lockout after lockouts earlier ones lasts.
func TOTPLockFor(lockouts int) time.Duration {
	d := TOTPLockout
	for range lockouts {
		if d *= 2; d >= TOTPMaxLockout {
			return TOTPMaxLockout
		}
	}
	return d
}

// Audit actions of the second factor.
const (
	AuditTOTPLocked      = "totp_locked" // too many wrong codes: the factor is locked
	AuditTOTPUnlock      = "totp_unlock" // an admin lifted a lock
	AuditTOTPEnable      = "totp_enable"
	AuditTOTPDisable     = "totp_disable"
	AuditTOTPReset       = "totp_reset"        // an admin removed another account's second factor
	AuditLoginCodeFailed = "login_code_failed" // a wrong second-factor code at login
)

// Second-factor errors.
var (
	ErrTOTPEnrolled = &fault.Error{Kind: fault.KindConflict, Code: "totp_enrolled", Message: "this account has a second factor already"}
	ErrNoChallenge  = &fault.Error{Kind: fault.KindUnauthorized, Code: "login_expired", Message: "the sign-in expired: enter the password again"}
)
