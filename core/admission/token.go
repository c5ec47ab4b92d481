package admission

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Tickets and admissions are short signed strings, so any instance checks
// them with the shared key alone: no store call on a poll or a placement.
//
// A token is base64url (no padding) of
//
//	kind (1 byte) | key id (4 bytes) | fields (zig-zag varints) | MAC (16 bytes)
//
// where the MAC is HMAC-SHA256 over a label, the kind, the key id and the
// fields, cut to 128 bits (ample against forgery, and keeps a token near
// 50 characters in a URL). The kind byte is inside the MAC, so a ticket
// never passes as an admission nor the other way round. The key id (the
// first bytes of the SHA-256 of the key) picks the key out of the ring:
// during a rotation tokens signed with the previous key still verify, and
// dropping that key from the ring retires them. The encoding is strict
// (no padding, no stray bits, every byte consumed), so one token has one
// spelling.

// KeySize is the shortest key accepted: HMAC-SHA256 gains nothing past it
// and a shorter one is weaker than the hash.
const KeySize = 32

// MaxTokenLen bounds the text a parser looks at; a real token is under 80
// characters.
const MaxTokenLen = 128

const (
	kindTicket    byte = 't'
	kindAdmission byte = 'a'
	keyIDLen           = 4
	macLen             = 16
	macLabel           = "seatflow admission token v1\x00"
)

var enc = base64.RawURLEncoding.Strict()

// ErrBadToken is what every refused ticket or admission wraps; the
// ErrToken* errors below say why and wrap it in turn.
var ErrBadToken = errors.New("admission: bad token")

// The reasons a token is refused (errors.Is matches both the reason and
// ErrBadToken).
var (
	ErrTokenMalformed = fmt.Errorf("%w: malformed", ErrBadToken)
	ErrTokenSignature = fmt.Errorf("%w: bad signature", ErrBadToken)
	ErrTokenKey       = fmt.Errorf("%w: unknown or retired key", ErrBadToken)
	ErrTokenKind      = fmt.Errorf("%w: wrong kind", ErrBadToken)
	ErrTokenExpired   = fmt.Errorf("%w: expired", ErrBadToken)
	ErrTokenShow      = fmt.Errorf("%w: for another show", ErrBadToken)
	ErrTokenUser      = fmt.Errorf("%w: for another user", ErrBadToken)
)

// Keys is the ring of HMAC keys: the current one signs, it and the
// previous ones verify. Safe for concurrent use (it never changes).
type Keys struct {
	current [keyIDLen]byte
	keys    map[[keyIDLen]byte][]byte
}

// NewKeys makes a ring that signs with current and also accepts tokens
// signed with any of previous. Every key must be at least KeySize bytes.
func NewKeys(current []byte, previous ...[]byte) (*Keys, error) {
	k := &Keys{keys: map[[keyIDLen]byte][]byte{}}
	for i, key := range append([][]byte{current}, previous...) {
		if len(key) < KeySize {
			return nil, fmt.Errorf("admission key %d: %d bytes, want at least %d", i+1, len(key), KeySize)
		}
		id := keyID(key)
		if old, ok := k.keys[id]; ok && !hmac.Equal(old, key) {
			return nil, fmt.Errorf("admission key %d: its id collides with another key; make a new key", i+1)
		}
		k.keys[id] = append([]byte(nil), key...)
		if i == 0 {
			k.current = id
		}
	}
	return k, nil
}

func keyID(key []byte) [keyIDLen]byte {
	sum := sha256.Sum256(key)
	return [keyIDLen]byte(sum[:keyIDLen])
}

// ParseKey reads a key written in base64 (standard or URL-safe, padded or
// not), as `openssl rand -base64 32` prints one.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	for _, e := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := e.DecodeString(s); err == nil {
			if len(b) < KeySize {
				return nil, fmt.Errorf("the key is %d bytes, want at least %d (openssl rand -base64 32)", len(b), KeySize)
			}
			return b, nil
		}
	}
	return nil, errors.New("not base64 (openssl rand -base64 32 makes a key)")
}

