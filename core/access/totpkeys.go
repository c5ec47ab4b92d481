package access

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"seatflow/core/fault"
)

// Second-factor secrets are stored encrypted: AES-256-GCM under the key of
// SEATFLOW_TOTP_KEY (or _FILE), with the account's id as associated data
// so a sealed secret copied to another account's row does not open. Each
// sealed secret names its key by an id derived from the key, so keys can
// be rotated: the old ones (SEATFLOW_TOTP_KEYS_PREVIOUS) still open what
// they sealed, and the server re-seals everything under the current key
// when it starts.

// TOTPKeySize is the length of a key: AES-256.
const TOTPKeySize = 32

// TOTPKeys seals and opens second-factor secrets.
type TOTPKeys struct {
	current string
	aeads   map[string]cipher.AEAD
}

// ErrTOTPNoKey: the server has no key, so it stores no second factor.
var ErrTOTPNoKey = &fault.Error{Kind: fault.KindUnavailable, Code: "totp_no_key",
	Message: "two-step sign-in is not available: the server has no SEATFLOW_TOTP_KEY"}

// ParseTOTPKey reads a key written in base64 (standard or URL-safe, with
// or without padding), as `openssl rand -base64 32` prints one.
func ParseTOTPKey(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != TOTPKeySize {
				return nil, fmt.Errorf("the key is %d bytes, want %d (openssl rand -base64 32)", len(b), TOTPKeySize)
			}
			return b, nil
		}
	}
	return nil, errors.New("not base64 (openssl rand -base64 32 makes a key)")
}

// NewTOTPKey makes a random key, base64.
func NewTOTPKey() string {
	b := make([]byte, TOTPKeySize)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.StdEncoding.EncodeToString(b)
}

// NewTOTPKeys seals with current and opens with it and the previous keys.
func NewTOTPKeys(current []byte, previous ...[]byte) (*TOTPKeys, error) {
	k := &TOTPKeys{aeads: map[string]cipher.AEAD{}}
	for i, key := range append([][]byte{current}, previous...) {
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("totp key: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("totp key: %w", err)
		}
		id := totpKeyID(key)
		if i == 0 {
			k.current = id
		}
		k.aeads[id] = aead
	}
	return k, nil
}

// totpKeyID names a key without giving it away: 8 bytes of a hash of it.
func totpKeyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("seatflow totp key id\x00"), key...))
	return hex.EncodeToString(sum[:8])
}

// Current is the id of the key that seals.
func (k *TOTPKeys) Current() string { return k.current }

func totpAD(staffID int64) []byte { return []byte("staff_totp:" + strconv.FormatInt(staffID, 10)) }

// Seal encrypts the secret of staffID's factor under the current key.
func (k *TOTPKeys) Seal(staffID int64, secret string) (keyID, sealed string) {
	aead := k.aeads[k.current]
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return k.current, base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(secret), totpAD(staffID)))
}

// Open decrypts a secret sealed under keyID for staffID.
func (k *TOTPKeys) Open(staffID int64, keyID, sealed string) (string, error) {
	aead := k.aeads[keyID]
	if aead == nil {
		return "", fmt.Errorf("the second factor of staff %d is sealed with key %s, which is neither SEATFLOW_TOTP_KEY nor in SEATFLOW_TOTP_KEYS_PREVIOUS", staffID, keyID)
	}
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(b) < aead.NonceSize() {
		return "", fmt.Errorf("the second factor of staff %d: sealed secret is malformed", staffID)
	}
	clear, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], totpAD(staffID))
	if err != nil {
		return "", fmt.Errorf("the second factor of staff %d does not open with key %s: %w", staffID, keyID, err)
	}
	return string(clear), nil
}
