package admission

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	keyA = bytes.Repeat([]byte{'a'}, KeySize)
	keyB = bytes.Repeat([]byte{'b'}, KeySize)
	keyC = bytes.Repeat([]byte{'c'}, KeySize+8)
)

func mustKeys(t testing.TB, current []byte, previous ...[]byte) *Keys {
	t.Helper()
	k, err := NewKeys(current, previous...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// relabel returns the token with its kind byte set to kind.
func relabel(t *testing.T, tok string, kind byte) string {
	t.Helper()
	b, err := enc.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	b[0] = kind
	return enc.EncodeToString(b)
}

// flip returns the token with one bit of its decoded byte i flipped.
func flip(t *testing.T, tok string, i int) string {
	t.Helper()
	b, err := enc.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	if i < 0 {
		i += len(b)
	}
	b[i] ^= 0x01
	return enc.EncodeToString(b)
}

func TestNewKeys(t *testing.T) {
	for _, tc := range []struct {
		name     string
		current  []byte
		previous [][]byte
		ok       bool
	}{
		{"one key", keyA, nil, true},
		{"with previous", keyA, [][]byte{keyB, keyC}, true},
		{"the current one again in previous", keyA, [][]byte{keyA}, true},
		{"no key", nil, nil, false},
		{"short current", keyA[:KeySize-1], nil, false},
		{"short previous", keyA, [][]byte{keyB[:8]}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewKeys(tc.current, tc.previous...)
			if (err == nil) != tc.ok {
				t.Errorf("err = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xfb}, KeySize) // encodes with + / and - _
	for _, tc := range []struct {
		name, in string
		want     []byte // nil: an error
	}{
		{"standard, padded", base64.StdEncoding.EncodeToString(raw), raw},
		{"url-safe, unpadded, spaced", " " + base64.RawURLEncoding.EncodeToString(raw) + "\n", raw},
		{"longer key", base64.StdEncoding.EncodeToString(keyC), keyC},
		{"short", base64.StdEncoding.EncodeToString(raw[:16]), nil},
		{"not base64", "not base64!", nil},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseKey(tc.in)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("key %x, want an error", got)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Errorf("ParseKey = %x, %v; want %x", got, err, tc.want)
			}
		})
	}
	if a, b := NewKey(), NewKey(); a == b {
		t.Error("NewKey repeats")
	} else if k, err := ParseKey(a); err != nil || len(k) != KeySize {
		t.Errorf("ParseKey(NewKey()) = %x, %v", k, err)
	}
}

func TestTicketRoundTrip(t *testing.T) {
	k := mustKeys(t, keyA)
	for _, tc := range []Ticket{
		{Show: 1, User: 42, Seq: 17},
		{Show: 1 << 62, User: -1, Seq: 0},
		{Show: -1 << 63, User: 1<<63 - 1, Seq: 1<<63 - 1},
	} {
		s := k.SignTicket(tc)
		if len(s) > MaxTokenLen || strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			t.Errorf("token %q is not short URL-safe text", s)
		}
		got, err := k.ParseTicket(s)
		if err != nil || got != tc {
			t.Errorf("ParseTicket(SignTicket(%+v)) = %+v, %v", tc, got, err)
		}
	}
}

// TestTokenRefused: every way a ticket or an admission can be wrong is
// refused with ErrBadToken and the reason.
func TestTokenRefused(t *testing.T) {
	now := time.UnixMilli(1_760_000_000_000)
	grant := Grant{Show: 7, User: 42, Seq: 3, Until: now.Add(10 * time.Minute)}
	ticket := Ticket{Show: 7, User: 42, Seq: 3}
	cur := mustKeys(t, keyA, keyB)
	adm := cur.SignAdmission(grant)
	tick := cur.SignTicket(ticket)
	byB := mustKeys(t, keyB).SignAdmission(grant)
	byC := mustKeys(t, keyC).SignAdmission(grant)
	// Same key id as keyA, other key: the MAC, not the id, must refuse it.
	forgedID := func() string {
		b, _ := enc.DecodeString(mustKeys(t, keyC).SignAdmission(grant))
		id := keyID(keyA)
		copy(b[1:], id[:])
		return enc.EncodeToString(b)
	}()

	for _, tc := range []struct {
		name       string
		keys       *Keys
		tok        string
		show, user int64
		at         time.Time
		ticket     bool // ParseTicket instead of VerifyAdmission
		want       error
	}{
		{"admission", cur, adm, 7, 42, now, false, nil},
		{"signed with the previous key", cur, byB, 7, 42, now, false, nil},
		{"ticket", cur, tick, 0, 0, now, true, nil},
		{"flipped bit in the fields", cur, flip(t, adm, 6), 7, 42, now, false, ErrTokenSignature},
		{"flipped bit in the MAC", cur, flip(t, adm, -1), 7, 42, now, false, ErrTokenSignature},
		{"flipped bit in the ticket", cur, flip(t, tick, 6), 0, 0, now, true, ErrTokenSignature},
		{"other key", cur, byC, 7, 42, now, false, ErrTokenKey},
		{"other key under a known id", cur, forgedID, 7, 42, now, false, ErrTokenSignature},
		{"retired key", mustKeys(t, keyA), byB, 7, 42, now, false, ErrTokenKey},
		{"replayed on another show", cur, adm, 8, 42, now, false, ErrTokenShow},
		{"replayed by another user", cur, adm, 7, 43, now, false, ErrTokenUser},
		{"expired", cur, adm, 7, 42, grant.Until, false, ErrTokenExpired},
		{"a ticket as an admission", cur, tick, 7, 42, now, false, ErrTokenKind},
		{"an admission as a ticket", cur, adm, 0, 0, now, true, ErrTokenKind},
		{"a ticket relabelled as an admission", cur, relabel(t, cur.SignTicket(Ticket{Show: 7, User: 42, Seq: 300}), kindAdmission), 7, 42, now, false, ErrTokenSignature},
		{"an admission relabelled as a ticket", cur, relabel(t, adm, kindTicket), 0, 0, now, true, ErrTokenSignature},
		{"unknown kind", cur, flip(t, tick, 0), 7, 42, now, false, ErrTokenMalformed},
		{"empty", cur, "", 7, 42, now, false, ErrTokenMalformed},
		{"not base64", cur, adm[:10] + "*" + adm[11:], 7, 42, now, false, ErrTokenMalformed},
		{"padded", cur, adm + "=", 7, 42, now, false, ErrTokenMalformed},
		{"line break inside", cur, adm[:8] + "\n" + adm[8:], 7, 42, now, false, ErrTokenMalformed},
		{"truncated", cur, adm[:len(adm)-4], 7, 42, now, false, ErrTokenSignature},
		{"too long", cur, adm + strings.Repeat("A", MaxTokenLen), 7, 42, now, false, ErrTokenMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.ticket {
				var got Ticket
				if got, err = tc.keys.ParseTicket(tc.tok); err == nil && got != ticket {
					t.Errorf("ticket %+v, want %+v", got, ticket)
				}
			} else {
				var got Grant
				if got, err = tc.keys.VerifyAdmission(tc.tok, tc.show, tc.user, tc.at); err == nil && (got.Show != grant.Show || got.User != grant.User || got.Seq != grant.Seq || !got.Until.Equal(grant.Until)) {
					t.Errorf("grant %+v, want %+v", got, grant)
				}
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrBadToken) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestRotation: an admission signed before a rotation still verifies while
// its key is in previous (no admitted buyer lost mid-rotation), new ones
// are signed with the new key, and once the old key is retired its
// admissions are refused.
func TestRotation(t *testing.T) {
	now := time.UnixMilli(1_760_000_000_000)
	g := Grant{Show: 1, User: 2, Seq: 3, Until: now.Add(time.Minute)}
	before := mustKeys(t, keyA)
	during := mustKeys(t, keyB, keyA)
	after := mustKeys(t, keyB)
	old := before.SignAdmission(g)
	fresh := during.SignAdmission(g)

	for _, tc := range []struct {
		name string
		keys *Keys
		tok  string
		want error
	}{
		{"old admission during the rotation", during, old, nil},
		{"new admission during the rotation", during, fresh, nil},
		{"new admission after the rotation", after, fresh, nil},
		{"new admission on an instance not yet rotated", before, fresh, ErrTokenKey},
		{"old admission once its key is retired", after, old, ErrTokenKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.keys.VerifyAdmission(tc.tok, 1, 2, now)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzParseToken: no input makes the parsers panic, nothing but a signed
// token is accepted, an accepted token has one spelling, and signing then
// parsing gives back what was signed.
func FuzzParseToken(f *testing.F) {
	k := mustKeys(f, keyA, keyB)
	old := mustKeys(f, keyB)
	until := time.UnixMilli(1_760_000_000_000)
	f.Add(k.SignTicket(Ticket{1, 2, 3}), int64(1), int64(2), int64(3), until.UnixMilli())
	f.Add(k.SignAdmission(Grant{1, 2, 3, until}), int64(1), int64(2), int64(3), until.UnixMilli())
	f.Add(old.SignAdmission(Grant{-1, 1 << 62, 0, until}), int64(-1), int64(1<<62), int64(0), int64(0))
	f.Add("", int64(0), int64(0), int64(0), int64(0))
	f.Add("dAAAAAA", int64(-1<<63), int64(1<<63-1), int64(1), int64(-1<<63))
	f.Fuzz(func(t *testing.T, s string, show, user, seq, untilMs int64) {
		if tk, err := k.ParseTicket(s); err == nil {
			if k.SignTicket(tk) != s && old.SignTicket(tk) != s {
				t.Errorf("ticket %q accepted as %+v, which signs differently", s, tk)
			}
		} else if !errors.Is(err, ErrBadToken) {
			t.Errorf("ParseTicket error %v does not wrap ErrBadToken", err)
		}
		if g, err := k.VerifyAdmission(s, show, user, until); err == nil {
			if k.SignAdmission(g) != s && old.SignAdmission(g) != s {
				t.Errorf("admission %q accepted as %+v, which signs differently", s, g)
			}
		} else if !errors.Is(err, ErrBadToken) {
			t.Errorf("VerifyAdmission error %v does not wrap ErrBadToken", err)
		}

		tk := Ticket{show, user, seq}
		if got, err := k.ParseTicket(k.SignTicket(tk)); err != nil || got != tk {
			t.Errorf("ticket %+v round-trips as %+v, %v", tk, got, err)
		}
		g := Grant{show, user, seq, time.UnixMilli(untilMs)}
		tok := k.SignAdmission(g)
		if len(tok) > MaxTokenLen {
			t.Fatalf("admission token of %d characters", len(tok))
		}
		got, err := k.VerifyAdmission(tok, show, user, g.Until.Add(-time.Millisecond))
		if err != nil || got.Show != show || got.User != user || got.Seq != seq || !got.Until.Equal(g.Until) {
			t.Errorf("admission %+v round-trips as %+v, %v", g, got, err)
		}
	})
}
