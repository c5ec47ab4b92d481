package access

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"seatflow/core/fault"
	"seatflow/core/text"
)

// Scope is one right an API key can hold.
type Scope string

// The scopes of the API; each /api/v1 route needs exactly one of them.
const (
	ScopeOrdersRead  Scope = "orders:read"  // read shows, seats and orders
	ScopeOrdersWrite Scope = "orders:write" // place, cancel and extend orders
	ScopeShowsWrite  Scope = "shows:write"  // create shows, change plans, block seats, cancel shows
	ScopeReconcile   Scope = "reconcile"    // list and start reconcile runs
	ScopeRefunds     Scope = "refunds"      // refund paid orders
	ScopeCheckin     Scope = "checkin"      // admit tickets at the door, undo a scan
	// ScopeClientIP is a right, not a route's scope: the key's
	// X-SeatFlow-Client-IP names the end user the limits count (a front
	// end that forwards its visitors' addresses).
	ScopeClientIP Scope = "client_ip"
)

// AllScopes lists every scope, in the order they are shown.
var AllScopes = []Scope{ScopeOrdersRead, ScopeOrdersWrite, ScopeShowsWrite, ScopeReconcile, ScopeRefunds, ScopeCheckin, ScopeClientIP}

// Audit actions of API key management.
const (
	AuditAPIKeyAdd    = "apikey_add"
	AuditAPIKeyRevoke = "apikey_revoke"
)

// apiKeyPrefix starts every key, so a leaked one is recognisable (secret
// scanners, log greps); APIKeyPrefixLen characters identify a key in lists.
const (
	apiKeyPrefix    = "sfk_"
	APIKeyPrefixLen = 12
	maxAPIKeyName   = 100
)

var (
	ErrBadScope       = &fault.Error{Kind: fault.KindInvalid, Code: "bad_scope", Message: "unknown scope"}
	ErrBadAPIKeyName  = &fault.Error{Kind: fault.KindInvalid, Code: "bad_name", Message: fmt.Sprintf("a key needs a name of 1 to %d characters", maxAPIKeyName)}
	ErrAPIKeyNotFound = &fault.Error{Kind: fault.KindNotFound, Code: "api_key_not_found", Message: "API key not found"}
	// ErrInsufficientScope: the key is valid but lacks the route's scope.
	ErrInsufficientScope = &fault.Error{Kind: fault.KindForbidden, Code: "insufficient_scope", Message: "this API key lacks the scope this call needs"}
)

// APIKey is a stored key, without its secret: only its SHA-256 is kept.
type APIKey struct {
	ID         int64
	Name       string
	Prefix     string // the key's first characters, to tell keys apart
	Scopes     []Scope
	CreatedBy  string // staff:<username> or cli
	CreatedAt  time.Time
	LastUsedAt time.Time // zero: never used
	RevokedAt  time.Time // zero: active
}

// Revoked says whether the key was revoked.
func (k APIKey) Revoked() bool { return !k.RevokedAt.IsZero() }

// Allows says whether the key holds scope s.
func (k APIKey) Allows(s Scope) bool { return slices.Contains(k.Scopes, s) }

// ParseScopes reads a comma-separated scope list; at least one, no unknown
// ones, duplicates dropped, returned in AllScopes order.
func ParseScopes(list string) ([]Scope, error) {
	want := map[Scope]bool{}
	for _, f := range strings.Split(list, ",") {
		s := Scope(strings.TrimSpace(f))
		if s == "" {
			continue
		}
		if !slices.Contains(AllScopes, s) {
			return nil, &fault.Error{Kind: fault.KindInvalid, Code: ErrBadScope.Code,
				Message: fmt.Sprintf("unknown scope %q (known: %s)", s, JoinScopes(AllScopes))}
		}
		want[s] = true
	}
	var out []Scope
	for _, s := range AllScopes {
		if want[s] {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, &fault.Error{Kind: fault.KindInvalid, Code: ErrBadScope.Code, Message: "give at least one scope: " + JoinScopes(AllScopes)}
	}
	return out, nil
}

// JoinScopes is the comma-separated form ParseScopes reads.
func JoinScopes(ss []Scope) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, ",")
}

// ValidAPIKeyName checks a key's name.
func ValidAPIKeyName(name string) error {
	if n := utf8.RuneCountInString(strings.TrimSpace(name)); n == 0 || n > maxAPIKeyName {
		return ErrBadAPIKeyName
	}
	_, err := text.Check("name", name, text.OneLine)
	return err
}

// NewAPIKeySecret returns a fresh key (256 random bits) and its prefix.
func NewAPIKeySecret() (key, prefix string) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	key = apiKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return key, key[:APIKeyPrefixLen]
}

// HashAPIKey is the stored form of a key. A plain SHA-256 suffices: the key
// has 256 bits of entropy, so there is nothing to brute-force that a slow
// hash would protect.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
