package access

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/trustelem/zxcvbn"
	"github.com/trustelem/zxcvbn/frequency"

	"seatflow/core/fault"
)

// Password policy (OWASP ASVS 2.1): long rather than complex, never the
// account's name, never a password that breach lists and crackers try
// first. The list is zxcvbn's 30,000 most common leaked passwords, a
// maintained package rather than a hand-typed list; zxcvbn's estimate then
// also refuses what is one small step from such a password or from the
// username ("Password12345", "ann.smith2026").

// MinPasswordLen is the shortest password an account may have.
const MinPasswordLen = 12

// maxPasswordBytes is all bcrypt looks at.
const maxPasswordBytes = 72

// minPasswordScore is zxcvbn's "safely unguessable" (about 10^8 guesses and
// more), the least it recommends for an online-attack-only secret.
const minPasswordScore = 3

// Password errors.
var (
	ErrWeakPassword = &fault.Error{Kind: fault.KindInvalid, Code: "weak_password",
		Message: fmt.Sprintf("password needs %d to %d characters", MinPasswordLen, maxPasswordBytes)}
	ErrPasswordHasUsername = &fault.Error{Kind: fault.KindInvalid, Code: "password_has_username",
		Message: "password must not contain the username"}
	ErrCommonPassword = &fault.Error{Kind: fault.KindInvalid, Code: "common_password",
		Message: "password is on the list of the most common leaked passwords, or too close to one: choose another"}
)

var commonPasswords = sync.OnceValue(func() map[string]struct{} {
	list := frequency.FrequencyLists["passwords"]
	set := make(map[string]struct{}, len(list))
	for _, pw := range list {
		set[pw] = struct{}{}
	}
	return set
})

// ValidPassword checks a new password for the account username.
func ValidPassword(pw, username string) error {
	if len([]rune(pw)) < MinPasswordLen || len(pw) > maxPasswordBytes {
		return ErrWeakPassword
	}
	lower := strings.ToLower(pw)
	if username != "" && strings.Contains(lower, strings.ToLower(username)) {
		return ErrPasswordHasUsername
	}
	if _, ok := commonPasswords()[lower]; ok {
		return ErrCommonPassword
	}
	if zxcvbn.PasswordStrength(pw, []string{username, "seatflow"}).Score < minPasswordScore {
		return ErrCommonPassword
	}
	return nil
}

// PasswordResetTTL is how long a reset link an admin hands over works.
const PasswordResetTTL = 24 * time.Hour

// Audit actions of the password and role flows.
const (
	AuditPasswordChange    = "password_change"     // one's own, with the current password
	AuditPasswordResetLink = "password_reset_link" // an admin made a link for an account
	AuditPasswordReset     = "password_reset"      // the link was used
	AuditStaffRole         = "staff_role"          // an admin changed an account's role
)

// ErrResetLinkInvalid: the link is unknown, used, expired, replaced by a
// newer one, or its account is disabled. One answer for all, so a link
// tells nothing about why.
var ErrResetLinkInvalid = &fault.Error{Kind: fault.KindNotFound, Code: "reset_link_invalid",
	Message: "this password link is not valid (used, expired or replaced): ask an admin for a new one"}