// NewKey makes a random key, in base64 as ParseKey reads it.
func NewKey() string {
	b := make([]byte, KeySize)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.StdEncoding.EncodeToString(b)
}

// Ticket names one buyer's entry in one show's queue: what the buyer polls
// with. It does not expire; the entry it names is the store's.
type Ticket struct{ Show, User, Seq int64 }

// Grant is an admission: the buyer User may place on Show until Until
// (kept to the millisecond). Seq is the entry it admits.
type Grant struct {
	Show, User, Seq int64
	Until           time.Time
}

// SignTicket returns the ticket's token.
func (k *Keys) SignTicket(t Ticket) string {
	return k.sign(kindTicket, t.Show, t.User, t.Seq)
}

// ParseTicket checks a ticket's token and returns the ticket.
func (k *Keys) ParseTicket(s string) (Ticket, error) {
	f, err := k.open(kindTicket, s, 3)
	if err != nil {
		return Ticket{}, err
	}
	return Ticket{Show: f[0], User: f[1], Seq: f[2]}, nil
}

// SignAdmission returns the admission's token.
func (k *Keys) SignAdmission(g Grant) string {
	return k.sign(kindAdmission, g.Show, g.User, g.Seq, g.Until.UnixMilli())
}

// VerifyAdmission checks that s is an admission for this show and user,
// still valid at now, and returns it.
func (k *Keys) VerifyAdmission(s string, show, user int64, now time.Time) (Grant, error) {
	f, err := k.open(kindAdmission, s, 4)
	if err != nil {
		return Grant{}, err
	}
	g := Grant{Show: f[0], User: f[1], Seq: f[2], Until: time.UnixMilli(f[3])}
	switch {
	case g.Show != show:
		return Grant{}, ErrTokenShow
	case g.User != user:
		return Grant{}, ErrTokenUser
	case !now.Before(g.Until):
		return Grant{}, ErrTokenExpired
	}
	return g, nil
}

func (k *Keys) sign(kind byte, fields ...int64) string {
	b := make([]byte, 0, 1+keyIDLen+len(fields)*binary.MaxVarintLen64+macLen)
	b = append(b, kind)
	b = append(b, k.current[:]...)
	for _, f := range fields {
		b = binary.AppendVarint(b, f)
	}
	return enc.EncodeToString(mac(b, k.keys[k.current]))
}

// mac appends the MAC of msg to msg.
func mac(msg, key []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(macLabel))
	h.Write(msg)
	return h.Sum(msg)[:len(msg)+macLen]
}

// open checks the token's kind, key and MAC, in that order, and returns its
// n fields.
func (k *Keys) open(kind byte, s string, n int) ([]int64, error) {
	if len(s) > MaxTokenLen {
		return nil, ErrTokenMalformed
	}
	b, err := enc.DecodeString(s)
	// The length check refuses the line breaks the decoder skips.
	if err != nil || len(b) == 0 || enc.EncodedLen(len(b)) != len(s) {
		return nil, ErrTokenMalformed
	}
	if b[0] != kind && (b[0] == kindTicket || b[0] == kindAdmission) {
		return nil, ErrTokenKind
	}
	if b[0] != kind || len(b) < 1+keyIDLen+n+macLen {
		return nil, ErrTokenMalformed
	}
	key, ok := k.keys[[keyIDLen]byte(b[1:1+keyIDLen])]
	if !ok {
		return nil, ErrTokenKey
	}
	msg := b[:len(b)-macLen]
	if !hmac.Equal(mac(append([]byte(nil), msg...), key)[len(msg):], b[len(msg):]) {
		return nil, ErrTokenSignature
	}
	fields := make([]int64, n)
	rest := msg[1+keyIDLen:]
	for i := range fields {
		v, m := binary.Varint(rest)
		if m <= 0 {
			return nil, ErrTokenMalformed
		}
		fields[i], rest = v, rest[m:]
	}
	if len(rest) != 0 {
		return nil, ErrTokenMalformed
	}
	return fields, nil
}
