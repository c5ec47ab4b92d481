package access

import (
	"strings"
	"testing"
)

// TestTOTPKeys: a sealed secret opens with its key for its account only,
// and after a rotation through the previous keys.
func TestTOTPKeys(t *testing.T) {
	a, _ := ParseTOTPKey(NewTOTPKey())
	b, _ := ParseTOTPKey(NewTOTPKey())
	old, err := NewTOTPKeys(a)
	if err != nil {
		t.Fatal(err)
	}
	keyID, sealed := old.Seal(7, "JBSWY3DPEHPK3PXP")
	if strings.Contains(sealed, "JBSWY3DPEHPK3PXP") || keyID != old.Current() {
		t.Fatalf("sealed %q under %q", sealed, keyID)
	}
	rotated, err := NewTOTPKeys(b, a)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		keys    *TOTPKeys
		staffID int64
		ok      bool
	}{
		{"its key", old, 7, true},
		{"after a rotation", rotated, 7, true},
		{"another account's row", old, 8, false},
		{"the new key alone", func() *TOTPKeys { k, _ := NewTOTPKeys(b); return k }(), 7, false},
	} {
		got, err := tc.keys.Open(tc.staffID, keyID, sealed)
		if (err == nil) != tc.ok || (tc.ok && got != "JBSWY3DPEHPK3PXP") {
			t.Errorf("%s: %q, %v", tc.name, got, err)
		}
	}
	if rotated.Current() == old.Current() {
		t.Error("the rotated keys seal under the old key")
	}
	for _, bad := range []string{"", "c2hvcnQ=", "not base64!"} {
		if _, err := ParseTOTPKey(bad); err == nil {
			t.Errorf("ParseTOTPKey(%q) accepted", bad)
		}
	}
}
